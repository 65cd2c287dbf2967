import ChimeCore
import ChimeStore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Issue 25, item 6: lateness and the delivery instant come from the coordinator's clocks; a
/// worker's `firedAt` counts only inside the window from dispatch to acknowledgement.
extension CoordinatorStateTests {
    func acknowledge(_ state: inout CoordinatorState, _ firing: Firing, claiming firedAt: Date, at now: Date) -> [CoordinatorDirective] {
        let ack = WorkerMessage.Acknowledgement(firingId: firing.firingId, firedAt: firedAt, attempt: firing.attempt, epoch: 1)
        return state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 1, acks: [ack]), at: now)
    }

    func lateness(_ state: inout CoordinatorState, at now: Date) -> Double? {
        let (outcome, _) = request(&state, .stats, at: now)
        guard case .stats(let stats) = outcome else { return nil }
        return stats.fireLateness?.max
    }

    @Test func aWorkerNineDaysAheadDoesNotMakeAFiringNineDaysLate() throws {
        var state = makeState()
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        let firing = try #require(firings(state.onTick(now: Self.t0)).first)
        let now = Self.t0.addingTimeInterval(0.003)
        let directives = acknowledge(&state, firing, claiming: now.addingTimeInterval(9 * 86_400), at: now)
        #expect(directives == [.append(.acknowledged(firing.firingId, seq: 1, worker: "w1", firedAt: now))], "clamped to the arrival")
        #expect(try #require(lateness(&state, at: now)) < 3.5, "3 ms, not 777,600,003 ms")
    }

    @Test func aWorkerBehindTheCoordinatorIsClampedToTheDispatch() throws {
        var state = makeState()
        let due = Self.t0.addingTimeInterval(10)
        request(&state, .schedule([reminder("a", at: due)]))
        // Dispatched 2 s late (a stall), acknowledged 5 ms after that by a worker whose clock
        // says before the due time.
        let dispatchedAt = due.addingTimeInterval(2)
        let firing = try #require(firings(state.onTick(now: dispatchedAt)).first)
        let now = dispatchedAt.addingTimeInterval(0.005)
        let directives = acknowledge(&state, firing, claiming: due.addingTimeInterval(-60), at: now)
        #expect(directives == [.append(.acknowledged(firing.firingId, seq: 1, worker: "w1", firedAt: dispatchedAt))])
        #expect(try #require(lateness(&state, at: now)) == 2000)
    }

    @Test func aFiredAtInsideTheWindowIsKept() throws {
        var state = makeState()
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        let firing = try #require(firings(state.onTick(now: Self.t0)).first)
        let claimed = Self.t0.addingTimeInterval(0.002)
        let directives = acknowledge(&state, firing, claiming: claimed, at: Self.t0.addingTimeInterval(0.01))
        #expect(directives == [.append(.acknowledged(firing.firingId, seq: 1, worker: "w1", firedAt: claimed))])
    }
}

/// Issue 42, case (c): a reminder scheduled for a time already past is not days late.
extension CoordinatorStateTests {
    @Test func aReminderScheduledInThePastCountsLatenessFromItsScheduling() throws {
        var state = makeState()
        let due = Self.t0.addingTimeInterval(-4 * 86_400)
        request(&state, .schedule([reminder("past", at: due)]), at: Self.t0)
        let firing = try #require(firings(state.onTick(now: Self.t0)).first)
        #expect(firing.dueAt == due)
        let delivered = Self.t0.addingTimeInterval(0.003)
        _ = acknowledge(&state, firing, claiming: delivered, at: delivered)
        let (outcome, _) = request(&state, .stats, at: delivered)
        guard case .stats(let stats) = outcome else {
            Issue.record("no stats: \(outcome)")
            return
        }
        #expect(stats.dispatchLateness?.max == 0, "dispatched in the turn it was scheduled")
        let fire = try #require(stats.fireLateness)
        #expect(fire.count == 1)
        // Dates near 2026 carry about 0.2 µs of precision.
        #expect(abs(fire.max - 3) < 0.001, "3 ms from its scheduling, not 345,600,003 ms from its due time")
        let metrics = state.metrics(at: delivered)
        #expect(metrics.fireLateness.count == 1)
        #expect(abs(metrics.fireLateness.sum - 0.003) < 0.000_001)
    }

    @Test func aFiringDueWhileScheduledAheadStillCountsFromItsDueTime() throws {
        var state = makeState()
        let due = Self.t0.addingTimeInterval(10)
        request(&state, .schedule([reminder("ahead", at: due)]), at: Self.t0)
        // Made 2 s after its due time (a stalled loop): that is lateness.
        let firing = try #require(firings(state.onTick(now: due.addingTimeInterval(2))).first)
        let delivered = due.addingTimeInterval(2.005)
        _ = acknowledge(&state, firing, claiming: delivered, at: delivered)
        #expect(abs(try #require(lateness(&state, at: delivered)) - 2005) < 0.001)
    }
}
