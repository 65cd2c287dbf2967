import ChimeCore
import ChimeWire
import Foundation

/// A recipient's delivery destinations: added and removed by the `destinations` request, and
/// removed when a worker reports that a provider called one gone (HTTP 410, APNs
/// `Unregistered`, FCM `UNREGISTERED`). Both journal the recipient's new registration
/// (`.registered`), so replay, snapshots and slot moves carry them as every recipient fact.
extension CoordinatorState {
    /// Adds `add` (a destination with the key of one held replaces it) and removes the keys in
    /// `remove`, keeping the rest of the registration; an unregistered recipient is registered
    /// with the defaults.
    /// - Returns: the recipient, redacted; `not_found` naming a key in `remove` the recipient
    ///   does not hold; `invalid_argument` for a destination that does not validate or a list
    ///   over ``Destination/maximumPerRecipient``; `quota_exceeded`, field `add`, when the
    ///   registration would grow past `client`'s byte quota (as `register`).
    mutating func changeDestinations(
        of id: RecipientID, add: [Destination], remove: [String], for client: ClientAddress?, at now: Date,
        directives: inout [CoordinatorDirective]
    ) -> ControlOutcome {
        var recipient = recipients[id] ?? Recipient(id: id)
        var destinations = recipient.destinations ?? []
        for (index, key) in remove.enumerated() {
            guard let position = destinations.firstIndex(where: { $0.key == key }) else {
                return .failed(WireError(.notFound, "recipient \(id) has no destination \(key)", field: "remove[\(index)]"))
            }
            destinations.remove(at: position)
        }
        for destination in add {
            if let position = destinations.firstIndex(where: { $0.key == destination.key }) {
                destinations[position] = destination
            } else {
                destinations.append(destination)
            }
        }
        // Empty, not nil: `register` keeps the held destinations for a nil list.
        recipient.destinations = destinations
        return register(recipient, for: client, quotaField: "add", at: now, directives: &directives)
    }

    /// Why adding `add` to `id` (and removing `remove`) would take the caller's recipients past
    /// its key's destination quota (`limits.tenantMaxDestinations`, this shard's allotment of it:
    /// ``QuotaAllotment``), or `nil` when it would not
    /// or the caller has none (no recipient restriction). Counts the destinations of the
    /// registered recipients the key's scope allows: O(registered recipients), for a request
    /// that is rare next to schedules.
    /// - Returns: `quota_exceeded`, field `add`.
    func destinationQuotaRefusal(of id: RecipientID, adding add: [Destination], removing remove: [String], for client: ClientAddress?) -> WireError? {
        guard let scope = client?.scope, let whole = configuration.tenantMaxDestinations, !add.isEmpty else { return nil }
        // Split among the shards as the other quotas are (QuotaAllotment).
        let limit = QuotaAllotment.allotment(of: whole, for: scope, under: shardView.ownership)
        var held = 0
        for (other, recipient) in recipients where other != id && scope.allows(other) { held += recipient.destinations?.count ?? 0 }
        var own = Set((recipients[id]?.destinations ?? []).map(\.key))
        own.subtract(remove)
        own.formUnion(add.map(\.key))
        guard held + own.count > limit else { return nil }
        return WireError(
            .quotaExceeded,
            "this key's recipients (\(scope.summary)) would hold \(held + own.count) destinations, past \(limit == whole ? "the quota of \(limit)" : "this shard's allotment of \(limit) of the quota of \(whole)") (limits.tenantMaxDestinations)",
            field: "add")
    }

    /// Removes the destinations `report` calls gone (`removed` outcomes), matched by their
    /// masked key (reports never carry a token in full).
    mutating func removeGoneDestinations(
        in report: DeliveryReport, of id: RecipientID, at now: Date, directives: inout [CoordinatorDirective]
    ) {
        for outcome in report.outcomes where outcome.outcome == .removed {
            guard let destination = recipients[id]?.destinations?.first(where: { $0.redactedKey == outcome.destination }) else { continue }
            removeGoneDestination(destination.key, of: id, reason: outcome.reason ?? "gone", at: now, directives: &directives)
        }
    }

    /// Removes the destination `key` of `id` because a provider said it no longer exists,
    /// and publishes a `destinationRemoved` event saying so. Does nothing when the recipient
    /// no longer holds it (a second worker reporting the same token, or an earlier removal).
    mutating func removeGoneDestination(
        _ key: String, of id: RecipientID, reason: String, at now: Date, directives: inout [CoordinatorDirective]
    ) {
        guard var recipient = recipients[id], var destinations = recipient.destinations,
            let position = destinations.firstIndex(where: { $0.key == key })
        else { return }
        let removed = destinations.remove(at: position)
        recipient.destinations = destinations.isEmpty ? nil : destinations
        record(.registered(recipient, at: now), into: &directives)
        var event = DestinationRemovedEvent(recipient: id, destination: removed.redactedKey, reason: reason, at: now)
        event.shard = configuration.eventShard
        directives.append(.publish(.destinationRemoved(event)))
    }
}
