import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

/// The slot table and the shard map: a fixed, documented hash places every recipient in one
/// slot, and a valid map gives every slot exactly one shard.
@Suite struct ShardMapTests {
    static func endpoints(_ id: Int) -> ShardMap.Endpoints {
        let base = 47_000 + 10 * id
        return ShardMap.Endpoints(
            control: "tcp://127.0.0.1:\(base)", dispatch: "tcp://127.0.0.1:\(base + 1)", results: "tcp://127.0.0.1:\(base + 2)",
            events: "tcp://127.0.0.1:\(base + 3)", eventsIngest: "tcp://127.0.0.1:\(base + 4)")
    }

    /// CRC-32C of the UTF-8 bytes modulo the slot count, pinned: another hash (or a seeded
    /// one) would move every recipient to another shard.
    @Test(arguments: [("alice", 654), ("bob", 1748), ("123456789", 643), ("", 0)] as [(RecipientID, Int)])
    func theSlotIsCRC32COfTheRecipientModuloTheSlotCount(recipient: RecipientID, slot: Int) {
        #expect(ShardMap.slot(of: recipient, slotCount: 4096) == slot)
    }

    @Test(arguments: [1, 2, 3, 4, 7, 8])
    func everyRecipientHasOneSlotAndOneShard(shards: Int) throws {
        let map = ShardMap.evenlySplit(shards: shards, endpoints: Self.endpoints)
        try map.validate()
        var perShard = [Int: Int]()
        for index in 0..<20_000 {
            let recipient = RecipientID("user-\(index)")
            let slot = map.slot(of: recipient)
            #expect((0..<4096).contains(slot))
            let owners = map.shards.filter { shard in shard.slots.contains { $0.first <= slot && slot <= $0.last } }
            #expect(owners.count == 1)
            perShard[owners[0].id, default: 0] += 1
            #expect(map.shard(of: recipient)?.id == owners[0].id)
        }
        // The hash spreads: every shard gets within 15% of its share.
        for id in 0..<shards {
            let share = 20_000 / shards
            #expect(abs((perShard[id] ?? 0) - share) < share * 15 / 100, "shard \(id): \(perShard[id] ?? 0) of \(share)")
        }
    }

    @Test func aMapWithAGapAnOverlapOrAForeignSlotIsRefused() throws {
        func map(_ ranges: [[(Int, Int)]], ids: [Int]? = nil, slotCount: Int = 16) -> ShardMap {
            ShardMap(mapEpoch: 1, slotCount: slotCount, shards: ranges.enumerated().map { index, slots in
                ShardMap.Shard(id: ids?[index] ?? index, slots: slots.map { ShardMap.SlotRange($0.0, $0.1) }, endpoints: Self.endpoints(index))
            })
        }
        try map([[(0, 7)], [(8, 15)]]).validate()
        try map([[(0, 3), (12, 15)], [(4, 11)]]).validate()
        let cases: [(ShardMap, String)] = [
            (map([[(0, 7)], [(9, 15)]]), "slot 8 is owned by no shard"),
            (map([[(0, 8)], [(8, 15)]]), "slot 8 is owned by shards 0 and 1"),
            (map([[(0, 7)], [(8, 16)]]), "slot range [8, 16] is not within 0…15"),
            (map([[(0, 7)], [(15, 8)]]), "slot range [15, 8] is not within 0…15"),
            (map([[(0, 7)], [(8, 15)]], ids: [3, 3]), "shard 3 appears twice"),
            (map([[(0, 15)]], ids: [-1]), "shard ids are 0 or more, not -1"),
            (map([]), "the map names no shard"),
            (map([[(0, 0)]], slotCount: 0), "slotCount must be between 1 and 65536, not 0"),
        ]
        for (invalid, message) in cases {
            let error = #expect(throws: WireError.self) { try invalid.validate() }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == message)
        }
    }

    @Test func theMapRoundTripsThroughJSONWithRangesAsPairs() throws {
        let map = ShardMap.evenlySplit(shards: 2, endpoints: Self.endpoints)
        let json = WireCodec().encode(map)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""slots":[[0,2047]]"#) && text.contains(#""slots":[[2048,4095]]"#))
        #expect(try WireCodec().decode(ShardMap.self, from: json) == map)
        #expect(throws: WireError.self) {
            try WireCodec().decode(ShardMap.self, from: Data(text.replacingOccurrences(of: "[[0,2047]]", with: "[[0,2047,9]]").utf8))
        }
    }

    @Test func aSingleShardOwnsEverySlot() throws {
        let map = ShardMap.single(Self.endpoints(0))
        try map.validate()
        #expect(map.shards.map(\.id) == [0])
        #expect(map.shard(owning: 0)?.id == 0 && map.shard(owning: 4095)?.id == 0 && map.shard(owning: 4096) == nil)
    }
}
