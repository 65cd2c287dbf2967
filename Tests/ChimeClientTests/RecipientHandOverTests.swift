import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeClient

/// `subscribe --recipient`'s hand-over line (issue 42): decided from two maps, pure.
@Suite struct RecipientHandOverTests {
    static let endpoints = HandOverOrderTests.endpoints

    /// Shard 0 owns slots 0–7 and shard 2 slots 8–15 at epoch 1; `moved` gives 0–3 to shard 2.
    static let before = HandOverOrderTests.map
    static let moved = ShardMap(
        mapEpoch: 2, slotCount: 16,
        shards: [
            ShardMap.Shard(id: 0, slots: [ShardMap.SlotRange(4, 7)], endpoints: endpoints(0)),
            ShardMap.Shard(id: 2, slots: [ShardMap.SlotRange(0, 3), ShardMap.SlotRange(8, 15)], endpoints: endpoints(2)),
        ])

    @Test func aMovedSlotIsAHandOverFromItsOldOwnerToItsNewOne() throws {
        let recipient = HandOverOrderTests.recipient(inSlot: 2)
        let handOver = try #require(RecipientHandOver.between(Self.before, Self.moved, of: recipient))
        #expect(handOver == RecipientHandOver(recipient: recipient, slot: 2, shard: 0, target: 2, mapEpoch: 2))
        #expect(handOver.line == "hand-over: \(recipient.rawValue)'s slot 2 moved from shard 0 to shard 2 (map epoch 2)")
        let json = String(decoding: WireCodec().encode(handOver), as: UTF8.self)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "handover")
        #expect(object["recipient"] as? String == recipient.rawValue)
        #expect(object["slot"] as? Int == 2)
        #expect(object["shard"] as? Int == 0)
        #expect(object["target"] as? Int == 2)
        #expect(object["mapEpoch"] as? Int == 2)
    }

    @Test func noHandOverWhenTheOwnerStaysOrTheMapIsNotNewer() {
        let staying = HandOverOrderTests.recipient(inSlot: 5)
        #expect(RecipientHandOver.between(Self.before, Self.moved, of: staying) == nil)
        let moving = HandOverOrderTests.recipient(inSlot: 2)
        #expect(RecipientHandOver.between(Self.moved, Self.before, of: moving) == nil)
        #expect(RecipientHandOver.between(Self.before, Self.before, of: moving) == nil)
    }
}
