import ChimeCore
import Foundation

/// The fold's changes to the schedule: placing a reminder, moving it on after an occurrence,
/// switching it, following its recipient's zone. Called only from `apply(_:hints:)`.
extension DurableState {
    /// Puts a validated reminder into the schedule at `now`, replacing any with the same id.
    ///
    /// A one-shot keeps its only occurrence even when it is past (it fires at once); a
    /// repeating reminder starts at its first occurrence firing at or after `now` (no burst of
    /// past occurrences).
    mutating func place(_ reminder: Reminder, recurrence: Recurrence, at now: Date) {
        let key = reminder.key
        schedule.remove(key)
        var next: Occurrence?
        var state = ReminderState.pending
        if !reminder.trigger.isRepeating, let only = recurrence.occurrence(at: 0) {
            next = Occurrence(index: 0, instant: only)
        } else {
            next = firstFiring(of: reminder, in: recurrence, onOrAfter: now)
        }
        if !reminder.enabled {
            state = .disabled
        } else if let next {
            schedule.arm(
                key, of: reminder.recipient, at: reminder.fireInstant(eventInstant: next.instant),
                limit: pendingLimit(for: reminder.recipient))
        } else {
            state = waitsWithoutTime(reminder) ? .pending : .finished
        }
        schedule.entries[key] = ReminderEntry(reminder: reminder, next: next, state: state)
        schedule.index.insert(key)
        if reminder.trigger.isRepeating { schedule.recurrences[key] = recurrence }
    }

    /// Moves a reminder on to `next` after one of its occurrences fired, was suppressed or
    /// skipped: arms it there, or ends it (`finished` when repeating, else `endingAs`).
    mutating func advance(_ entry: inout ReminderEntry, _ id: ReminderKey, to next: Occurrence?, endingAs end: ReminderState) {
        entry.next = next
        if let next {
            if entry.state == .pending {
                schedule.arm(id, of: entry.recipient, at: entry.fireInstant(of: next), limit: pendingLimit(for: entry.recipient))
            }
        } else {
            if entry.state == .pending { entry.state = entry.isRepeating ? .finished : end }
            schedule.disarm(id, of: entry.recipient)
        }
    }

    /// The switch (the fold of `.switched`). Enabling computes the next occurrence from `now`
    /// (no burst of missed ones); disabling keeps the record and disarms it.
    mutating func switchReminders(_ ids: [ReminderKey], _ enabled: Bool, at now: Date) {
        for id in Set(ids).sorted() {
            guard var entry = schedule.entries[id] else { continue }
            var reminder = entry.reminder
            guard reminder.enabled != enabled else { continue }
            reminder.enabled = enabled
            entry.reminder = reminder
            if enabled {
                entry.next = recurrence(of: reminder).flatMap { firstFiring(of: reminder, in: $0, onOrAfter: now) }
                if let next = entry.next {
                    entry.state = .pending
                    schedule.arm(
                        id, of: reminder.recipient, at: reminder.fireInstant(eventInstant: next.instant),
                        limit: pendingLimit(for: reminder.recipient))
                } else if waitsWithoutTime(reminder) {
                    entry.state = .pending
                } else {
                    entry.state = reminder.trigger.isRepeating ? .finished : .delivered
                }
            } else {
                entry.state = .disabled
                schedule.disarm(id, of: reminder.recipient)
            }
            schedule.entries[id] = entry
        }
    }

    /// After `recipient` registered a new zone: rebuilds its recipient-zone reminders and
    /// re-arms them from `now`. A pending one-shot keeps its only occurrence wherever the new
    /// zone puts it, as when it is scheduled: moved into the past, it fires at once.
    mutating func followZoneChange(of recipient: RecipientID, at now: Date) {
        // In id order, so arming under a cap happens in the same order however the table is kept.
        let ids = schedule.entries.filter { $0.value.recipient == recipient }.map(\.key).sorted()
        for id in ids {
            guard let entry = schedule.entries[id] else { continue }
            let reminder = entry.reminder
            guard case .wallClock(_, Self.recipientZone) = reminder.trigger.start,
                let recurrence = try? validate(reminder, maximumUserInfoBytes: Int.max)
            else { continue }
            var moved = entry
            if reminder.trigger.isRepeating { schedule.recurrences[id] = recurrence }
            if moved.state == .pending {
                if reminder.trigger.isRepeating {
                    moved.next = firstFiring(of: reminder, in: recurrence, onOrAfter: now)
                } else {
                    moved.next = recurrence.occurrence(at: 0).map { Occurrence(index: 0, instant: $0) }
                }
                if let next = moved.next {
                    schedule.arm(
                        id, of: recipient, at: reminder.fireInstant(eventInstant: next.instant),
                        limit: pendingLimit(for: recipient))
                } else {
                    schedule.disarm(id, of: recipient)
                }
            }
            schedule.entries[id] = moved
        }
    }
}
