import Testing

@testable import ChimeCore

@Suite struct RingQueueTests {
    @Test func popsInAppendOrderAcrossWrapAndGrowth() {
        var queue = RingQueue<Int>()
        var expected: [Int] = []
        var next = 0
        // Interleave appends and pops so the head wraps around several storage sizes.
        for round in 0..<200 {
            for _ in 0..<(round % 7 + 1) {
                queue.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(round % 5) {
                #expect(queue.popFirst() == (expected.isEmpty ? nil : expected.removeFirst()))
            }
            #expect(Array(queue) == expected)
            #expect(queue.count == expected.count)
            #expect(queue.first == expected.first)
            #expect(queue.last == expected.last)
        }
    }

    @Test func reserveCapacityAllocatesExactlyThatManySlotsAndKeepsTheOrder() {
        var queue = RingQueue(0..<16)
        queue.removeFirst(5)
        queue.append(contentsOf: 16..<21)  // wraps: the head is at slot 5
        #expect(queue.capacity == 16)
        queue.reserveCapacity(100)
        #expect(queue.capacity == 100)
        #expect(Array(queue) == Array(5..<21))
        queue.reserveCapacity(50)
        #expect(queue.capacity == 100, "never shrinks")
        queue.append(contentsOf: 21..<105)
        #expect(queue.capacity == 100)
        queue.append(105)
        #expect(queue.capacity == 200, "then doubles as before")
        #expect(Array(queue) == Array(5...105))
    }

    @Test func pushFrontKeepsTheGivenOrderAheadOfTheRest() {
        var queue = RingQueue([3, 4])
        _ = queue.popFirst()
        queue.pushFront(contentsOf: [1, 2, 3])
        #expect(Array(queue) == [1, 2, 3, 4])
        queue.pushFront(contentsOf: Array(-20..<1))
        #expect(Array(queue) == Array(-20...4))
        #expect(queue[0] == -20)
        #expect(queue[24] == 4)
    }

    @Test func removeFirstAndRemoveAllEmptyTheQueue() {
        var queue = RingQueue(0..<10)
        queue.removeFirst(3)
        #expect(Array(queue) == Array(3..<10))
        queue.removeFirst(100)
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
        queue.append(contentsOf: [7, 8])
        queue.removeAll()
        #expect(queue.isEmpty && queue.first == nil && queue.last == nil)
    }

    @Test func equalityIgnoresWhereTheStorageStarts() {
        var wrapped = RingQueue<Int>()
        for value in 0..<20 { wrapped.append(value) }
        wrapped.removeFirst(15)
        for value in 20..<23 { wrapped.append(value) }
        #expect(wrapped == RingQueue([15, 16, 17, 18, 19, 20, 21, 22]))
        #expect(wrapped != RingQueue([15, 16]))
    }
}
