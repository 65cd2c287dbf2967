import Foundation
import Testing

@testable import ChimeCore

@Suite struct TimerQueueTests {
    private let base = Date(timeIntervalSince1970: 1_798_099_200)

    private func at(_ seconds: Double) -> Date { base.addingTimeInterval(seconds) }

    @Test func startsEmpty() {
        var queue = TimerQueue<String>()
        #expect(queue.isEmpty)
        #expect(queue.count == 0)
        #expect(queue.nextDeadline == nil)
        #expect(queue.popDue(at: .distantFuture).isEmpty)
        #expect(queue.remove("missing") == nil)
    }

    @Test func popsDueEntriesInDeadlineOrder() {
        var queue = TimerQueue<String>()
        queue.schedule("c", at: at(30))
        queue.schedule("a", at: at(10))
        queue.schedule("d", at: at(40))
        queue.schedule("b", at: at(20))
        #expect(queue.count == 4)
        #expect(queue.nextDeadline == at(10))
        let due = queue.popDue(at: at(30))
        #expect(due.map(\.key) == ["a", "b", "c"])
        #expect(due.map(\.deadline) == [at(10), at(20), at(30)])
        #expect(queue.count == 1)
        #expect(queue.nextDeadline == at(40))
    }

    /// `due(at:limit:where:)` answers what `popDue` would take, filtered, and leaves the queue
    /// as it was: checked against a sort of all deadlines over seeded random queues.
    @Test(arguments: [1, 7, 100, 5_000]) func dueEntriesAreReadWithoutTakingThem(count: Int) {
        var random = SystemRandomNumberGenerator()
        var queue = TimerQueue<Int>(stripeCount: 4)
        for key in 0..<count { queue.schedule(key, at: at(Double(Int.random(in: 0..<(count / 2 + 2), using: &random)))) }
        let before = queue
        let now = at(Double(count / 6))
        for limit in [0, 1, 3, count] {
            let due = queue.due(at: now, limit: limit) { $0 % 3 != 0 }
            let expected = queue.deadlines.filter { $0.value <= now && $0.key % 3 != 0 }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
            #expect(due.count == min(limit, expected.count))
            #expect(due.map(\.deadline) == expected.prefix(limit).map(\.value))
            #expect(Set(due.map(\.key)).isSubset(of: Set(expected.map(\.key))))
        }
        #expect(queue == before)
        #expect(queue.count == count)
        // Equal deadlines in schedule order, as popDue takes them.
        var ordered = TimerQueue<String>()
        for key in ["b", "a", "c"] { ordered.schedule(key, at: at(5)) }
        ordered.schedule("late", at: at(50))
        #expect(ordered.due(at: at(10), limit: 10) { _ in true }.map(\.key) == ["b", "a", "c"])
        #expect(ordered.due(at: at(10), limit: 10) { $0 != "a" }.map(\.key) == ["b", "c"])
    }

    @Test func equalDeadlinesComeOutInScheduleOrder() {
        var queue = TimerQueue<Int>()
        for key in [5, 3, 9, 1, 7] { queue.schedule(key, at: at(0)) }
        queue.schedule(2, at: at(-1))
        #expect(queue.popDue(at: at(0)).map(\.key) == [2, 5, 3, 9, 1, 7])
    }

    @Test func reschedulingReplacesTheDeadlineAndCountsAsANewScheduleCall() {
        var queue = TimerQueue<String>()
        queue.schedule("a", at: at(10))
        queue.schedule("b", at: at(10))
        queue.schedule("a", at: at(10))
        #expect(queue.count == 2)
        queue.schedule("c", at: at(50))
        queue.schedule("c", at: at(5))
        #expect(queue.deadline(of: "c") == at(5))
        #expect(queue.popDue(at: at(60)).map(\.key) == ["c", "b", "a"])
    }

    @Test func removeReturnsTheDeadlineAndForgetsTheKey() {
        var queue = TimerQueue<String>()
        queue.schedule("a", at: at(10))
        queue.schedule("b", at: at(20))
        queue.schedule("c", at: at(30))
        #expect(queue.remove("a") == at(10))
        #expect(queue.remove("a") == nil)
        #expect(queue.deadline(of: "a") == nil)
        #expect(queue.nextDeadline == at(20))
        #expect(queue.popDue(at: at(100)).map(\.key) == ["b", "c"])
    }

    @Test func popDueStopsAtTheLimitAndLeavesLaterEntries() {
        var queue = TimerQueue<Int>()
        for key in 0..<10 { queue.schedule(key, at: at(Double(key))) }
        #expect(queue.popDue(at: at(5), limit: 2).map(\.key) == [0, 1])
        #expect(queue.popDue(at: at(5), limit: 0).isEmpty)
        #expect(queue.popDue(at: at(4.999)).map(\.key) == [2, 3, 4])
        #expect(queue.popDue(at: at(5)).map(\.key) == [5])
        #expect(queue.count == 4)
    }

    @Test func keepsDeadlinesExactly() {
        var queue = TimerQueue<Int>()
        let deadline = Date(timeIntervalSinceReferenceDate: 819_792_000.123_456_7)
        queue.schedule(1, at: deadline)
        #expect(queue.deadline(of: 1) == deadline)
        #expect(queue.popDue(at: deadline).first?.deadline == deadline)
    }

    @Test func popsAHundredThousandKeysInOrder() {
        var queue = TimerQueue<Int>()
        var generator = SeededGenerator(seed: 100_000)
        for key in 0..<100_000 { queue.schedule(key, at: at(Double(Int.random(in: 0..<1_000_000, using: &generator)))) }
        let due = queue.popDue(at: .distantFuture)
        #expect(due.count == 100_000)
        #expect(zip(due, due.dropFirst()).allSatisfy { $0.deadline <= $1.deadline })
        #expect(queue.isEmpty)
    }

    @Test(arguments: [0, 1, 2, 5, 17, 1_000]) func bulkSchedulingMatchesSchedulingOneByOne(count: Int) {
        var generator = SeededGenerator(seed: UInt64(0xB01C + count))
        // Few distinct deadlines and repeated keys: ties and replacements are common.
        let items = (0..<count).map { _ in
            (key: Int.random(in: 0..<max(1, count / 2), using: &generator),
             deadline: at(Double(Int.random(in: 0..<20, using: &generator))))
        }
        var bulk = TimerQueue<Int>()
        bulk.schedule(contentsOf: items)
        var oneByOne = TimerQueue<Int>()
        for (key, deadline) in items { oneByOne.schedule(key, at: deadline) }
        #expect(bulk.count == oneByOne.count)
        #expect(bulk.storedEntryCount <= bulk.count + bulk.count / 2 + 64)
        bulk.schedule(-1, at: at(3))
        oneByOne.schedule(-1, at: at(3))
        let popped = bulk.popDue(at: .distantFuture)
        #expect(popped.map(\.key) == oneByOne.popDue(at: .distantFuture).map(\.key))
        #expect(popped.map(\.deadline) == popped.map(\.deadline).sorted())
    }

    @Test func randomOperationsMatchASortedArrayReference() {
        struct Scheduled {
            var key: Int
            var deadline: Date
            var sequence: Int
        }
        var queue = TimerQueue<Int>()
        var reference: [Scheduled] = []
        var sequence = 0
        var generator = SeededGenerator(seed: 0xC41E)
        for _ in 0..<10_000 {
            let key = Int.random(in: 0..<300, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                // Few distinct deadlines, so ties are common.
                let deadline = at(Double(Int.random(in: 0..<200, using: &generator)))
                queue.schedule(key, at: deadline)
                reference.removeAll { $0.key == key }
                reference.append(Scheduled(key: key, deadline: deadline, sequence: sequence))
                sequence += 1
            case 6..<8:
                let expected = reference.first { $0.key == key }?.deadline
                reference.removeAll { $0.key == key }
                #expect(queue.remove(key) == expected)
            default:
                let now = at(Double(Int.random(in: -10..<220, using: &generator)))
                let limit = Int.random(in: 0..<3, using: &generator) == 0 ? 3 : .max
                reference.sort { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
                let expected = reference.prefix { $0.deadline <= now }.prefix(limit)
                reference.removeFirst(expected.count)
                let popped = queue.popDue(at: now, limit: limit)
                #expect(popped.map(\.key) == expected.map(\.key))
                #expect(popped.map(\.deadline) == expected.map(\.deadline))
            }
            #expect(queue.count == reference.count)
            #expect(queue.nextDeadline == reference.map(\.deadline).min())
            #expect(queue.deadline(of: key) == reference.first { $0.key == key }?.deadline)
            // Reads that walk the heap skip its stale entries (removed and rescheduled keys).
            let probe = at(Double(Int.random(in: 0..<200, using: &generator)))
            let dueKeys = reference.filter { $0.deadline <= probe }.sorted { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
            #expect(queue.countDue(at: probe) == dueKeys.count)
            #expect(queue.due(at: probe, limit: 5) { $0 % 2 == 0 }.map(\.key) == dueKeys.filter { $0.key % 2 == 0 }.prefix(5).map(\.key))
            #expect(queue.storedEntryCount <= queue.count + queue.count / 2 + 64)
        }
    }
}

/// The stale entries removal and rescheduling leave behind (lazy deletion): never more than
/// half the live keys plus 64, never counted, read or popped.
@Suite struct TimerQueueStaleEntryTests {
    private let base = Date(timeIntervalSince1970: 1_798_099_200)

    private func at(_ seconds: Double) -> Date { base.addingTimeInterval(seconds) }

    @Test func removingAndReschedulingKeepsTheHeapWithinItsBound() {
        var queue = TimerQueue<Int>()
        for key in 0..<10_000 { queue.schedule(key, at: at(Double(key))) }
        #expect(queue.storedEntryCount == 10_000)
        // Rescheduling every key later, from the back: none of the old entries is on top.
        for key in stride(from: 9_999, through: 1, by: -1) {
            queue.schedule(key, at: at(Double(20_000 + key)))
            #expect(queue.storedEntryCount <= queue.count + queue.count / 2 + 64)
        }
        // Removing the odd keys: the rebuilds keep the bound as the queue shrinks.
        for key in stride(from: 1, to: 10_000, by: 2) {
            #expect(queue.remove(key) == at(Double(20_000 + key)))
            #expect(queue.storedEntryCount <= queue.count + queue.count / 2 + 64)
        }
        #expect(queue.count == 5_000)
        #expect(queue.nextDeadline == at(0))
        #expect(queue.deadline(of: 2) == at(20_002))
        #expect(queue.deadline(of: 3) == nil)
        let popped = queue.popDue(at: .distantFuture)
        #expect(popped.map(\.key) == [0] + Array(stride(from: 2, to: 10_000, by: 2)))
        #expect(popped.map(\.deadline) == [at(0)] + stride(from: 2, to: 10_000, by: 2).map { at(Double(20_000 + $0)) })
        #expect(queue.isEmpty)
        #expect(queue.storedEntryCount == 0)
    }

    /// Pops shrink the bound faster than the heap: stale entries left below the popped ones are
    /// dropped at the end of the pop (the case a fresh reader found).
    @Test func poppingKeepsTheBound() {
        var queue = TimerQueue<Int>()
        for key in 0..<563 { queue.schedule(key, at: at(Double(3_000 + key))) }
        for key in 563..<1_000 { queue.schedule(key, at: at(Double(2_000 + key))) }
        for key in 0..<563 { queue.schedule(key, at: at(Double(key))) }
        #expect(queue.storedEntryCount == 1_563)
        #expect(queue.popDue(at: at(600)).count == 563)
        #expect(queue.count == 437)
        #expect(queue.storedEntryCount == 437)
        #expect(queue.popDue(at: .distantFuture).map(\.key) == Array(563..<1_000))
    }

    /// Live due entries left on top (a slot move's unserved slots) keep the stale entries below
    /// them from surfacing: `compactDue` drops them once they outnumber the live due entries
    /// and an eighth of the queue, plus 64.
    @Test func compactDueDropsStaleEntriesHeldUnderUntakenOnes() {
        var queue = TimerQueue<Int>()
        for key in 0..<100 { queue.schedule(key, at: at(0)) }
        for key in 100..<10_000 { queue.schedule(key, at: at(Double(5_000 + key))) }
        for key in 10_000..<13_000 { queue.schedule(key, at: at(Double(key - 9_999))) }
        for key in 10_000..<11_000 { queue.remove(key) }
        #expect(queue.storedEntryCount == 13_000)
        let early = queue.compactDue(at: at(4_000))
        #expect(!early, "1,000 stale due against 2,100 live due")
        for key in 11_000..<13_000 { queue.remove(key) }
        #expect(queue.storedEntryCount == 13_000, "within 1.5 × 10,000 + 64: no rebuild on removal")
        #expect(queue.countDue(at: at(4_000)) == 100)
        let compacted = queue.compactDue(at: at(4_000))
        #expect(compacted, "3,000 stale due > max(100, 10,000 / 8) + 64")
        #expect(queue.storedEntryCount == 10_000)
        let again = queue.compactDue(at: at(4_000))
        #expect(!again)
        #expect(queue.countDue(at: at(4_000)) == 100)
        #expect(queue.due(at: at(4_000), limit: 3) { _ in true }.map(\.key) == [0, 1, 2])
        #expect(queue.popDue(at: .distantFuture).map(\.key) == Array(0..<10_000))
    }

    /// Stale entries due before `now` are neither counted nor read, and the queue compares
    /// equal to one that never held them.
    @Test func staleEntriesAreNeitherCountedNorRead() {
        var queue = TimerQueue<String>()
        var fresh = TimerQueue<String>()
        for key in ["a", "b", "c", "d"] { queue.schedule(key, at: at(10)) }
        queue.schedule("e", at: at(1))
        queue.schedule("b", at: at(50))
        queue.remove("c")
        queue.schedule("d", at: at(5))
        for (key, seconds) in [("e", 1.0), ("a", 10), ("b", 50), ("d", 5)] { fresh.schedule(key, at: at(seconds)) }
        #expect(queue.storedEntryCount == 7)
        #expect(queue.count == 4)
        #expect(queue.countDue(at: at(20)) == 3)
        #expect(queue.countDue(at: at(20), limit: 2) == 2)
        #expect(queue.due(at: at(20), limit: 10) { _ in true }.map(\.key) == ["e", "d", "a"])
        #expect(queue.deadlines == ["e": at(1), "a": at(10), "b": at(50), "d": at(5)])
        #expect(queue == fresh)
        #expect(queue.first?.key == "e")
        #expect(queue.popDue(at: at(20)).map(\.key) == ["e", "d", "a"])
        #expect(queue.first?.key == "b")
        #expect(queue.count == 1)
    }
}
