import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeClient

/// Hand-over events at the subscriber, pure: the gap filler delivers them once, in `seq`
/// order among a shard's fire events, and `SlotOrder` delivers a moved slot's events from the
/// source before the hand-over and those from the target after it.
@Suite struct HandOverOrderTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    /// Two shards of 16 slots: 0 owns 0–7, 2 owns 8–15.
    static let map = ShardMap(
        mapEpoch: 1, slotCount: 16,
        shards: [
            ShardMap.Shard(id: 0, slots: [ShardMap.SlotRange(0, 7)], endpoints: endpoints(0)),
            ShardMap.Shard(id: 2, slots: [ShardMap.SlotRange(8, 15)], endpoints: endpoints(2)),
        ])

    static func endpoints(_ id: Int) -> ShardMap.Endpoints {
        ShardMap.Endpoints(
            control: "inproc://c\(id)", dispatch: "inproc://d\(id)", results: "inproc://r\(id)", events: "inproc://e\(id)",
            eventsIngest: "inproc://i\(id)")
    }

    /// A recipient whose slot is `slot`.
    static func recipient(inSlot slot: Int) -> RecipientID {
        for n in 0..<10_000 where map.slot(of: RecipientID("user\(n)")) == slot { return RecipientID("user\(n)") }
        preconditionFailure("no recipient in slot \(slot)")
    }

    func at(_ seconds: Double) -> Date { Self.t0.addingTimeInterval(seconds) }

    func fire(_ seq: UInt64, _ recipient: RecipientID, reminder: String? = nil) -> FireEvent {
        FireEvent(
            seq: seq, publisher: "w",
            firing: Firing(reminderId: ReminderID(reminder ?? "r\(seq)"), recipient: recipient, dueAt: Self.t0, content: Content()),
            firedAt: Self.t0)
    }

    func handOver(_ seq: UInt64, slots: [ShardMap.SlotRange] = [ShardMap.SlotRange(3, 4)], from source: Int = 0, to target: Int = 2)
        -> HandOverEvent
    {
        HandOverEvent(seq: seq, shard: source, move: "m1", slots: slots, target: target, mapEpoch: 2, at: Self.t0)
    }

    @Test func theFillerDeliversAHandOverOnceInSeqOrder() {
        let alice = Self.recipient(inSlot: 3)
        var filler = GapFiller(since: 10)
        #expect(filler.take(fetched: [], handOvers: [], through: 10, at: at(0)).isEmpty)
        #expect(filler.take(live: .fire(fire(11, alice)), at: at(0.1)) == [.fire(fire(11, alice))])
        // 12 is missing live: the hand-over (13) waits for it.
        #expect(filler.take(live: .handOver(handOver(13)), at: at(0.2)).isEmpty)
        #expect(filler.take(live: .fire(fire(14, Self.recipient(inSlot: 9))), at: at(0.2)).isEmpty)
        // The fetch brings 12 and the hand-over again: each once, in seq order.
        let ready = filler.take(fetched: [fire(12, alice)], handOvers: [handOver(13)], through: 13, at: at(0.22))
        #expect(ready.map(\.seq) == [12, 13, 14])
        #expect(ready[1] == .handOver(handOver(13)))
        // A live copy after the fetch delivered it, and a later page listing it: nothing.
        #expect(filler.take(live: .handOver(handOver(13)), at: at(0.3)).isEmpty)
        #expect(filler.take(fetched: [], handOvers: [handOver(13)], through: 14, at: at(1.3)).isEmpty)
        #expect(filler.watermark == 14)
    }

    @Test func aFetchedPageDeliversItsHandOverAmongItsFireEvents() {
        var filler = GapFiller(since: 0)
        let ready = filler.take(fetched: [fire(1, "a"), fire(3, "a")], handOvers: [handOver(2)], through: 3, at: at(0))
        #expect(ready == [.fire(fire(1, "a")), .handOver(handOver(2)), .fire(fire(3, "a"))])
        // The fire-only API skips hand-overs: the same filler without them.
        var plain = GapFiller(since: 0)
        #expect(plain.onFetched([fire(1, "a"), fire(3, "a")], through: 3, at: at(0)).map(\.seq) == [1, 3])
    }

    @Test func aTargetsEventOfAMovedSlotWaitsForTheHandOver() {
        let alice = Self.recipient(inSlot: 3)
        let bob = Self.recipient(inSlot: 9)
        var order = SlotOrder(map: Self.map)
        let raw = Data("x".utf8)
        // The source's event of slot 3 and the target's own slot 9 pass at once.
        #expect(order.onFire(fire(5, alice), raw: raw, from: 0, at: at(0)) == [.fire(fire(5, alice), raw, shard: 0)])
        #expect(order.onFire(fire(7, bob), raw: raw, from: 2, at: at(0)) == [.fire(fire(7, bob), raw, shard: 2)])
        // The target fires slot 3 before the source's hand-over arrived: held.
        #expect(order.onFire(fire(8, alice, reminder: "late"), raw: raw, from: 2, at: at(0.1)).isEmpty)
        #expect(order.hasHeldEvents)
        #expect(order.onTick(at: at(1)).isEmpty)
        let ready = order.onHandOver(handOver(6), raw: raw)
        #expect(ready == [.handOver(handOver(6), raw), .fire(fire(8, alice, reminder: "late"), raw, shard: 2)])
        #expect(!order.hasHeldEvents)
        // From here slot 3 is the target's: its events pass.
        #expect(order.onFire(fire(9, alice), raw: raw, from: 2, at: at(1.2)).count == 1)
    }

    @Test func theSourcesReplayedHistoryComesBeforeItsHandOver() {
        let alice = Self.recipient(inSlot: 3)
        // A map read after the move: slot 3 is already shard 2's.
        let after = ShardMap(
            mapEpoch: 2, slotCount: 16,
            shards: [
                ShardMap.Shard(id: 0, slots: [ShardMap.SlotRange(0, 2), ShardMap.SlotRange(5, 7)], endpoints: Self.endpoints(0)),
                ShardMap.Shard(id: 2, slots: [ShardMap.SlotRange(3, 4), ShardMap.SlotRange(8, 15)], endpoints: Self.endpoints(2)),
            ])
        var order = SlotOrder(map: after)
        let raw = Data()
        #expect(order.onFire(fire(20, alice), raw: raw, from: 2, at: at(0)).count == 1)
        // The source's catch-up replays slot 3's history: it waits for the hand-over ending it.
        #expect(order.onFire(fire(5, alice), raw: raw, from: 0, at: at(0.1)).isEmpty)
        #expect(order.onHandOver(handOver(6), raw: raw) == [.fire(fire(5, alice), raw, shard: 0), .handOver(handOver(6), raw)])
    }

    @Test func anEventWhoseHandOverNeverComesPassesAfterTheHoldAndItsShardBecomesTheSlots() {
        let alice = Self.recipient(inSlot: 3)
        var order = SlotOrder(map: Self.map, maximumHold: 5)
        let raw = Data()
        #expect(order.onFire(fire(8, alice), raw: raw, from: 2, at: at(0)).isEmpty)
        #expect(order.onFire(fire(9, alice), raw: raw, from: 2, at: at(1)).isEmpty)
        #expect(order.onTick(at: at(4.9)).isEmpty)
        #expect(order.onTick(at: at(5)) == [.fire(fire(8, alice), raw, shard: 2), .fire(fire(9, alice), raw, shard: 2)])
        #expect(order.onFire(fire(10, alice), raw: raw, from: 2, at: at(5.1)).count == 1)
        // A hand-over naming slots past the slot count changes only the slots there are.
        let wide = handOver(11, slots: [ShardMap.SlotRange(0, Int.max)], from: 2, to: 0)
        #expect(order.onHandOver(wide, raw: raw) == [.handOver(wide, raw)])
        #expect(order.onFire(fire(12, alice), raw: raw, from: 0, at: at(6)).count == 1)
    }
}
