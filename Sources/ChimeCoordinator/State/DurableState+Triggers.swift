import ChimeCore
import ChimeJournal
import Foundation

/// The fold of `JournalEntry.trigger` (issue 41): part of ``DurableState/apply(_:hints:)``, so
/// live operation and recovery change the state the same way.
extension DurableState {
    /// Folds one trigger fact; returns the firings it made unsettled (which wait for a worker).
    mutating func applyTrigger(_ fact: TriggerEntry) -> [SharedFiring] {
        switch fact {
        case .firedNow(let key, let dueAt, _):
            return makeOperatorFirings(of: key, dueAts: [dueAt])
        case .backfilled(let key, let from, let through, let dueAts, _):
            guard schedule.entries[key] != nil else { return [] }
            triggers.cover(from: from, through: through, of: key)
            return makeOperatorFirings(of: key, dueAts: dueAts)
        case .remainingSet(let key, let count, let at):
            guard var entry = schedule.entries[key] else { return [] }
            triggers.remaining[key] = count
            if count == 0 {
                advance(&entry, key, to: nil, endingAs: .finished)
            } else if count != nil, entry.state == .finished, entry.isRepeating {
                // A count that finished it gives way to a new one: the series goes on from now.
                let reminder = entry.reminder
                if let next = recurrence(of: reminder).flatMap({ firstFiring(of: reminder, in: $0, onOrAfter: at) }) {
                    entry.state = reminder.enabled ? .pending : .disabled
                    entry.next = next
                    if entry.state == .pending {
                        schedule.arm(key, of: entry.recipient, at: entry.fireInstant(of: next), limit: pendingLimit(for: entry.recipient))
                    }
                }
            }
            schedule.entries[key] = entry
            return []
        case .noted(let keys, let note, _):
            for key in keys where schedule.entries[key] != nil { triggers.notes[key] = note }
            return []
        case .calendarSet(let name, let calendar, let at):
            setCalendar(name, to: calendar, at: at)
            return []
        case .located(let recipient, let report, let at):
            return applyLocated(recipient, report, at: at)
        }
    }

    /// Files a placed reminder that names calendars, follows the sun or a region in the
    /// trigger indexes; a region starts determined from its recipient's last location.
    mutating func trackBeyondTheClock(_ reminder: Reminder) {
        triggers.track(reminder.key, reminder.trigger)
        if let region = reminder.trigger.region { determineRegion(reminder.key, region) }
    }

    /// Counts one occurrence the schedule moved past (fired, skipped or suppressed) against
    /// the reminder's remaining count, if it has one.
    mutating func countOccurrence(of key: ReminderKey) {
        guard !triggers.remaining.isEmpty, let left = triggers.remaining[key] else { return }
        triggers.remaining[key] = max(0, left - 1)
    }

    /// Firings of `key` at `dueAts` made by an operator (trigger now, backfill): the schedule
    /// does not move; a firing of an id already unsettled is not made twice.
    private mutating func makeOperatorFirings(of key: ReminderKey, dueAts: [Date]) -> [SharedFiring] {
        guard let entry = schedule.entries[key] else { return [] }
        let reminder = entry.reminder
        var made: [SharedFiring] = []
        for dueAt in dueAts {
            let shared = SharedFiring(makeFiring(of: entry, reminder: reminder, dueAt: dueAt, late: false, missed: 0))
            let firingId = shared.firing.firingId
            guard deliveries.unsettled[firingId] == nil else { continue }
            deliveries.unsettled[firingId] = shared
            made.append(shared)
        }
        return made
    }

    /// Whether Chime still knows a firing of this id: unsettled, dead-lettered, in its
    /// recipient's delivered list or in the event log.
    func knowsFiring(_ firingId: FiringID) -> Bool {
        if deliveries.unsettled[firingId] != nil || deliveries.deadLetters[firingId] != nil { return true }
        if recipients.ledgers[firingId.recipient]?.delivered.contains(where: { $0.firingId == firingId }) ?? false { return true }
        return deliveries.eventLog.events.contains { $0.firing.firingId == firingId }
    }
}
