import ChimeCore
import Foundation

/// How reminders read while a firing is handed over ahead of its due instant
/// (`coordinator.dispatchLeadMilliseconds`).
///
/// The hand-over journals `.fired` and moves the reminder on (a one-shot `delivered`, a
/// repeating one at its following occurrence) up to the lead before the firing is due. Until
/// that instant nothing has fired, so every read path (`list`, the `status` counts and next
/// fire instant, `/metrics`) reports the reminder as it stands before its firing: `pending`,
/// next firing at the held firing's due instant, armed. Derived from the held-ahead index
/// (`Deliveries.ahead`) and the clock, never stored.
extension CoordinatorState {
    /// What `list` reports of one reminder at `now`.
    struct ReportedReminder: Equatable {
        /// The state it reads as (`pending` while one of its firings is held ahead).
        var state: ReminderState
        /// When it fires next (UTC), for a pending reminder with an occurrence left.
        var nextFireAt: Date?
        /// Whether it is armed, for a pending reminder.
        var armed: Bool?
    }

    /// How `entry` (the reminder of `key`) reads at `now`.
    func reported(_ key: ReminderKey, _ entry: Entry, at now: Date) -> ReportedReminder {
        let isPending = entry.state == .pending
        let scheduled = isPending ? entry.next.map { Self.fireInstant(of: entry, $0) } : nil
        guard let heldDue = durable.deliveries.earliestAhead(of: key, after: now) else {
            return ReportedReminder(
                state: entry.state, nextFireAt: scheduled, armed: isPending ? isArmed(key, of: entry.recipient) : nil)
        }
        // Its held firing comes first: the reminder moved on past it at the hand-over.
        return ReportedReminder(state: .pending, nextFireAt: min(heldDue, scheduled ?? heldDue), armed: true)
    }

    /// Reminder counts by state at `now`, each reminder with a firing held ahead counted
    /// `pending`. O(states + held-ahead reminders).
    func reportedStateCounts(at now: Date) -> [ReminderState: Int] {
        var counts = Dictionary(uniqueKeysWithValues: ReminderState.allCases.map { ($0, entries.stateCounts[$0] ?? 0) })
        for key in durable.deliveries.heldAhead(after: now).keys {
            guard let state = entries[key]?.state, state != .pending else { continue }
            counts[state, default: 0] -= 1
            counts[.pending, default: 0] += 1
        }
        return counts
    }

    /// The shard's next fire instant at `now` (UTC): the earliest of the armed occurrences and
    /// the firings held ahead.
    func reportedNextFireAt(at now: Date) -> Date? {
        let held = durable.deliveries.heldAhead(after: now).values.min()
        guard let armed = schedule.nextDeadline else { return held }
        return held.map { min($0, armed) } ?? armed
    }
}
