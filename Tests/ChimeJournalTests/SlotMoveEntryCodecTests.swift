import ChimeCore
import ChimeJournal
import ChimeWire
import ChimeStore
import Foundation
import Testing

/// `JournalEntry.slotMove` through the journal codec: every step round-trips in its JSON
/// encoding, entries of earlier versions decode, and damaged payloads are refused with the
/// codec's errors, never a trap.
@Suite struct SlotMoveEntryCodecTests {
    let codec = JournalEntryCodec()
    let instant = Date(timeIntervalSince1970: 1_800_000_000)

    var steps: [SlotMoveEntry] {
        let move = SlotMove(id: SlotMoveID("m-7"), slots: [3, 9, 100], source: 0, target: 2, slotCount: 1024)
        return [
            .migrating(move, at: instant), .handedOver(move.id, cut: instant), .resumed(move.id, at: instant),
            .released(move.id, at: instant), .released(move.id, at: instant, eventSeq: 812, mapEpoch: 3), .importing(move, at: instant),
            .adopted(move.id, slice: Data([4, 0, 1, 2, 255]), cut: instant),
            .committed(move.id, mapEpoch: 3), .completed(move.id, at: instant), .dropped(move.id, at: instant),
        ]
    }

    @Test func everyStepRoundTripsAsJSON() throws {
        for step in steps {
            let payload = try codec.encode(.slotMove(step))
            #expect(payload.encoding == JournalEntryCodec.jsonEncoding)
            #expect(try codec.decode(payload.bytes[...], encoding: payload.encoding) == .slotMove(step))
        }
    }

    @Test func noStepNamesSubjects() {
        for step in steps {
            #expect(codec.subjects(of: .slotMove(step))["reminders"].isEmpty)
            #expect(codec.subjects(of: .slotMove(step))["firings"].isEmpty)
        }
    }

    /// The JSON of every step is the synthesized form earlier versions wrote, so their journals
    /// read and an entry looks the same in either.
    @Test func stepsKeepTheirEarlierJSON() throws {
        let encoded = try codec.encode(.slotMove(.handedOver(SlotMoveID("m-7"), cut: instant)))
        let earlier = Data(#"{"slotMove":{"_0":{"handedOver":{"_0":"m-7","cut":821692800}}}}"#.utf8)
        let decoded = try JSONSerialization.jsonObject(with: Data(encoded.bytes)) as? NSDictionary
        #expect(decoded == (try JSONSerialization.jsonObject(with: earlier) as? NSDictionary))
    }

    /// `handedOver` and `adopted` of earlier versions carried a journal sequence (`through`),
    /// always a constant: it is ignored.
    @Test func stepsWithTheJournalSequenceOfEarlierVersionsDecode() throws {
        let handedOver = Array(#"{"slotMove":{"_0":{"handedOver":{"_0":"m-7","cut":821692800,"through":1}}}}"#.utf8)
        #expect(try codec.decode(handedOver[...], encoding: JournalEntryCodec.jsonEncoding) == .slotMove(.handedOver(SlotMoveID("m-7"), cut: instant)))
        let adopted = Array(#"{"slotMove":{"_0":{"adopted":{"_0":"m-7","slice":"BAABAv8=","through":0,"cut":821692800}}}}"#.utf8)
        #expect(
            try codec.decode(adopted[...], encoding: JournalEntryCodec.jsonEncoding)
                == .slotMove(.adopted(SlotMoveID("m-7"), slice: Data([4, 0, 1, 2, 255]), cut: instant)))
        let tail = Array(#"{"slotMove":{"_0":{"tailApplied":{"_0":"m-7","_1":[],"through":3}}}}"#.utf8)
        let refused = #expect(throws: JournalError.self) { try codec.decode(tail[...], encoding: JournalEntryCodec.jsonEncoding) }
        #expect(refused?.code == .undecodableEntry)
        let twoSteps = Array(#"{"slotMove":{"_0":{"resumed":{"_0":"m","at":0},"dropped":{"_0":"m","at":0}}}}"#.utf8)
        #expect(throws: JournalError.self) { try codec.decode(twoSteps[...], encoding: JournalEntryCodec.jsonEncoding) }
    }

    /// A `released` of an earlier version (no hand-over event) still decodes, with none.
    @Test func aReleasedWithoutItsHandOverEventDecodes() throws {
        let old = Array(#"{"slotMove":{"_0":{"released":{"_0":"m-7","at":821692800}}}}"#.utf8)
        let decoded = try codec.decode(old[...], encoding: JournalEntryCodec.jsonEncoding)
        #expect(decoded == .slotMove(.released(SlotMoveID("m-7"), at: instant, eventSeq: nil, mapEpoch: nil)))
    }

    @Test func garbageIsRefusedWithTheCodecsErrors() throws {
        let good = Array(try codec.encode(.slotMove(steps[6])).bytes)
        // Every prefix, and every payload with one byte changed, decodes or throws a JournalError.
        for length in 0..<good.count {
            #expect(throws: JournalError.self) { try codec.decode(good[..<length], encoding: JournalEntryCodec.jsonEncoding) }
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<400 {
            var damaged = good
            damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            do { _ = try codec.decode(damaged[...], encoding: JournalEntryCodec.jsonEncoding) } catch is JournalError {}
        }
        let wrongType = Array(#"{"slotMove":{"_0":{"committed":{"_0":"m","mapEpoch":-1}}}}"#.utf8)
        let refused = #expect(throws: JournalError.self) { try codec.decode(wrongType[...], encoding: JournalEntryCodec.jsonEncoding) }
        #expect(refused?.code == .undecodableEntry)
        let unknownStep = Array(#"{"slotMove":{"_0":{"teleported":{"_0":"m"}}}}"#.utf8)
        #expect(throws: JournalError.self) { try codec.decode(unknownStep[...], encoding: JournalEntryCodec.jsonEncoding) }
    }
}
