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
        case .held(let id, let dueAt, let next, let late, let missed, let until, let reason, _):
            guard var entry = schedule.entries[id] else { return nil }
            recipients.noteDelivery(of: id.recipient, at: until)
            deliveries.hold(makeFiring(of: entry, reminder: entry.reminder, dueAt: dueAt, late: late, missed: missed), until: until, reason: reason)
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
    /// each of its held firings is released at the end of the new quiet window `at` falls in
    /// (held for quiet hours from then on), or at `at` itself when it falls in none (the next
    /// tick delivers it; its reason stays).
    mutating func retimeHolds(of recipient: RecipientID, at: Date) {
        guard !deliveries.heldFirings.isEmpty else { return }
        if let quiet = recipients.registered[recipient]?.quietRelease(of: at, level: .active) {
            deliveries.retime(heldFor: recipient, to: quiet, reason: .quietHours)
        } else {
            deliveries.retime(heldFor: recipient, to: at, reason: nil)
        }
    }

    /// The firings held (quiet hours, summaries, throttles) of each of `keys` that has some, each list in firing
    /// id order. Free when nothing is held; otherwise one pass over the held firings, so a
    /// `list` page asks once, not once per reminder.
    func heldListings(of keys: Set<ReminderKey>) -> [ReminderKey: [HeldFiringListing]] {
        guard !deliveries.heldFirings.isEmpty, !keys.isEmpty else { return [:] }
        var held: [ReminderKey: [HeldFiringListing]] = [:]
        for id in deliveries.heldFirings.keys where keys.contains(id.key) {
            guard let until = deliveries.holds.deadline(of: id) else { continue }
            held[id.key, default: []].append(HeldFiringListing(firingId: id, until: until, reason: deliveries.holdReasons[id]))
        }
        return held.mapValues { $0.sorted { $0.firingId < $1.firingId } }
    }

    /// How many firings are held (quiet hours, summaries, throttles).
    public var heldCount: Int { deliveries.heldFirings.count }
}
