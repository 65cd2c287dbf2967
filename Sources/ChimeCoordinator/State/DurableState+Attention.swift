import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

extension DurableState {
    /// When a firing of `content` (its level as delivered, after grants) for `recipient`,
    /// delivered at `instant` (UTC), is released from quiet hours, or `nil` to deliver it now
    /// (outside every window, a level that breaks through, or a category or filter criteria
    /// the recipient lets through). Costs one comparison when no recipient is registered or
    /// the level breaks through.
    func quietRelease(of content: Content, for recipient: RecipientID, at instant: Date) -> Date? {
        guard !recipients.registered.isEmpty, !content.interruptionLevel.breaksThroughQuietHours,
            let registration = recipients.registered[recipient], !registration.quietHours.isEmpty
        else { return nil }
        return registration.quietRelease(of: instant, content: content)
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
        case .held(let id, let dueAt, let next, let late, let missed, let until, let reason, let at):
            guard var entry = schedule.entries[id] else { return nil }
            let firing = makeFiring(of: entry, reminder: entry.reminder, dueAt: dueAt, late: late, missed: missed)
            recipients.noteDelivery(of: id.recipient, content: firing.content, at: until, now: at)
            deliveries.hold(firing, until: until, reason: reason)
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
            let groups = recipients.throttleSlots[recipient], let throttle = recipients.registered[recipient]?.throttle
        else { return nil }
        return throttle.slot(for: planned, after: groups[throttle.group(of: content)] ?? [])
    }

    /// The firing of `key` held for the throttle, if any (the earliest by firing id when
    /// several are): what a `throttled: coalesce` occurrence is coalesced into. One look-up
    /// (``Deliveries/throttleHeld``).
    func throttleHeldFiring(of key: ReminderKey) -> FiringID? {
        deliveries.throttleHeld[key]?.min()
    }

    /// After `recipient` re-registered with another zone, other quiet hours, summary times or
    /// break-through at `at` (UTC), each of its held firings is decided again from `at` as the
    /// dispatch decides a due one: held to the end of the new quiet window `at` falls in
    /// (unless its content now breaks through), then, if it waited for a summary, to the next
    /// summary time on the new clock; with neither, released at `at` (the next tick delivers
    /// it). A firing held by the throttle keeps its slot (slots are instants, not wall-clock
    /// times) and its reason, unless a new quiet window holds it longer. Holds journaled
    /// without a reason are decided as a due firing is.
    mutating func retimeHolds(of recipient: RecipientID, at: Date) {
        guard !deliveries.heldFirings.isEmpty else { return }
        let registration = recipients.registered[recipient]
        deliveries.retime(heldFor: recipient) { firing, reason, slot in
            // Held firings are passive or active (a level not granted is delivered as active).
            var content = firing.content
            if content.interruptionLevel.breaksThroughQuietHours { content.interruptionLevel = .active }
            let quiet = registration?.quietRelease(of: at, content: content)
            // A throttled firing never leaves before its slot: a longer quiet window only moves
            // it later, and it keeps its reason, so a later change cannot bring it forward.
            if reason == .throttle {
                guard let quiet, quiet > slot else { return nil }
                return (quiet, .throttle)
            }
            if let summary = registration?.summaryRelease(of: quiet ?? at, level: content.interruptionLevel), summary > at {
                return (summary, quiet == nil ? .summary : .quietHoursThenSummary)
            }
            return quiet.map { ($0, .quietHours) } ?? (at, reason)
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
