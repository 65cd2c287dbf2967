import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// A firing handed over ahead of its due instant has not fired: `list`, `status`, `stats` and
/// `/metrics` read its reminder as pending, due at the firing's instant, until that instant.
extension CoordinatorStateTests {
    func listing(_ state: inout CoordinatorState, _ id: ReminderID, all: Bool = true, at now: Date) -> ReminderListing? {
        let (outcome, _) = request(&state, .list(ReminderFilter(ids: [id]), all: all, limit: nil), at: now)
        guard case .listed(let page) = outcome else {
            Issue.record("\(outcome)")
            return nil
        }
        return page.reminders.first
    }

    func statusReport(_ state: inout CoordinatorState, at now: Date) -> StatusReport? {
        let (outcome, _) = request(&state, .status, at: now)
        guard case .status(let report) = outcome else {
            Issue.record("\(outcome)")
            return nil
        }
        return report
    }

    func metricsCounts(_ state: CoordinatorState, at now: Date) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: state.metrics(at: now).remindersByState.map { ($0.state, $0.count) })
    }

    @Test func aOneShotHandedOverAheadStaysPendingUntilItsDueInstant() {
        var state = makeLeadState()
        let handOver = Self.leadDue.addingTimeInterval(-0.2)
        #expect(firings(state.onTick(now: handOver)).count == 1)
        #expect(state.entries[ReminderKey("r", of: "alice")]?.state == .delivered, "the fold moved it on at the hand-over")

        for now in [handOver, Self.leadDue.addingTimeInterval(-0.001)] {
            let held = listing(&state, "r", all: false, at: now)
            #expect(held?.state == .pending, "listed without --all: pending")
            #expect(held?.nextFireAt == Self.leadDue)
            #expect(held?.armed == true)
            #expect(held?.deliveredCount == 0)
            #expect(held?.lastFiredAt == nil)
            let report = statusReport(&state, at: now)
            #expect(report?.reminders == ["pending": 1, "delivered": 0, "disabled": 0, "finished": 0, "suppressed": 0, "undelivered": 0])
            #expect(report?.nextFireAt == Self.leadDue)
            #expect(metricsCounts(state, at: now) == ["pending": 1, "delivered": 0, "disabled": 0, "finished": 0, "suppressed": 0, "undelivered": 0])
        }

        // From the due instant on it has fired (the worker delivers it then).
        #expect(listing(&state, "r", all: false, at: Self.leadDue) == nil)
        let fired = listing(&state, "r", at: Self.leadDue)
        #expect(fired?.state == .delivered)
        #expect(fired?.nextFireAt == nil)
        #expect(fired?.armed == nil)
        let report = statusReport(&state, at: Self.leadDue)
        #expect(report?.reminders == ["pending": 0, "delivered": 1, "disabled": 0, "finished": 0, "suppressed": 0, "undelivered": 0])
        #expect(report?.nextFireAt == nil)
        #expect(metricsCounts(state, at: Self.leadDue) == ["pending": 0, "delivered": 1, "disabled": 0, "finished": 0, "suppressed": 0, "undelivered": 0])
    }

    @Test func aRepeatingReminderHandedOverAheadShowsTheHeldOccurrenceNext() {
        var state = makeState { configuration in
            configuration.dispatchLead = 0.2
            configuration.leaseDuration = 10
        }
        request(&state, .schedule([reminder("m", at: Self.leadDue, repeatRule: RepeatRule(unit: .minute, interval: 1))]))
        let handed = firings(state.onTick(now: Self.leadDue.addingTimeInterval(-0.2)))
        #expect(handed.map(\.dueAt) == [Self.leadDue])

        let held = listing(&state, "m", at: Self.leadDue.addingTimeInterval(-0.1))
        #expect(held?.state == .pending)
        #expect(held?.nextFireAt == Self.leadDue, "not the following occurrence, \(Self.leadDue.addingTimeInterval(60))")
        #expect(held?.armed == true)
        #expect(statusReport(&state, at: Self.leadDue.addingTimeInterval(-0.1))?.nextFireAt == Self.leadDue)

        let after = listing(&state, "m", at: Self.leadDue)
        #expect(after?.state == .pending)
        #expect(after?.nextFireAt == Self.leadDue.addingTimeInterval(60))
        #expect(statusReport(&state, at: Self.leadDue)?.nextFireAt == Self.leadDue.addingTimeInterval(60))

        // Acknowledged at its due instant: counted delivered once, then the next occurrence.
        _ = ack(&state, handed, by: "w1", at: Self.leadDue)
        let acknowledged = listing(&state, "m", at: Self.leadDue)
        #expect(acknowledged?.deliveredCount == 1)
        #expect(acknowledged?.lastFiredAt == Self.leadDue)
        #expect(acknowledged?.nextFireAt == Self.leadDue.addingTimeInterval(60))
    }

    @Test func aFiringMadeAheadAndWaitingForAWorkerIsNotInTheDueBacklog() {
        var state = makeState(workers: []) { configuration in
            configuration.dispatchLead = 0.2
            configuration.leaseDuration = 10
        }
        request(&state, .schedule([reminder("r", at: Self.leadDue)]))
        #expect(firings(state.onTick(now: Self.leadDue.addingTimeInterval(-0.2))).isEmpty, "no worker")
        #expect(state.waitingCount == 1)

        func stats(at now: Date) -> StatsReport? {
            let (outcome, _) = request(&state, .stats, at: now)
            guard case .stats(let stats) = outcome else { return nil }
            return stats
        }
        let early = stats(at: Self.leadDue.addingTimeInterval(-0.1))
        #expect(early?.dueBacklog == 0)
        #expect(early?.oldestUndeliveredAgeSeconds == 0)
        #expect(state.metrics(at: Self.leadDue.addingTimeInterval(-0.1)).dueBacklog == 0)
        #expect(listing(&state, "r", all: false, at: Self.leadDue.addingTimeInterval(-0.1))?.state == .pending)

        let late = stats(at: Self.leadDue.addingTimeInterval(0.5))
        #expect(late?.dueBacklog == 1)
        #expect(late?.oldestUndeliveredAgeSeconds == 0.5)
        #expect(state.metrics(at: Self.leadDue.addingTimeInterval(0.5)).dueBacklog == 1)
    }

    @Test func aStateRestoredFromASnapshotReadsAHeldFiringAsPending() throws {
        var active = makeLeadState()
        _ = active.onTick(now: Self.leadDue.addingTimeInterval(-0.2))
        let snapshot = active.encodedSnapshot(at: Self.leadDue.addingTimeInterval(-0.2))
        var restored = makeState { configuration in
            configuration.dispatchLead = 0.2
            configuration.leaseDuration = 10
        }
        try restored.load(snapshot: snapshot)
        restored.finishRecovery(at: Self.leadDue.addingTimeInterval(-0.1))
        let held = listing(&restored, "r", all: false, at: Self.leadDue.addingTimeInterval(-0.1))
        #expect(held?.state == .pending)
        #expect(held?.nextFireAt == Self.leadDue)
        #expect(statusReport(&restored, at: Self.leadDue.addingTimeInterval(-0.1))?.reminders["pending"] == 1)
        // The snapshot's superset of held firings is filtered on the due instant.
        #expect(listing(&restored, "r", at: Self.leadDue)?.state == .delivered)
        #expect(statusReport(&restored, at: Self.leadDue)?.reminders["delivered"] == 1)
    }

    @Test func withoutALeadAFiredOneShotReadsDeliveredAtOnce() {
        var state = makeState { $0.dispatchLead = 0 }
        request(&state, .schedule([reminder("r", at: Self.leadDue)]))
        #expect(firings(state.onTick(now: Self.leadDue)).count == 1)
        #expect(listing(&state, "r", at: Self.leadDue)?.state == .delivered)
        #expect(statusReport(&state, at: Self.leadDue)?.reminders["pending"] == 0)
    }
}
