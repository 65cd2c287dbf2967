import ChimeCore

/// Changing which shard owns which slots: the map a slot move commits.
extension ShardMap {
    /// The id of the shard that owns `slot`, if any.
    public func ownerID(ofSlot slot: Int) -> Int? { shard(owning: slot)?.id }

    /// This map with every slot of `slots` owned by shard `target` and `mapEpoch` one higher;
    /// every shard's ranges are rebuilt as the maximal runs of the slots it owns (a shard left
    /// with none keeps its entry, with no ranges). Slots outside `0..<slotCount` are ignored;
    /// `target` must be a shard of the map (else the map is returned with only its epoch
    /// raised, which ``validate()`` still accepts when this one did).
    public func moving(_ slots: some Sequence<Int>, to target: Int) -> ShardMap {
        var owners = [Int?](repeating: nil, count: max(0, slotCount))
        for shard in shards {
            for range in shard.slots where range.first >= 0 && range.first <= range.last && range.last < owners.count {
                for slot in range.first...range.last { owners[slot] = shard.id }
            }
        }
        if shard(id: target) != nil {
            for slot in slots where slot >= 0 && slot < owners.count { owners[slot] = target }
        }
        var moved = self
        moved.mapEpoch = mapEpoch &+ 1
        for index in moved.shards.indices {
            let id = moved.shards[index].id
            var ranges: [SlotRange] = []
            var slot = 0
            while slot < owners.count {
                guard owners[slot] == id else {
                    slot += 1
                    continue
                }
                let first = slot
                while slot + 1 < owners.count && owners[slot + 1] == id { slot += 1 }
                ranges.append(SlotRange(first, slot))
                slot += 1
            }
            moved.shards[index].slots = ranges
        }
        return moved
    }
}
