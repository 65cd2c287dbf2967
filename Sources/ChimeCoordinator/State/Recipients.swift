import ChimeCore
import Foundation

/// Registered recipients (settings, categories, zone, token, `maxPending`), their badge
/// numbers and delivered lists, and the sequence of the badge events the coordinator
/// publishes. A part of `DurableState`, changed only by its fold.
struct Recipients: Sendable, Equatable {
    /// Registered recipients by id; changed through ``store(_:)``, which keeps
    /// `holdingDestinations` in step.
    private(set) var registered: [RecipientID: Recipient] = [:]
    /// The registered recipients with at least one delivery destination: while it is empty,
    /// dispatch looks nothing up (the hot path of recipients without destinations).
    private(set) var holdingDestinations: Set<RecipientID> = []
    /// Badge numbers and delivered lists, for every recipient that has one.
    var ledgers: [RecipientID: BadgeLedger] = [:]
    /// The `seq` of the last badge event: each change of a badge number takes the next one,
    /// so a subscriber can order badge events across restarts.
    var badgeEventSeq: UInt64 = 0
    /// For each recipient with a throttle (and only those), the delivery instants (UTC)
    /// given to its latest throttled firings, ascending, at most its throttle's count: what
    /// `DeliveryThrottle.slot(for:after:)` reads.
    var throttleSlots: [RecipientID: [Date]] = [:]
    /// The bytes of the registrations of each tracked tenant scope (``TenantUsage``, `reminders`
    /// 0; none until a restricted key with a quota registers or schedules).
    @Derived var tenants = TenantUsage()

    /// Records `slot` as `recipient`'s latest delivery instant when it is throttled.
    mutating func noteDelivery(of recipient: RecipientID, at slot: Date) {
        guard !throttleSlots.isEmpty, var slots = throttleSlots[recipient],
            let count = registered[recipient]?.throttle?.count
        else { return }
        // Slots are handed out in order; a later one never precedes the last (kept ascending).
        slots.append(max(slot, slots.last ?? slot))
        if slots.count > count { slots.removeFirst(slots.count - count) }
        throttleSlots[recipient] = slots
    }

    /// Registers (or replaces) `recipient`.
    mutating func store(_ recipient: Recipient) {
        let previous = registered.updateValue(recipient, forKey: recipient.id)
        if !tenants.isEmpty { tenants.replace(registration: previous, with: recipient) }
        if recipient.destinations?.isEmpty ?? true {
            holdingDestinations.remove(recipient.id)
        } else {
            holdingDestinations.insert(recipient.id)
        }
    }

    /// The destinations of `recipient` (`nil`: none), in O(1) when nobody holds any.
    func destinations(of recipient: RecipientID) -> [Destination]? {
        guard !holdingDestinations.isEmpty, holdingDestinations.contains(recipient) else { return nil }
        return registered[recipient]?.destinations
    }

    /// The recipient a firing id belongs to, from its delivered lists (the ledger that lists it).
    func recipient(delivering firingId: FiringID) -> RecipientID? {
        ledgers.first { $0.value.isDelivered(firingId.nagBase) }?.key
    }

    /// Applies a change to `recipient`'s ledger and numbers the badge event it makes.
    /// - Returns: the update, with the event's `seq` when the number changed.
    mutating func changeLedger(of recipient: RecipientID, _ change: (inout BadgeLedger) -> BadgeUpdate) -> NumberedBadgeUpdate {
        let update = change(&ledgers[recipient, default: BadgeLedger()])
        guard update.isChanged else { return NumberedBadgeUpdate(update: update, seq: nil) }
        badgeEventSeq = badgeEventSeq.saturatingAdding(1)
        return NumberedBadgeUpdate(update: update, seq: badgeEventSeq)
    }
}

/// A badge update with the `seq` of the event that announces it (`nil` when the number did
/// not change, so no event is published).
public struct NumberedBadgeUpdate: Sendable, Equatable {
    /// The badge number after the change and whether it changed.
    public var update: BadgeUpdate
    /// The badge event's sequence number (`nil`: nothing to publish).
    public var seq: UInt64?
}
