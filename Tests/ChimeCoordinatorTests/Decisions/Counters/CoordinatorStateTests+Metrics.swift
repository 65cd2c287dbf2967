import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator


extension CoordinatorStateTests {
    @Test func backlogRisesWithoutWorkersAndFallsWhenOneJoins() throws {
        var state = makeState(workers: [])
        let due = Self.t0.addingTimeInterval(10)
        request(&state, .schedule((0..<300).map { reminder("r\($0)", at: due) }))
        #expect(state.metrics(at: Self.t0).dueBacklog == 0)

        _ = state.onTick(now: due.addingTimeInterval(2))
        // 256 (one batch) fired into the waiting line, 44 still due in the schedule.
        var metrics = state.metrics(at: due.addingTimeInterval(2))
        #expect(metrics.waiting == 256)
        #expect(metrics.dueBacklog == 300)
        #expect(metrics.oldestUndeliveredAgeSeconds == 2)
        #expect(metrics.remindersByState.first { $0.state == "pending" }?.count == 44)
        #expect(metrics.remindersByState.first { $0.state == "delivered" }?.count == 256)

        join(&state, "w1", at: due.addingTimeInterval(3))
        let sent = firings(state.onTick(now: due.addingTimeInterval(3)))
        #expect(sent.count == 300)
        metrics = state.metrics(at: due.addingTimeInterval(3))
        #expect(metrics.dueBacklog == 0)
        #expect(metrics.inFlight == 300)
        #expect(metrics.dispatched == 300)
        // Dispatched but unacknowledged: still undelivered.
        #expect(metrics.oldestUndeliveredAgeSeconds == 3)

        _ = ack(&state, sent, by: "w1", at: due.addingTimeInterval(4))
        metrics = state.metrics(at: due.addingTimeInterval(4))
        #expect(metrics.oldestUndeliveredAgeSeconds == 0)
        #expect(metrics.acknowledged == 300)
        #expect(metrics.fireLateness.count == 300)
        #expect(metrics.fireLateness.sum == 1200)
        // 4 s late: the bucket whose upper bound is 5 s.
        let index = try #require(Histogram.latencySecondsBounds.firstIndex(of: 5))
        #expect(metrics.fireLateness.bucketCounts[index] == 300)
        #expect(metrics.workersAlive == 1)

        let (outcome, _) = request(&state, .stats, at: due.addingTimeInterval(4))
        guard case .stats(let stats) = outcome else { Issue.record("\(outcome)"); return }
        #expect(stats.dueBacklog == 0)
        #expect(stats.oldestUndeliveredAgeSeconds == 0)
        #expect(stats.deadLettered == 0)
        // Counters sampled at the first tick (12 s after t0, nothing dispatched yet), 2 s ago.
        #expect(stats.rateWindowSeconds == 2)
        #expect(stats.dispatchedPerSecond == 150)
        #expect(stats.acknowledgedPerSecond == 150)
    }

    @Test func countsDeadLettersAndRedeliveries() {
        var state = makeState { $0.maxAttempts = 2 }
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        _ = state.onTick(now: Self.t0)
        let lease = state.configuration.leaseDuration
        _ = state.onTick(now: Self.t0.addingTimeInterval(lease + 0.001))
        _ = state.onTick(now: Self.t0.addingTimeInterval(2 * lease + 0.002))
        let metrics = state.metrics(at: Self.t0.addingTimeInterval(2 * lease + 0.002))
        #expect(metrics.redelivered == 1)
        #expect(metrics.deadLettered == 1)
        #expect(metrics.deadLetters == 1)
        #expect(metrics.dueBacklog == 0)
        #expect(metrics.oldestUndeliveredAgeSeconds == 0)
    }

    @Test func timerQueueCountsDueKeysOnly() {
        var queue = TimerQueue<Int>()
        for key in 0..<1000 { queue.schedule(key, at: Self.t0.addingTimeInterval(Double(key % 100))) }
        #expect(queue.countDue(at: Self.t0.addingTimeInterval(-1)) == 0)
        #expect(queue.countDue(at: Self.t0) == 10)
        #expect(queue.countDue(at: Self.t0.addingTimeInterval(49.5)) == 500)
        #expect(queue.countDue(at: Self.t0.addingTimeInterval(49.5), limit: 7) == 7)
        #expect(queue.countDue(at: Self.t0.addingTimeInterval(1000)) == 1000)
        #expect(TimerQueue<Int>().countDue(at: Self.t0) == 0)
    }
}
