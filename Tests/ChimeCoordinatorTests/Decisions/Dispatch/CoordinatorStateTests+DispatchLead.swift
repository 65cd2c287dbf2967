import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


/// `coordinator.dispatchLeadMilliseconds`: firings handed to a worker ahead of their due
/// instant, leases from the due instant, and revocation when the reminder changes before it.
extension CoordinatorStateTests {
    /// A state with `w1`, a 200 ms lead and a 10 s lease, and reminder `r` due at `t0 + 10 s`.
    func makeLeadState() -> CoordinatorState {
        var state = makeState { configuration in
            configuration.dispatchLead = 0.2
            configuration.leaseDuration = 10
        }
        request(&state, .schedule([reminder("r", at: Self.t0.addingTimeInterval(10))]))
        return state
    }

    static var leadDue: Date { t0.addingTimeInterval(10) }

    func revoked(_ directives: [CoordinatorDirective]) -> [(ids: [FiringID], worker: WorkerID)] {
        batches(directives).compactMap { entry in entry.batch.revoked.map { ($0, entry.worker) } }
    }

    @Test func handsAFiringOverALeadAheadOfItsDueInstant() {
        var state = makeLeadState()
        #expect(state.nextWake == Self.leadDue.addingTimeInterval(-0.1), "woken half a lead ahead")
        #expect(firings(state.onTick(now: Self.leadDue.addingTimeInterval(-0.201))).isEmpty)
        let directives = state.onTick(now: Self.leadDue.addingTimeInterval(-0.2))
        let handed = firings(directives)
        #expect(handed.map(\.firingId.reminder) == ["r"])
        #expect(handed.first?.dueAt == Self.leadDue)
        let fired = directives.compactMap { directive -> (Date, Date)? in
            if case .append(.fired(_, let dueAt, _, let late, _, let at)) = directive, !late { return (dueAt, at) }
            return nil
        }
        #expect(fired.count == 1)
        #expect(fired.first?.0 == Self.leadDue)
        #expect(fired.first?.1 == Self.leadDue.addingTimeInterval(-0.2))
        guard let id = handed.first?.firingId, let flight = state.dispatch.inFlight[id] else {
            Issue.record("not in flight")
            return
        }
        let due = Self.leadDue.timeIntervalSinceReferenceDate
        #expect(abs(flight.leaseExpiresAt - (due + 10)) < 1e-6, "the lease runs from the due instant: \(flight.leaseExpiresAt - due)")
        #expect(abs(flight.dispatchedAt - (due - 0.2)) < 1e-6)
    }

    @Test func leaseOfAFiringHandedOverEarlyExpiresTenSecondsAfterItsDueInstant() {
        var state = makeLeadState()
        let handed = firings(state.onTick(now: Self.leadDue.addingTimeInterval(-0.2)))
        #expect(handed.count == 1)
        // 10 s after the hand-over, but 0.2 s before the lease's end: still held.
        #expect(firings(state.onTick(now: Self.leadDue.addingTimeInterval(9.8))).isEmpty)
        #expect(state.inFlightCount == 1)
        let redelivered = firings(state.onTick(now: Self.leadDue.addingTimeInterval(10)))
        #expect(redelivered.map(\.firingId) == handed.map(\.firingId))
        #expect(redelivered.first?.attempt == 2)
    }

    @Test func cancelInsideTheLeadRevokesTheFiringFromItsWorker() {
        var state = makeLeadState()
        let handed = firings(state.onTick(now: Self.leadDue.addingTimeInterval(-0.2)))
        guard let id = handed.first?.firingId else {
            Issue.record("nothing handed over")
            return
        }
        let (_, directives) = request(&state, .cancel(ReminderFilter(ids: ["r"])), at: Self.leadDue.addingTimeInterval(-0.05))
        let revocations = revoked(directives)
        #expect(revocations.count == 1)
        #expect(revocations.first?.ids == [id])
        #expect(revocations.first?.worker == "w1")
        #expect(state.inFlightCount == 0)
        #expect(state.durable.unsettledCount == 0)
        #expect(state.revokedCount == 1)
        // Its lease never expires into a redelivery, and a late acknowledgement changes nothing.
        #expect(firings(state.onTick(now: Self.leadDue.addingTimeInterval(11))).isEmpty)
        let late = ack(&state, handed, by: "w1", at: Self.leadDue)
        #expect(!late.contains { if case .append(.acknowledged) = $0 { true } else { false } })
    }

    @Test func cancelAfterTheDueInstantRevokesNothing() {
        var state = makeLeadState()
        _ = state.onTick(now: Self.leadDue.addingTimeInterval(-0.2))
        let (_, directives) = request(&state, .cancel(ReminderFilter(ids: ["r"])), at: Self.leadDue.addingTimeInterval(0.001))
        #expect(revoked(directives).isEmpty)
        #expect(state.inFlightCount == 1, "fired, then cancelled: the delivery stands")
    }

    @Test func switchingOffOrReplacingInsideTheLeadRevokesTheFiring() {
        var state = makeLeadState()
        _ = state.onTick(now: Self.leadDue.addingTimeInterval(-0.2))
        let (_, off) = request(&state, .setEnabled(["r"], false, recipient: "alice"), at: Self.leadDue.addingTimeInterval(-0.1))
        #expect(revoked(off).map(\.ids.count) == [1])

        var replaced = makeLeadState()
        let first = firings(replaced.onTick(now: Self.leadDue.addingTimeInterval(-0.2)))
        var changed = reminder("r", at: Self.leadDue)
        changed.content.body = "new"
        let (_, directives) = request(&replaced, .schedule([changed]), at: Self.leadDue.addingTimeInterval(-0.1))
        #expect(revoked(directives).map(\.ids) == [first.map(\.firingId)])
        // The replacement is due within the lead again: handed over with its new content.
        let again = firings(replaced.onTick(now: Self.leadDue.addingTimeInterval(-0.1)))
        #expect(again.map(\.firingId) == first.map(\.firingId))
        #expect(again.first?.content.body == "new")
    }

    @Test func aRecoveredFiringNotYetDueIsHandedOverAgainWithItsLeaseFromTheDueInstant() {
        var state = makeLeadState()
        let directives = state.onTick(now: Self.leadDue.addingTimeInterval(-0.2))
        let entries = directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
        // A standby replays the active's journal (the schedule, then the hand-over's entries).
        var standby = makeState { configuration in
            configuration.dispatchLead = 0.2
            configuration.leaseDuration = 10
        }
        request(&standby, .schedule([reminder("r", at: Self.leadDue)]))
        for entry in entries { standby.apply(entry) }
        standby.finishRecovery(at: Self.leadDue.addingTimeInterval(-0.15))
        let again = firings(standby.onTick(now: Self.leadDue.addingTimeInterval(-0.15)))
        #expect(again.map(\.firingId) == firings(directives).map(\.firingId))
        guard let id = again.first?.firingId, let flight = standby.dispatch.inFlight[id] else { return }
        #expect(abs(flight.leaseExpiresAt - (Self.leadDue.timeIntervalSinceReferenceDate + 10)) < 1e-6)
        // And a cancel there still revokes it.
        let (_, cancel) = request(&standby, .cancel(ReminderFilter(ids: ["r"])), at: Self.leadDue.addingTimeInterval(-0.1))
        #expect(revoked(cancel).map(\.ids) == [[id]])
    }

    @Test func withoutALeadAFiringLeavesAtItsDueInstant() {
        var state = makeState { $0.dispatchLead = 0 }
        request(&state, .schedule([reminder("r", at: Self.leadDue)]))
        #expect(state.nextWake == Self.leadDue)
        #expect(firings(state.onTick(now: Self.leadDue.addingTimeInterval(-0.001))).isEmpty)
        #expect(firings(state.onTick(now: Self.leadDue)).count == 1)
    }

    @Test func aRevocationIsDurableInReplayAndAfterASnapshot() throws {
        var active = makeLeadState()
        let handOver = active.onTick(now: Self.leadDue.addingTimeInterval(-0.2))
        let snapshot = active.encodedSnapshot(at: Self.leadDue.addingTimeInterval(-0.2))
        let (_, cancel) = request(&active, .cancel(ReminderFilter(ids: ["r"])), at: Self.leadDue.addingTimeInterval(-0.1))
        func appended(_ directives: [CoordinatorDirective]) -> [JournalEntry] {
            directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
        }
        func makeStandby() -> CoordinatorState {
            makeState { configuration in
                configuration.dispatchLead = 0.2
                configuration.leaseDuration = 10
            }
        }
        // Replay of the whole journal.
        var replayed = makeStandby()
        request(&replayed, .schedule([reminder("r", at: Self.leadDue)]))
        for entry in appended(handOver) + appended(cancel) { replayed.apply(entry) }
        replayed.finishRecovery(at: Self.leadDue.addingTimeInterval(-0.05))
        #expect(replayed.durable.unsettledCount == 0)
        #expect(firings(replayed.onTick(now: Self.leadDue.addingTimeInterval(-0.05))).isEmpty)
        #expect(firings(replayed.onTick(now: Self.leadDue.addingTimeInterval(20))).isEmpty)
        // The snapshot taken between the hand-over and the cancel, then the cancel's entries.
        var restored = makeStandby()
        try restored.load(snapshot: snapshot)
        #expect(restored.durable.unsettledCount == 1)
        for entry in appended(cancel) { restored.apply(entry) }
        restored.finishRecovery(at: Self.leadDue.addingTimeInterval(-0.05))
        #expect(restored.durable.unsettledCount == 0)
        #expect(firings(restored.onTick(now: Self.leadDue.addingTimeInterval(20))).isEmpty)
    }
}
