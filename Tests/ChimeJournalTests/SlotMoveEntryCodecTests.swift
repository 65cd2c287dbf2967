import ChimeCore
import ChimeJournal
import ChimeStore
import Foundation
import Testing

/// `JournalEntry.slotMove` through the journal codec: every step round-trips in its JSON
/// encoding, a tail names its entries' subjects, and damaged payloads are refused with the
/// codec's errors, never a trap.
@Suite struct SlotMoveEntryCodecTests {
    let codec = JournalEntryCodec()
    let instant = Date(timeIntervalSince1970: 1_800_000_000)

    var steps: [SlotMoveEntry] {
        let move = SlotMove(id: SlotMoveID("m-7"), slots: [3, 9, 100], source: 0, target: 2, slotCount: 1024)
        let key = ReminderKey("r1", of: "alice")
        return [
            .migrating(move, at: instant), .handedOver(move.id, cut: instant, through: 41), .resumed(move.id, at: instant),
            .released(move.id, at: instant), .released(move.id, at: instant, eventSeq: 812, mapEpoch: 3), .importing(move, at: instant),
            .adopted(move.id, slice: Data([4, 0, 1, 2, 255]), through: 41, cut: instant),
            .tailApplied(move.id, [.cancelled([key], at: instant), .fired(key, dueAt: instant, next: nil, late: false, at: instant)], through: 44),
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

    @Test func aTailNamesItsEntriesSubjectsAndOtherStepsNone() {
        let subjects = codec.subjects(of: .slotMove(steps[7]))
        #expect(subjects["reminders"] == ["alice/r1"])
        #expect(subjects["firings"].count == 1)
        #expect(codec.subjects(of: .slotMove(steps[0]))["reminders"].isEmpty)
        #expect(!JournalEntry.slotMove(steps[7]).hasLegacyIdentities)
    }

    /// A `released` of an earlier version (no hand-over event) still decodes, with none.
    @Test func aReleasedWithoutItsHandOverEventDecodes() throws {
        let old = Array(#"{"slotMove":{"_0":{"released":{"_0":"m-7","at":821692800}}}}"#.utf8)
        let decoded = try codec.decode(old[...], encoding: JournalEntryCodec.jsonEncoding)
        #expect(decoded == .slotMove(.released(SlotMoveID("m-7"), at: instant, eventSeq: nil, mapEpoch: nil)))
    }

    @Test func garbageIsRefusedWithTheCodecsErrors() throws {
        let good = Array(try codec.encode(.slotMove(steps[7])).bytes)
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
