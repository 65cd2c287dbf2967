import ChimeWire
import Testing

/// `ShardMap.moving(_:to:)`: the map a committed slot move writes.
@Suite struct ShardMapMovingTests {
    static func endpoints(_ id: Int) -> ShardMap.Endpoints {
        ShardMap.Endpoints(control: "tcp://s\(id):7700", dispatch: "tcp://s\(id):7701", results: "tcp://s\(id):7702",
                           events: "tcp://s\(id):7703", eventsIngest: "tcp://s\(id):7704")
    }

    @Test func movingSlotsRebuildsEveryShardsRangesAndRaisesTheEpoch() throws {
        var map = ShardMap.evenlySplit(shards: 2, slotCount: 16, endpoints: Self.endpoints)
        map.shards.append(ShardMap.Shard(id: 2, slots: [], endpoints: Self.endpoints(2)))
        try map.validate()
        let moved = map.moving([3, 4, 5, 9, 15], to: 2)
        try moved.validate()
        #expect(moved.mapEpoch == 2)
        #expect(moved.shards.map(\.slots) == [
            [ShardMap.SlotRange(0, 2), ShardMap.SlotRange(6, 7)],
            [ShardMap.SlotRange(8, 8), ShardMap.SlotRange(10, 14)],
            [ShardMap.SlotRange(3, 5), ShardMap.SlotRange(9, 9), ShardMap.SlotRange(15, 15)],
        ])
        #expect(moved.ownerID(ofSlot: 9) == 2)
        #expect(moved.ownerID(ofSlot: 10) == 1)
        // Moving every slot of shard 1 back and forth keeps the shard, with no ranges.
        let drained = moved.moving(8...14, to: 0)
        try drained.validate()
        #expect(drained.shard(id: 1)?.slots == [])
        #expect(drained.mapEpoch == 3)
    }

    @Test func slotsOutsideTheTableAndAnUnknownTargetChangeNoOwner() throws {
        let map = ShardMap.evenlySplit(shards: 2, slotCount: 8, endpoints: Self.endpoints)
        let moved = map.moving([-1, 8, 100], to: 1)
        #expect(moved.shards.map(\.slots) == map.shards.map(\.slots))
        let unknown = map.moving([0, 1], to: 7)
        #expect(unknown.shards.map(\.slots) == map.shards.map(\.slots))
        #expect(unknown.mapEpoch == 2)
        try unknown.validate()
    }
}
