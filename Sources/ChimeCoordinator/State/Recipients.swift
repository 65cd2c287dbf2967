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
    /// The registered recipients that opted out of a channel for some category
    /// (``ChannelOptOuts/hasCategoryEntries``): while it is empty, dispatch looks up no
    /// registration per firing for its own destination list.
    private(set) var optingOutByCategory: Set<RecipientID> = []
    /// Badge numbers and delivered lists, for every recipient that has one.
    var ledgers: [RecipientID: BadgeLedger] = [:]
    /// The `seq` of the last badge event: each change of a badge number takes the next one,
    /// so a subscriber can order badge events across restarts.
    var badgeEventSeq: UInt64 = 0
    /// For each recipient with a throttle (and only those), by allowance (`""`: the
    /// recipient's; else a category or thread, `DeliveryThrottle.group(of:)`), the delivery
    /// instants (UTC) given to its latest throttled firings, ascending, at most its throttle's
    /// count: what `DeliveryThrottle.slot(for:after:)` reads. At most
    /// `DeliveryThrottle.maximumGroups` allowances per recipient.
    var throttleSlots: [RecipientID: [String: [Date]]] = [:]
    /// The bytes of the registrations and delivered lists of each tracked tenant scope
    /// (``TenantUsage``, `reminders` 0; none until a restricted key with a quota registers or
    /// schedules).
    @Derived var tenants = TenantUsage()

    /// Records `slot` as the latest delivery instant of the allowance a firing of `content`
    /// counts against, when `recipient` is throttled; `now` is the entry's instant (UTC).
    mutating func noteDelivery(of recipient: RecipientID, content: Content, at slot: Date, now: Date) {
        guard !throttleSlots.isEmpty, throttleSlots[recipient] != nil, let throttle = registered[recipient]?.throttle else { return }
        Self.note(slot, in: &throttleSlots[recipient, default: [:]], group: throttle.group(of: content), throttle: throttle, now: now)
    }

    /// Appends `slot` to `group`'s slots in `groups` (in place), keeping the last `count`; past
    /// `DeliveryThrottle.maximumGroups` allowances, drops those whose last slot is a stretch
    /// or more before `now` (they limit nothing any more; `slot` may lie hours ahead, at a
    /// quiet window's end), then the ones delivered to longest ago (ties by name), never `group`.
    private static func note(_ slot: Date, in groups: inout [String: [Date]], group: String, throttle: DeliveryThrottle, now: Date) {
        // Slots are handed out in order; a later one never precedes the last (kept ascending).
        groups[group, default: []].append(max(slot, groups[group]?.last ?? slot))
        if let count = groups[group]?.count, count > throttle.count { groups[group]?.removeFirst(count - throttle.count) }
        guard groups.count > DeliveryThrottle.maximumGroups else { return }
        let horizon = now.addingTimeInterval(-throttle.seconds)
        groups = groups.filter { $0.key == group || ($0.value.last ?? .distantPast) > horizon }
        while groups.count > DeliveryThrottle.maximumGroups {
            let oldest = groups.filter { $0.key != group }.min { ($0.value.last ?? .distantPast, $0.key) < ($1.value.last ?? .distantPast, $1.key) }
            guard let oldest else { return }
            groups[oldest.key] = nil
        }
    }

    /// Registers (or replaces) `recipient`.
    mutating func store(_ recipient: Recipient) {
        let previous = registered.updateValue(recipient, forKey: recipient.id)
        if !tenants.isEmpty { tenants.replace(registration: previous, with: recipient) }
        if recipient.optedOutChannels?.hasCategoryEntries ?? false {
            optingOutByCategory.insert(recipient.id)
        } else {
            optingOutByCategory.remove(recipient.id)
        }
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

    /// Applies a change to `recipient`'s ledger and numbers the badge event it makes. A tracked
    /// tenant scope that allows `recipient` counts the change in its delivered list's bytes
    /// (``BadgeLedger/storedBytes``).
    /// - Returns: the update, with the event's `seq` when the number changed.
    mutating func changeLedger(of recipient: RecipientID, _ change: (inout BadgeLedger) -> BadgeUpdate) -> NumberedBadgeUpdate {
        let before = tenants.isEmpty ? 0 : ledgers[recipient]?.storedBytes ?? 0
        let update = change(&ledgers[recipient, default: BadgeLedger()])
        if !tenants.isEmpty, let after = ledgers[recipient]?.storedBytes, after != before {
            tenants.add(reminders: 0, bytes: after - before, of: recipient)
        }
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
