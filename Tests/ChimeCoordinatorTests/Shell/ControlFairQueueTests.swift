import Foundation
import Testing
@testable import ChimeCoordinator

/// Issue 37, item 2: control requests served round-robin per connection, bounded in bytes. Pure.
@Suite struct ControlFairQueueTests {
    let a = [Data([1]), Data()]
    let b = [Data([2]), Data()]
    let c = [Data([3]), Data()]

    func makeQueue(perConnection: Int = 1000, total: Int = 10_000) -> ControlFairQueue<String> {
        ControlFairQueue(limits: .init(maxBytesPerConnection: perConnection, maxBytesTotal: total))
    }

    func taken(_ isQueued: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(isQueued, sourceLocation: sourceLocation)
    }

    func refused(_ isQueued: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!isQueued, sourceLocation: sourceLocation)
    }

    func served(_ request: String?, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(request == expected, sourceLocation: sourceLocation)
    }

    func drain(_ queue: inout ControlFairQueue<String>) -> [String] {
        var order: [String] = []
        while let (_, request) = queue.next() { order.append(request) }
        return order
    }

    @Test func servesOneRequestOfEachConnectionInTurn() {
        var queue = makeQueue()
        // A flood of a's, then b's one ping, then c's two.
        for index in 0..<5 { taken(queue.enqueue("a\(index)", bytes: 10, from: a)) }
        taken(queue.enqueue("b0", bytes: 10, from: b))
        taken(queue.enqueue("c0", bytes: 10, from: c))
        taken(queue.enqueue("c1", bytes: 10, from: c))
        #expect(queue.count == 8 && queue.pendingBytes == 80)
        let drained = drain(&queue)
        #expect(drained == ["a0", "b0", "c0", "a1", "c1", "a2", "a3", "a4"])
        #expect(queue.isEmpty && queue.pendingBytes == 0 && queue.pendingBytes(of: a) == 0)
    }

    @Test func aConnectionThatComesBackJoinsTheEndOfTheLine() {
        var queue = makeQueue()
        _ = queue.enqueue("a0", bytes: 1, from: a)
        _ = queue.enqueue("a1", bytes: 1, from: a)
        _ = queue.enqueue("b0", bytes: 1, from: b)
        served(queue.next()?.request, "a0")
        served(queue.next()?.request, "b0")
        _ = queue.enqueue("b1", bytes: 1, from: b)
        _ = queue.enqueue("c0", bytes: 1, from: c)
        let drained = drain(&queue)
        #expect(drained == ["a1", "b1", "c0"])
    }

    @Test func refusesPastTheConnectionsBytesButAlwaysTakesOneRequest() {
        var queue = makeQueue(perConnection: 100, total: 10_000)
        // Larger than the bound, but the connection has nothing waiting.
        taken(queue.enqueue("big", bytes: 500, from: a))
        refused(queue.enqueue("a1", bytes: 1, from: a))
        taken(queue.enqueue("b0", bytes: 60, from: b))
        taken(queue.enqueue("b1", bytes: 40, from: b))
        refused(queue.enqueue("b2", bytes: 1, from: b))
        #expect(queue.pendingBytes(of: a) == 500 && queue.pendingBytes(of: b) == 100 && queue.pendingBytes == 600)
        served(queue.next()?.request, "big")
        taken(queue.enqueue("a1", bytes: 100, from: a))
        let drained = drain(&queue)
        #expect(drained == ["b0", "a1", "b1"])
    }

    @Test func refusesPastTheTotalUnlessNothingWaits() {
        var queue = makeQueue(perConnection: 1000, total: 100)
        taken(queue.enqueue("a0", bytes: 80, from: a))
        refused(queue.enqueue("b0", bytes: 21, from: b))
        taken(queue.enqueue("b0", bytes: 20, from: b))
        refused(queue.enqueue("c0", bytes: 1, from: c))
        let drained = drain(&queue)
        #expect(drained == ["a0", "b0"])
        // Nothing waits: any one request is taken, whatever its size.
        taken(queue.enqueue("c0", bytes: 5000, from: c))
        #expect(queue.pendingBytes == 5000)
    }
}
