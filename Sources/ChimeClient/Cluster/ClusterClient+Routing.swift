import ChimeCore
import ChimeWire

extension ClusterClient {
    /// Where a request for `recipient` goes while no map has been asked for: its owner's
    /// control endpoint in ``routingHint``, else the first seed.
    func endpointBeforeMap(for recipient: RecipientID?) -> String {
        guard let hint = routingHint, hint.shards.count > 1 else { return seeds[0] }
        let owner = recipient.flatMap { hint.shard(of: $0) } ?? hint.shards.first
        return owner?.endpoints.control ?? seeds[0]
    }

    /// Whether the recipients can go as one request without asking for the map: none asked
    /// for yet and at most one distinct recipient (``exchange(_:routing:)`` routes it).
    func isOneRequestWithoutMap(_ recipients: [RecipientID]) -> Bool {
        map == nil && Set(recipients).count <= 1
    }
}
