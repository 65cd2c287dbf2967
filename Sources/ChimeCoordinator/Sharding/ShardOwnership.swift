import ChimeCore
import ChimeJournal
import ChimeWire

/// Which slots this coordinator's shard owns, as a table: the owner of a recipient is one
/// CRC-32C and one array read, whatever the map's number of shards and ranges.
struct ShardOwnership: Sendable {
    /// The cluster's map (`nil`: one shard owning every slot).
    let map: ShardMap?
    /// This coordinator's shard id.
    let shardID: Int
    /// Whether this shard owns every slot (one shard): no recipient is ever refused, and
    /// nothing is hashed.
    let ownsEverySlot: Bool
    /// The owning shard id of each slot.
    private let owners: [Int32]

    init(map: ShardMap?, shardID: Int) {
        self.map = map
        self.shardID = shardID
        guard let map, map.shards.contains(where: { $0.id != shardID }) else {
            ownsEverySlot = true
            owners = []
            return
        }
        var owners = [Int32](repeating: -1, count: max(1, map.slotCount))
        for shard in map.shards {
            for range in shard.slots where range.first >= 0 && range.first <= range.last && range.last < owners.count {
                for slot in range.first...range.last { owners[slot] = Int32(clamping: shard.id) }
            }
        }
        self.owners = owners
        ownsEverySlot = !owners.contains { Int($0) != shardID }
    }

    /// The shard that owns `recipient`'s slot: this one when it owns every slot; `nil` for a
    /// slot no shard owns (a map that did not validate).
    func owner(of recipient: RecipientID) -> Int? {
        guard !ownsEverySlot, let map else { return shardID }
        let owner = owners[map.slot(of: recipient)]
        return owner < 0 ? nil : Int(owner)
    }

    /// `wrong_shard` for `recipient` when another shard owns its slot, naming the owner, its
    /// control endpoint and the map epoch; `nil` when this shard owns it.
    func refusal(of recipient: RecipientID, field: String) -> WireError? {
        guard !ownsEverySlot, let map else { return nil }
        let slot = map.slot(of: recipient)
        let owner = owners[slot]
        guard Int(owner) != shardID else { return nil }
        guard owner >= 0, let shard = map.shard(id: Int(owner)) else {
            var error = WireError(.wrongShard, "no shard owns slot \(slot) of recipient \(recipient.rawValue) in map epoch \(map.mapEpoch)", field: field)
            error.mapEpoch = map.mapEpoch
            return error
        }
        var error = WireError(
            .wrongShard,
            "recipient \(recipient.rawValue) is on slot \(slot), owned by shard \(shard.id) at \(shard.endpoints.control) (map epoch \(map.mapEpoch)); this is shard \(shardID)",
            field: field)
        error.shard = shard.id
        error.mapEpoch = map.mapEpoch
        return error
    }
}
