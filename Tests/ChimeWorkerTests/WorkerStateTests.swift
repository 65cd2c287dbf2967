import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeWorker


/// The worker's decisions on their own: delivery, acknowledgements, heartbeats and
/// announcements, with time passed in.
@Suite struct WorkerStateTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)
    /// A monotonic reading, in seconds, for heartbeat timing.
    static let m0 = 5_000.0

    func firing(_ id: String, seq: UInt64?) -> Firing {
        var firing = Firing(reminderId: ReminderID(id), recipient: "alice", dueAt: Self.t0, content: Content(body: id), attempt: 2)
        firing.seq = seq
        return firing
    }

    @Test func deliversEachFiringAsOneEventWithTheCoordinatorsSeq() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        let batch = DispatchBatch(epoch: 3, leaseMilliseconds: 10_000, firings: [firing("a", seq: 41), firing("b", seq: nil)])
        let directives = state.onBatch(batch, at: Self.t0.addingTimeInterval(0.25))
        guard directives.count == 2, case .publish(let first) = directives[0], case .publish(let second) = directives[1] else {
            Issue.record("\(directives)")
            return
        }
        #expect(first.seq == 41)
        #expect(second.seq == 2, "a firing without a seq gets the worker's own count")
        #expect(first.firedAt == Self.t0.addingTimeInterval(0.25))
        #expect(state.deliveredCount == 2)
    }

    @Test func acknowledgesWithTheNextTickAndAnnouncesOnlyWhenAHeartbeatIsDue() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        // The first tick is a heartbeat: an announcement over dispatch plus a report.
        let first = state.onTick(monotonic: Self.m0)
        #expect(first.count == 2)
        guard case .announce(let announcement) = first.first else { Issue.record("\(first)"); return }
        #expect(announcement.capacity == 8 && announcement.acks.isEmpty)
        #expect(state.nextWake == Self.m0 + 1)
        #expect(state.onTick(monotonic: Self.m0 + 0.5).isEmpty, "nothing to say before the interval")

        _ = state.onBatch(DispatchBatch(epoch: 3, leaseMilliseconds: 10_000, firings: [firing("a", seq: 1)]), at: Self.t0.addingTimeInterval(0.6))
        let acked = state.onTick(monotonic: Self.m0 + 0.6)
        guard acked.count == 1, case .report(let report) = acked[0] else { Issue.record("\(acked)"); return }
        #expect(report.acks == [WorkerMessage.Acknowledgement(
            firingId: firing("a", seq: 1).firingId, firedAt: Self.t0.addingTimeInterval(0.6), attempt: 2, epoch: 3)])
        #expect(report.delivered == 1)
        #expect(state.onTick(monotonic: Self.m0 + 0.7).isEmpty, "each ack goes out once")
    }

    @Test func unsentReportsAndJobOutcomesGoOutWithTheNextOne() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 60)
        _ = state.onTick(monotonic: Self.m0)
        _ = state.onBatch(DispatchBatch(epoch: 1, leaseMilliseconds: 1000, firings: [firing("a", seq: 1)]), at: Self.t0)
        guard case .report(let lost)? = state.onTick(monotonic: Self.m0).first else { Issue.record("no report"); return }
        state.onReportNotSent(lost)
        state.onJobFinished(ActionOutcome(jobId: "j1", status: .completed, reason: nil))
        _ = state.onBatch(DispatchBatch(epoch: 1, leaseMilliseconds: 1000, firings: [firing("b", seq: 2)]), at: Self.t0)
        guard case .report(let retried)? = state.onTick(monotonic: Self.m0).first else { Issue.record("no report"); return }
        #expect(retried.acks.map(\.firingId) == [firing("a", seq: 1).firingId, firing("b", seq: 2).firingId], "the unsent ack first")
        #expect(retried.outcomes?.map(\.jobId) == ["j1"])
        state.announceAtNextTick()
        #expect(state.onTick(monotonic: Self.m0 + 1).count == 2, "an announcement is forced")
    }

    @Test func jobsInABatchAreRunBeforeItsFiringsAreDelivered() {
        var state = WorkerState(id: "w1", host: "h", pid: 7)
        let job = ActionJob(
            jobId: "j", firing: firing("a", seq: 1), action: "dismiss", text: nil, destructive: false,
            activationMode: .background, category: nil, snoozeSeconds: nil)
        let directives = state.onBatch(DispatchBatch(epoch: 1, leaseMilliseconds: 1000, firings: [firing("b", seq: 5)], jobs: [job]), at: Self.t0)
        #expect(directives.count == 2)
        #expect(directives.first == .run(job))
    }

    @Test func aLeavingWorkersLastMessageCarriesItsAcknowledgementsAndZeroCredit() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 60, capacity: 8)
        _ = state.onTick(monotonic: Self.m0)
        _ = state.onBatch(DispatchBatch(epoch: 4, leaseMilliseconds: 1000, firings: [firing("a", seq: 1)]), at: Self.t0)
        state.onJobFinished(ActionOutcome(jobId: "j1", status: .completed, reason: nil))
        let last = state.leave()
        #expect(last.leaving == true)
        #expect(last.capacity == 0)
        #expect(last.acks.map(\.firingId) == [firing("a", seq: 1).firingId])
        #expect(last.outcomes?.map(\.jobId) == ["j1"])
        #expect(state.onTick(monotonic: Self.m0 + 1).allSatisfy {
            if case .report(let report) = $0 { return report.acks.isEmpty } else { return true }
        }, "nothing is acknowledged twice")
    }

    @Test func aBatchFromAnOlderEpochIsDroppedUnseen() {
        var state = WorkerState(id: "w1", host: "h", pid: 7)
        #expect(state.onBatch(DispatchBatch(epoch: 5, leaseMilliseconds: 1000, firings: [firing("a", seq: 1)]), at: Self.t0).count == 1)
        // A coordinator of epoch 4 that lost the store and resumed: nothing published or acknowledged.
        #expect(state.onBatch(DispatchBatch(epoch: 4, leaseMilliseconds: 1000, firings: [firing("b", seq: 2)]), at: Self.t0).isEmpty)
        #expect(state.staleBatches == 1)
        #expect(state.deliveredCount == 1)
        #expect(state.onBatch(DispatchBatch(epoch: 6, leaseMilliseconds: 1000, firings: [firing("c", seq: 3)]), at: Self.t0).count == 1)
        #expect(state.highestEpoch == 6)
        guard case .report(let report)? = state.onTick(monotonic: Self.m0).last else { Issue.record("no report"); return }
        #expect(report.acks.map(\.epoch) == [5, 6])
    }
}
