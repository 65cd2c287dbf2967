import ChimeCore
import ChimeWire

/// A recipient's slot moving to another shard, as a newer map shows it: what
/// `subscribe --recipient` prints as its hand-over line (issue 42), since a recipient's
/// subscription does not receive the shards' `handover` events.
public struct RecipientHandOver: Hashable, Sendable, Encodable {
    /// The recipient followed.
    public var recipient: RecipientID
    /// Its slot.
    public var slot: Int
    /// The shard that owned the slot.
    public var shard: Int
    /// The shard that owns it now.
    public var target: Int
    /// The epoch of the map that shows the new owner.
    public var mapEpoch: UInt64

    /// Creates the value from its fields (see each property for meaning).
    public init(recipient: RecipientID, slot: Int, shard: Int, target: Int, mapEpoch: UInt64) {
        self.recipient = recipient
        self.slot = slot
        self.shard = shard
        self.target = target
        self.mapEpoch = mapEpoch
    }

    /// The hand-over of `recipient` between `older` and `newer`, or `nil` when its owner did
    /// not change (or either map names none, or `newer` is not newer).
    public static func between(_ older: ShardMap, _ newer: ShardMap, of recipient: RecipientID) -> RecipientHandOver? {
        guard newer.mapEpoch > older.mapEpoch, let from = older.shard(of: recipient), let to = newer.shard(of: recipient),
            from.id != to.id
        else { return nil }
        return RecipientHandOver(recipient: recipient, slot: newer.slot(of: recipient), shard: from.id, target: to.id, mapEpoch: newer.mapEpoch)
    }

    /// `hand-over: alice's slot 812 moved from shard 0 to shard 1 (map epoch 3)`.
    public var line: String {
        "hand-over: \(recipient.rawValue)'s slot \(slot) moved from shard \(shard) to shard \(target) (map epoch \(mapEpoch))"
    }

    private enum CodingKeys: String, CodingKey {
        case type, recipient, slot, shard, target, mapEpoch
    }

    /// Encodes `{"type": "handover", "recipient", "slot", "shard", "target", "mapEpoch"}` (the
    /// `--json` line).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("handover", forKey: .type)
        try container.encode(recipient, forKey: .recipient)
        try container.encode(slot, forKey: .slot)
        try container.encode(shard, forKey: .shard)
        try container.encode(target, forKey: .target)
        try container.encode(mapEpoch, forKey: .mapEpoch)
    }
}
