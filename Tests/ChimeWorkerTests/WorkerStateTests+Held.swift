import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeWorker


/// Firings handed over ahead of their due instant: held, delivered from the worker's timer
/// at the due instant, dropped when revoked.
extension WorkerStateTests {
    func firing(_ id: String, due: Date, seq: UInt64) -> Firing {
        var firing = Firing(reminderId: ReminderID(id), recipient: "alice", dueAt: due, content: Content(body: id), attempt: 1)
        firing.seq = seq
        return firing
    }

    @Test func holdsAFiringHandedOverEarlyAndDeliversItAtItsDueInstant() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        let due = Self.t0.addingTimeInterval(0.2)
        let batch = DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [firing("a", due: due, seq: 5)])
        #expect(state.onBatch(batch, at: Self.t0).isEmpty)
        #expect(state.heldCount == 1)
        #expect(state.nextHeldDue == due)
        #expect(state.onTimer(at: due.addingTimeInterval(-0.000_001)).isEmpty)
        let directives = state.onTimer(at: due)
        guard directives.count == 1, case .publish(let event) = directives[0] else {
            Issue.record("\(directives)")
            return
        }
        #expect(event.seq == 5)
        #expect(event.firedAt == due)
        #expect(state.heldCount == 0)
        #expect(state.nextHeldDue == nil)
        #expect(state.pendingAcks.map(\.firedAt) == [due])
    }

    @Test func deliversHeldFiringsInDueOrderAndADueOneAtOnce() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        let batch = DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [
            firing("late", due: Self.t0.addingTimeInterval(0.15), seq: 3),
            firing("now", due: Self.t0, seq: 1),
            firing("early", due: Self.t0.addingTimeInterval(0.1), seq: 2),
        ])
        let atOnce = state.onBatch(batch, at: Self.t0)
        #expect(atOnce.count == 1, "a firing due now is delivered on arrival")
        let later = state.onTimer(at: Self.t0.addingTimeInterval(0.2))
        let seqs = later.compactMap { if case .publish(let event) = $0 { event.seq } else { nil } }
        #expect(seqs == [2, 3])
    }

    @Test func dropsARevokedHeldFiring() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        let due = Self.t0.addingTimeInterval(0.2)
        let held = firing("a", due: due, seq: 5)
        _ = state.onBatch(DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [held]), at: Self.t0)
        let revoke = DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [], revoked: [held.firingId])
        #expect(state.onBatch(revoke, at: Self.t0.addingTimeInterval(0.1)).isEmpty)
        #expect(state.revokedCount == 1)
        #expect(state.onTimer(at: due).isEmpty)
        #expect(state.deliveredCount == 0)
        // A revocation of a firing already delivered changes nothing.
        #expect(state.onBatch(revoke, at: due).isEmpty)
        #expect(state.revokedCount == 1)
    }

    @Test func aNewerEpochDropsWhatTheEarlierOneHandedOver() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        let due = Self.t0.addingTimeInterval(0.2)
        _ = state.onBatch(DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [firing("a", due: due, seq: 5)]), at: Self.t0)
        _ = state.onBatch(DispatchBatch(epoch: 2, leaseMilliseconds: 10_000, firings: [firing("b", due: due, seq: 9)]), at: Self.t0)
        let seqs = state.onTimer(at: due).compactMap { if case .publish(let event) = $0 { event.seq } else { nil } }
        #expect(seqs == [9])
    }

    @Test func aLeavingWorkerDropsItsHeldFiringsUnacknowledged() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        let due = Self.t0.addingTimeInterval(0.2)
        _ = state.onBatch(DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [firing("a", due: due, seq: 5)]), at: Self.t0)
        let message = state.leave()
        #expect(message.acks.isEmpty)
        #expect(state.heldCount == 0)
    }

    @Test func holdsAcknowledgementsForTheDelayThenSendsThemTogether() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        state.acknowledgementDelay = 0.125
        _ = state.onTick(monotonic: Self.m0)  // the first heartbeat
        _ = state.onBatch(DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [firing("a", due: Self.t0, seq: 1)]), at: Self.t0)
        #expect(state.onTick(monotonic: Self.m0 + 0.25).isEmpty, "the first waiting acknowledgement starts the delay")
        _ = state.onBatch(DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [firing("b", due: Self.t0, seq: 2)]), at: Self.t0)
        #expect(state.nextWake == Self.m0 + 0.375)
        #expect(state.onTick(monotonic: Self.m0 + 0.374).isEmpty)
        let sent = state.onTick(monotonic: Self.m0 + 0.375)
        guard sent.count == 1, case .report(let message) = sent[0] else {
            Issue.record("\(sent)")
            return
        }
        #expect(message.acks.map(\.firingId.reminder) == ["a", "b"])
        #expect(state.nextWake == Self.m0 + 1, "only the heartbeat is ahead")
    }

    /// The delay counts from the delivery, not from the turn that first sees the acknowledgement:
    /// a worker descheduled between the two (or a clock moved meanwhile) must not wait longer.
    @Test func theAcknowledgementDelayCountsFromTheDelivery() {
        var state = WorkerState(id: "w1", host: "h", pid: 7, heartbeatInterval: 1, capacity: 8)
        state.acknowledgementDelay = 0.01
        _ = state.onTick(monotonic: Self.m0)  // the first heartbeat
        let due = Self.t0.addingTimeInterval(0.2)
        _ = state.onBatch(
            DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [firing("a", due: due, seq: 1)]), at: Self.t0,
            monotonic: Self.m0)
        #expect(state.nextWake == Self.m0 + 1, "a held firing queues no acknowledgement")
        _ = state.onTimer(at: due, monotonic: Self.m0 + 0.2)
        #expect(state.nextWake == Self.m0 + 0.21)
        let sent = state.onTick(monotonic: Self.m0 + 0.22)
        guard sent.count == 1, case .report(let message) = sent[0] else {
            Issue.record("the first tick after the delay sends: \(sent)")
            return
        }
        #expect(message.acks.map(\.firingId.reminder) == ["a"])
        _ = state.onBatch(
            DispatchBatch(epoch: 1, leaseMilliseconds: 10_000, firings: [firing("b", due: Self.t0, seq: 2)]), at: Self.t0,
            monotonic: Self.m0 + 0.3)
        #expect(state.onTick(monotonic: Self.m0 + 0.309).isEmpty)
        #expect(state.onTick(monotonic: Self.m0 + 0.31).count == 1)
    }
}
