import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

extension DurableState {
    /// When a firing of `content` (its level as delivered, after grants) for `recipient`,
    /// delivered at `instant` (UTC), is released from quiet hours, or `nil` to deliver it now.
    /// Costs one comparison when no recipient is registered or the level breaks through.
    func quietRelease(of content: Content, for recipient: RecipientID, at instant: Date) -> Date? {
        guard !recipients.registered.isEmpty, !content.interruptionLevel.breaksThroughQuietHours,
            let registration = recipients.registered[recipient], !registration.quietHours.isEmpty
        else { return nil }
        return registration.quietRelease(of: instant, level: content.interruptionLevel)
    }

    /// Whether `reminder` has a firing on its recipient's delivered list, not yet handled (what
    /// `unhandled: skip` asks before delivering another). O(the recipient's delivered list).
    func hasUnhandled(_ reminder: Reminder) -> Bool {
        recipients.ledgers[reminder.recipient]?.lists(reminder: reminder.id) ?? false
    }

    /// The fold of an ``AttentionEntry``.
    /// - Returns: the firing a `.released` made unsettled, to put in the waiting line.
    mutating func applyAttention(_ fact: AttentionEntry) -> SharedFiring? {
        switch fact {
        case .held(let id, let dueAt, let next, let late, let missed, let until, _):
            guard var entry = schedule.entries[id] else { return nil }
            recipients.noteDelivery(of: id.recipient, at: until)
            deliveries.hold(makeFiring(of: entry, reminder: entry.reminder, dueAt: dueAt, late: late, missed: missed), until: until)
            if late {
                schedule.lateFirings[id, default: 0].saturatingIncrement()
            } else if !schedule.lateFirings.isEmpty {
                schedule.lateFirings[id] = nil
            }
            countOccurrence(of: id)
            advance(&entry, id, to: next, endingAs: .delivered)
            schedule.entries[id] = entry
            return nil
        case .released(let firingId, _):
            return deliveries.release(firingId)
        }
    }

    /// When a firing of `content` for `recipient`, to be delivered at `planned` (UTC), goes out
    /// in the recipient's next scheduled summary; `nil` without summary times.
    func summaryRelease(of content: Content, for recipient: RecipientID, at planned: Date) -> Date? {
        guard !recipients.registered.isEmpty, !content.interruptionLevel.breaksThroughQuietHours,
            let registration = recipients.registered[recipient], !registration.summaryTimes.isEmpty
        else { return nil }
        return registration.summaryRelease(of: planned, level: content.interruptionLevel)
    }

    /// Whether `recipient` has scheduled summaries (its releases are announced as one).
    func hasSummaries(_ recipient: RecipientID) -> Bool {
        !(recipients.registered[recipient]?.summaryTimes.isEmpty ?? true)
    }

    /// When a firing of `content` for `recipient`, to be delivered at `planned` (UTC), may go
    /// under the recipient's throttle: `planned` or later; `nil` when the recipient has no
    /// throttle or the level breaks through. Costs one comparison when no recipient has one.
    func throttleSlot(of content: Content, for recipient: RecipientID, planned: Date) -> Date? {
        guard !recipients.throttleSlots.isEmpty, !content.interruptionLevel.breaksThroughQuietHours,
            let slots = recipients.throttleSlots[recipient], let throttle = recipients.registered[recipient]?.throttle
        else { return nil }
        return throttle.slot(for: planned, after: slots)
    }

    /// After `recipient` re-registered with another zone or other quiet hours at `at` (UTC):
    /// each of its held firings is released at the end of the new quiet window `at` falls in,
    /// or at `at` itself when it falls in none (the next tick delivers it).
    mutating func retimeHolds(of recipient: RecipientID, at: Date) {
        guard !deliveries.heldFirings.isEmpty else { return }
        let registration = recipients.registered[recipient]
        deliveries.retime(heldFor: recipient) { _ in
            registration?.quietRelease(of: at, level: .active) ?? at
        }
    }

    /// `key`'s firings held in quiet hours, by due instant, or `nil` when it has none. Free
    /// when nothing is held; O(held firings) otherwise.
    func heldListing(of key: ReminderKey) -> [HeldFiringListing]? {
        guard !deliveries.heldFirings.isEmpty else { return nil }
        let held = deliveries.heldFirings.keys.filter { $0.key == key }.sorted().compactMap { id in
            deliveries.holds.deadline(of: id).map { HeldFiringListing(firingId: id, until: $0) }
        }
        return held.isEmpty ? nil : held
    }

    /// How many firings are held in quiet hours.
    public var heldCount: Int { deliveries.heldFirings.count }
}
