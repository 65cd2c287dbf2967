import ChimeCore
import Foundation

/// Reminders in their recipient's zone: a floating trigger whose `timeZone` is `"recipient"`
/// follows the zone the recipient registered (UTC until it registers one), and moves when
/// the recipient registers another; absolute reminders never move.
extension CoordinatorState {
    /// The `timeZone` value that means "the recipient's zone".
    static let recipientZone = "recipient"

    /// `reminder` with `"recipient"` replaced by its recipient's registered zone.
    func resolvingRecipientZone(_ reminder: Reminder) -> Reminder {
        guard case .wallClock(let local, Self.recipientZone) = reminder.trigger.start else { return reminder }
        var resolved = reminder
        resolved.trigger.start = .wallClock(local, zoneIdentifier: recipients[reminder.recipient]?.zone ?? "UTC")
        return resolved
    }

    /// Validates a reminder (with its recipient's zone) and builds its occurrences.
    /// - Throws: `ValidationError` naming the first offending field.
    func validate(_ reminder: Reminder, maximumUserInfoBytes: Int) throws(ValidationError) -> Recurrence {
        try resolvingRecipientZone(reminder).validate(maximumUserInfoBytes: maximumUserInfoBytes)
    }

    /// After `recipient` registered a new zone: rebuilds its recipient-zone reminders and
    /// re-arms them from `now`. A pending one-shot keeps its only occurrence wherever the new
    /// zone puts it, as when it is scheduled: moved into the past, it fires at once.
    mutating func followZoneChange(of recipient: RecipientID, at now: Date) {
        for (id, entry) in entries where entry.recipient == recipient {
            let reminder = entry.reminder
            guard case .wallClock(_, Self.recipientZone) = reminder.trigger.start,
                let recurrence = try? validate(reminder, maximumUserInfoBytes: Int.max)
            else { continue }
            var moved = entry
            if reminder.trigger.isRepeating { recurrences[id] = recurrence }
            if moved.state == .pending {
                if reminder.trigger.isRepeating {
                    moved.next = firstFiring(of: reminder, in: recurrence, onOrAfter: now)
                } else {
                    moved.next = recurrence.occurrence(at: 0).map { Occurrence(index: 0, instant: $0) }
                }
                if let next = moved.next {
                    arm(id, of: recipient, at: fireInstant(of: reminder, next))
                } else {
                    disarm(id, of: recipient)
                }
            }
            entries[id] = moved
        }
    }
}
