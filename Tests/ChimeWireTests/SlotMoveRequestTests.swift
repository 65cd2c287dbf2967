import ChimeCore
import Foundation
import Testing

@testable import ChimeWire

/// The `move` op's typed request and reply: each step's documented JSON, flat in the request,
/// round trips with exact values, the refusals of what a step does not take or lacks (the
/// arguments of earlier versions' `body` among them), and a decoder that refuses garbage
/// without trapping.
@Suite struct SlotMoveRequestTests {
    let codec = WireCodec()
    static let move = SlotMove(id: SlotMoveID("m1"), slots: [100, 3, 4], source: 0, target: 2, slotCount: 4096)
    static let cut = Date(timeIntervalSince1970: 1_798_070_400.25)

    static let examples: [(SlotMoveRequest, String)] = [
        (.status(), #"{"op":"move","requestId":"r1","step":"status"}"#),
        (.status(countingReminders: true), #"{"countReminders":true,"op":"move","requestId":"r1","step":"status"}"#),
        (
            .begin(move),
            #"{"move":{"id":"m1","slotCount":4096,"slots":[3,4,100],"source":0,"target":2},"op":"move","requestId":"r1","step":"begin"}"#
        ),
        (.pause(SlotMoveID("m1"), milliseconds: 200), #"{"moveId":"m1","op":"move","pauseMs":200,"requestId":"r1","step":"pause"}"#),
        (.export(SlotMoveID("m1")), #"{"moveId":"m1","op":"move","requestId":"r1","step":"export"}"#),
        (
            .import(SlotMoveID("m1"), ShippedSlice(slice: Data([1, 2, 3]), cut: cut)),
            #"{"moveId":"m1","op":"move","requestId":"r1","shipment":{"cut":"2026-12-24T00:00:00.250Z","slice":"AQID"},"step":"import"}"#
        ),
        (.follow(SlotMoveID("m1")), #"{"moveId":"m1","op":"move","requestId":"r1","step":"follow"}"#),
    ]

    @Test func everyStepEncodesItsDocumentedFlatShapeAndDecodesToTheSameValue() throws {
        for (move, json) in Self.examples {
            let request = ControlRequest(requestId: "r1", command: .move(move))
            #expect(String(decoding: codec.encode(request), as: UTF8.self) == json)
            let decoded = try codec.decodeRequest(Data(json.utf8))
            #expect(decoded == request)
            guard case .move(let typed) = decoded.command else { Issue.record("not a move: \(decoded)"); continue }
            #expect(typed.step == move.step && typed.moveId == move.moveId && typed.move == move.move)
            #expect(typed.pauseMilliseconds == move.pauseMilliseconds && typed.shipment == move.shipment)
            #expect(typed.countsReminders == move.countsReminders)
        }
        #expect(Self.examples.map(\.0.step) == SlotMoveStep.allCases.flatMap { $0 == .status ? [$0, $0] : [$0] })
    }

    @Test func aPauseIsClampedWhenMadeAndTheDefaultsAreLeftOut() throws {
        #expect(SlotMoveRequest.pause(SlotMoveID("m"), milliseconds: 0).pauseMilliseconds == 1)
        #expect(SlotMoveRequest.pause(SlotMoveID("m"), milliseconds: 120_000).pauseMilliseconds == 60_000)
        let bare = try codec.decodeRequest(Data(#"{"op":"move","step":"pause","moveId":"m1"}"#.utf8))
        #expect(bare.command == .move(SlotMoveRequest(step: .pause, moveId: SlotMoveID("m1"))))
        let counted = try codec.decodeRequest(Data(#"{"op":"move","step":"status","countReminders":false}"#.utf8))
        #expect(counted.command == .move(.status()))
    }

    @Test func theStatusReplyRoundTripsWithExactValues() throws {
        let status = SlotMoveStatus(
            shard: 2, mapEpoch: 3, registerVersion: 7, reminders: 10_000,
            ledger: SlotMoveStatus.Ledger(
                outgoing: [SlotMoveStatus.Outgoing(move: Self.move, cut: Self.cut)],
                incoming: [SlotMoveStatus.Incoming(move: SlotMove(id: SlotMoveID("m2"), slots: [9], source: 1, target: 2, slotCount: 4096))],
                ended: ["m0": .completed]),
            slotReminders: ["m1": 120], slotUnsettled: ["m1": 0, "m2": 0],
            shipment: ShippedSlice(slice: Data([1, 2, 3]), cut: Self.cut))
        let json = String(decoding: codec.encode(ControlReply(requestId: "r1", result: status)), as: UTF8.self)
        #expect(json == #"{"ok":true,"requestId":"r1","result":{"ledger":{"ended":{"m0":"completed"},"incoming":[{"isCommitted":false,"move":{"id":"m2","slotCount":4096,"slots":[9],"source":1,"target":2}}],"outgoing":[{"cut":"2026-12-24T00:00:00.250Z","move":{"id":"m1","slotCount":4096,"slots":[3,4,100],"source":0,"target":2}}]},"mapEpoch":3,"registerVersion":7,"reminders":10000,"shard":2,"shipment":{"cut":"2026-12-24T00:00:00.250Z","slice":"AQID"},"slotReminders":{"m1":120},"slotUnsettled":{"m1":0,"m2":0}}}"#)
        let decoded = try codec.decode(ControlReply<SlotMoveStatus>.self, from: Data(json.utf8))
        #expect(decoded.result == status)
        #expect(decoded.result?.ledger.outgoing.first?.isHandedOver == true)
        #expect(decoded.result?.ledger.incoming.first?.isAdopted == false)
        let bare = SlotMoveStatus(shard: 0, mapEpoch: 1, reminders: 0)
        #expect(String(decoding: codec.encode(bare), as: UTF8.self)
            == #"{"ledger":{"ended":{},"incoming":[],"outgoing":[]},"mapEpoch":1,"reminders":0,"shard":0,"slotReminders":{},"slotUnsettled":{}}"#)
        #expect(try codec.decode(SlotMoveStatus.self, from: codec.encode(bare)) == bare)
    }

    static let move1 = #""move":{"id":"m1","slots":[1],"source":0,"target":2,"slotCount":4096}"#
    static let shipment = #""shipment":{"slice":"AQID","cut":"2026-12-24T00:00:00.250Z"}"#

    @Test(arguments: [
        (#"{"op":"move"}"#, "invalid_argument", "step"),
        (#"{"op":"move","step":"dance"}"#, "invalid_argument", "step"),
        (#"{"op":"move","step":3}"#, "invalid_argument", "step"),
        (#"{"op":"move","step":null}"#, "invalid_argument", "step"),
        // The arguments of earlier versions (the coordinator's JSON as base64 in `body`).
        (#"{"op":"move","step":"status","body":"e30="}"#, "unknown_field", "body"),
        (#"{"op":"move","step":"status","moveId":"m1"}"#, "unknown_field", "moveId"),
        (#"{"op":"move","step":"export","moveId":"m1",\#(shipment)}"#, "unknown_field", "shipment"),
        (#"{"op":"move","step":"begin","moveId":"m1",\#(move1)}"#, "unknown_field", "moveId"),
        (#"{"op":"move","step":"begin"}"#, "invalid_argument", "move"),
        (#"{"op":"move","step":"begin","move":3}"#, "invalid_argument", "move"),
        (#"{"op":"move","step":"begin","move":null}"#, "invalid_argument", "move"),
        (#"{"op":"move","step":"begin","move":{"id":"m1","slots":[],"source":0,"target":2,"slotCount":4096}}"#, "invalid_argument", "move.slots"),
        (#"{"op":"move","step":"begin","move":{"id":"m1","slots":[4096],"source":0,"target":2,"slotCount":4096}}"#, "invalid_argument", "move.slots"),
        (#"{"op":"move","step":"begin","move":{"id":"m1","slots":[-1],"source":0,"target":2,"slotCount":4096}}"#, "invalid_argument", "move.slots"),
        (#"{"op":"move","step":"begin","move":{"id":"m1","slots":[1.5],"source":0,"target":2,"slotCount":4096}}"#, "invalid_argument", "move.slots"),
        (#"{"op":"move","step":"begin","move":{"id":"m1","slots":[0],"source":0,"target":2,"slotCount":0}}"#, "invalid_argument", "move.slotCount"),
        (#"{"op":"move","step":"begin","move":{"id":"m1","slots":[0],"source":0,"target":2,"slotCount":65537}}"#, "invalid_argument", "move.slotCount"),
        (#"{"op":"move","step":"begin","move":{"id":"m1","slots":[0],"source":2,"target":2,"slotCount":4096}}"#, "invalid_argument", "move.target"),
        (#"{"op":"move","step":"begin","move":{"id":"m1","slots":[0],"source":-1,"target":2,"slotCount":4096}}"#, "invalid_argument", "move.target"),
        (#"{"op":"move","step":"begin","move":{"id":"","slots":[0],"source":0,"target":2,"slotCount":4096}}"#, "invalid_argument", "move.id"),
        (#"{"op":"move","step":"begin","move":{"slots":[0],"source":0,"target":2,"slotCount":4096}}"#, "invalid_argument", "move.id"),
        (#"{"op":"move","step":"begin","move":{"id":"m1","slots":[0],"source":0,"target":2,"slotCount":4096,"epoch":1}}"#, "unknown_field", "move.epoch"),
        (#"{"op":"move","step":"pause"}"#, "invalid_argument", "moveId"),
        (#"{"op":"move","step":"pause","moveId":"m1","pauseMs":0}"#, "invalid_argument", "pauseMs"),
        (#"{"op":"move","step":"pause","moveId":"m1","pauseMs":60001}"#, "invalid_argument", "pauseMs"),
        (#"{"op":"move","step":"pause","moveId":"m1","pauseMs":1.5}"#, "invalid_argument", "pauseMs"),
        (#"{"op":"move","step":"pause","moveId":"m1","pauseMs":"200"}"#, "invalid_argument", "pauseMs"),
        (#"{"op":"move","step":"export","moveId":""}"#, "invalid_argument", "moveId"),
        (#"{"op":"move","step":"follow","moveId":7}"#, "invalid_argument", "moveId"),
        (#"{"op":"move","step":"import","moveId":"m1"}"#, "invalid_argument", "shipment"),
        (#"{"op":"move","step":"import",\#(shipment)}"#, "invalid_argument", "moveId"),
        (#"{"op":"move","step":"import","moveId":"m1","shipment":{"slice":"!!","cut":"2026-12-24T00:00:00.250Z"}}"#, "invalid_argument", "shipment.slice"),
        (#"{"op":"move","step":"import","moveId":"m1","shipment":{"slice":"AQID","cut":"yesterday"}}"#, "invalid_argument", "shipment.cut"),
        (#"{"op":"move","step":"import","moveId":"m1","shipment":{"slice":"AQID"}}"#, "invalid_argument", "shipment.cut"),
        (#"{"op":"move","step":"import","moveId":"m1","shipment":{"slice":"AQID","cut":"2026-12-24T00:00:00.250Z","moveId":"m1"}}"#, "unknown_field", "shipment.moveId"),
        (#"{"op":"move","step":"status","countReminders":"yes"}"#, "invalid_argument", "countReminders"),
    ] as [(String, String, String?)])
    func refusesWhatAStepDoesNotTakeOrLacks(json: String, code: String, field: String?) {
        do {
            let request = try codec.decodeRequest(Data(json.utf8))
            Issue.record("decoded \(request) from \(json)")
        } catch {
            #expect(error.code.rawValue == code, "\(json): \(error)")
            if let field { #expect(error.field == field, "\(json): \(error)") }
        }
    }

    /// Garbage: every prefix and random damage of each step's good request decodes to a
    /// request whose step has what it needs, or throws `WireError`; never traps.
    @Test func garbageIsRefusedWithoutATrap() {
        var random = SystemRandomNumberGenerator()
        for (_, json) in Self.examples {
            let good = Array(json.utf8)
            for length in 0..<good.count {
                #expect(throws: WireError.self) { try codec.decodeRequest(Data(good[..<length])) }
            }
            for _ in 0..<1500 {
                var damaged = good
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                guard let request = try? codec.decodeRequest(Data(damaged)), case .move(let move) = request.command else { continue }
                switch move.step {
                case .status: #expect(move.moveId == nil && move.move == nil && move.shipment == nil)
                case .begin: #expect(move.move.map { !$0.slots.isEmpty && $0.source != $0.target } == true)
                case .pause: #expect(move.moveId != nil && (move.pauseMilliseconds.map { (1...60_000).contains($0) } ?? true))
                case .export, .follow: #expect(move.moveId != nil && move.shipment == nil)
                case .import: #expect(move.moveId != nil && move.shipment != nil)
                }
            }
        }
    }

    /// The reply's decoder too: damaged status replies decode or throw `WireError`.
    @Test func damagedStatusRepliesAreRefusedWithoutATrap() {
        let status = SlotMoveStatus(
            shard: 1, mapEpoch: 2, reminders: 5,
            ledger: SlotMoveStatus.Ledger(outgoing: [SlotMoveStatus.Outgoing(move: Self.move, cut: Self.cut)], ended: ["m0": .resumed]),
            slotUnsettled: ["m1": 0], shipment: ShippedSlice(slice: Data([9, 9]), cut: Self.cut))
        let good = Array(codec.encode(ControlReply(requestId: "r", result: status)))
        var random = SystemRandomNumberGenerator()
        for length in 0..<good.count {
            #expect(throws: WireError.self) { try codec.decode(ControlReply<SlotMoveStatus>.self, from: Data(good[..<length])) }
        }
        for _ in 0..<2000 {
            var damaged = good
            damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            _ = try? codec.decode(ControlReply<SlotMoveStatus>.self, from: Data(damaged))
        }
    }
}
