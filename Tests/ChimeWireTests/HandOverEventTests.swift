import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

/// The hand-over event's JSON: its documented shape, a round trip, the slot ranges a move's
/// slots make, and a decoder that refuses anything else without trapping.
@Suite struct HandOverEventTests {
    let codec = WireCodec()
    let event = HandOverEvent(
        seq: 812, shard: 0, move: "m-7", slots: [ShardMap.SlotRange(0, 63), ShardMap.SlotRange(100, 100)], target: 2, mapEpoch: 3,
        at: Date(timeIntervalSince1970: 1_798_070_400.25))

    @Test func encodesTheDocumentedShape() throws {
        let json = String(decoding: codec.encode(event), as: UTF8.self)
        #expect(json == #"{"at":"2026-12-24T00:00:00.250Z","mapEpoch":3,"move":"m-7","seq":812,"shard":0,"slots":[[0,63],[100,100]],"target":2,"type":"handover"}"#)
        #expect(try codec.decode(HandOverEvent.self, from: codec.encode(event)) == event)
        #expect(Topic.handOver == "handover")
    }

    @Test func slotRangesAreTheMaximalRunsInOrder() {
        #expect(HandOverEvent.ranges(of: [9, 3, 4, 5, 100, 8]) == [ShardMap.SlotRange(3, 5), ShardMap.SlotRange(8, 9), ShardMap.SlotRange(100, 100)])
        #expect(HandOverEvent.ranges(of: [Int]()).isEmpty)
        #expect(event.covers(slot: 63) && event.covers(slot: 100) && !event.covers(slot: 64))
    }

    @Test(arguments: [
        #"{"type":"fire","seq":1,"shard":0,"move":"m","slots":[[0,1]],"target":2,"mapEpoch":2,"at":"2026-12-24T00:00:00.000Z"}"#,
        #"{"type":"handover","seq":1,"shard":0,"move":"m","slots":[[2,1]],"target":2,"mapEpoch":2,"at":"2026-12-24T00:00:00.000Z"}"#,
        #"{"type":"handover","seq":1,"shard":0,"move":"m","slots":[[-1,1]],"target":2,"mapEpoch":2,"at":"2026-12-24T00:00:00.000Z"}"#,
        #"{"type":"handover","seq":1,"shard":-1,"move":"m","slots":[[0,1]],"target":2,"mapEpoch":2,"at":"2026-12-24T00:00:00.000Z"}"#,
        #"{"type":"handover","seq":-1,"shard":0,"move":"m","slots":[[0,1]],"target":2,"mapEpoch":2,"at":"2026-12-24T00:00:00.000Z"}"#,
        #"{"type":"handover","seq":1,"shard":0,"move":"m","slots":[[0,1,2]],"target":2,"mapEpoch":2,"at":"2026-12-24T00:00:00.000Z"}"#,
        #"{"type":"handover","seq":1,"shard":0,"move":"m","slots":[[0,1]],"target":2,"at":"2026-12-24T00:00:00.000Z"}"#,
        #"{"type":"handover","seq":1,"shard":0,"move":"m","slots":[[0,1]],"target":2,"mapEpoch":2,"at":"yesterday"}"#,
    ])
    func refusesWhatIsNotAHandOver(json: String) {
        #expect(throws: WireError.self) { try codec.decode(HandOverEvent.self, from: Data(json.utf8)) }
    }

    /// Garbage: every prefix and random one-byte damage of a good event decodes to a valid
    /// event or throws `WireError`, never traps.
    @Test func garbageIsRefusedWithoutATrap() {
        let good = Array(codec.encode(event))
        for length in 0..<good.count {
            #expect(throws: WireError.self) { try codec.decode(HandOverEvent.self, from: Data(good[..<length])) }
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var damaged = good
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            do {
                let decoded = try codec.decode(HandOverEvent.self, from: Data(damaged))
                #expect(decoded.shard >= 0 && decoded.target >= 0)
                #expect(decoded.slots.allSatisfy { $0.first >= 0 && $0.first <= $0.last })
            } catch {
                // Refused: a WireError (the decode's only error type).
            }
        }
    }
}
