import ChimeCore
import Foundation
import Testing

@testable import ChimeJournal
import ChimeStore

/// The compact journal records stay byte for byte the documented layout that earlier
/// builds wrote, and a string that is not UTF-8 is refused (earlier builds read it with
/// U+FFFD in place of the bad bytes).
@Suite struct CompactEntryEncodingGoldenTests {
    /// 2001-01-01T00:00:01.5Z: f64 1.5 is 0x3FF8000000000000.
    let instant = Date(timeIntervalSinceReferenceDate: 1.5)
    let instantBytes: [UInt8] = [0, 0, 0, 0, 0, 0, 0xF8, 0x3F]

    func string(_ text: String) -> [UInt8] { fixed32(UInt32(text.utf8.count)) + Array(text.utf8) }
    func fixed32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    func fixed64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    @Test func firedRecordKeepsItsLayout() throws {
        let entry = JournalEntry.fired(
            ReminderKey(legacy: "r"), dueAt: instant, next: Occurrence(index: -3, instant: instant), late: true, missed: 4, at: instant)
        let expected = [5] + string("r") + instantBytes + [1 | 2 | 4] + fixed64(UInt64(bitPattern: -3)) + instantBytes
            + fixed64(4) + instantBytes
        #expect(CompactEntryEncoding.encode(entry) == expected)
        #expect(try CompactEntryEncoding.decode(expected[...]) == entry)
    }

    @Test func acknowledgedRecordKeepsItsLayout() throws {
        let firingId = FiringID(ReminderKey(legacy: "r"), dueAtMilliseconds: 1_500, nag: 2)
        let entry = JournalEntry.acknowledged(firingId, seq: 9, worker: "w1", firedAt: instant)
        let expected = [6] + string("r") + fixed64(1_500) + fixed32(2) + fixed64(9) + string("w1") + instantBytes
        #expect(CompactEntryEncoding.encode(entry) == expected)
        #expect(try CompactEntryEncoding.decode(expected[...]) == entry)
    }

    /// Today's records carry the reminder key, `<id>\0<recipient>`, where earlier builds
    /// wrote the bare id (read back as a legacy key, above).
    @Test func firedAndAcknowledgedRecordsCarryTheReminderKey() throws {
        let key = ReminderKey("r", of: "alice")
        let fired = JournalEntry.fired(key, dueAt: instant, next: nil, late: false, at: instant)
        let firedBytes = [5] + string("r\u{0}alice") + instantBytes + [0] + instantBytes
        #expect(CompactEntryEncoding.encode(fired) == firedBytes)
        #expect(try CompactEntryEncoding.decode(firedBytes[...]) == fired)
        let acknowledged = JournalEntry.acknowledged(FiringID(key, dueAtMilliseconds: 1_500), seq: 9, worker: "w1", firedAt: instant)
        let acknowledgedBytes = [6] + string("r\u{0}alice") + fixed64(1_500) + fixed32(0) + fixed64(9) + string("w1") + instantBytes
        #expect(CompactEntryEncoding.encode(acknowledged) == acknowledgedBytes)
        #expect(try CompactEntryEncoding.decode(acknowledgedBytes[...]) == acknowledged)
        let damaged = [5] + string("r\u{0}a\u{0}b") + instantBytes + [0] + instantBytes
        #expect(throws: BinaryDecodingError(.invalidValue, offset: 1)) { try CompactEntryEncoding.decode(damaged[...]) }
    }

    @Test func answeredRecordKeepsItsLayout() throws {
        let entry = JournalEntry.answered(requestId: "q", reply: Data([0x7B, 0x7D]), at: instant)
        let expected = [4] + instantBytes + string("q") + fixed32(2) + [0x7B, 0x7D]
        #expect(CompactEntryEncoding.encode(entry) == expected)
        #expect(try CompactEntryEncoding.decode(expected[...]) == entry)
    }

    @Test func scheduledRecordIsTheInstantThenTheReminderBinary() throws {
        let reminder = Reminder(id: "s", recipient: "bob", content: Content(body: "x"), trigger: Trigger(start: .instant(instant)))
        let expected = [3] + instantBytes + reminder.binaryEncoded()
        #expect(CompactEntryEncoding.encode(.scheduled(reminder, at: instant)) == expected)
    }

    @Test func theOldTextFormOfAnAcknowledgementStillReads() throws {
        let firingId = FiringID(ReminderKey(legacy: "r"), dueAtMilliseconds: 1_500, nag: 0)
        let payload = [2] + string(firingId.text) + fixed64(9) + string("w1") + instantBytes
        #expect(try CompactEntryEncoding.decode(payload[...]) == .acknowledged(firingId, seq: 9, worker: "w1", firedAt: instant))
        let unparsable = [2] + string("no-stamp") + fixed64(9) + string("w1") + instantBytes
        #expect(throws: BinaryDecodingError(.invalidValue, offset: 1)) { try CompactEntryEncoding.decode(unparsable[...]) }
    }

    /// Each string of each compact kind with a byte that is not UTF-8, and the offset of
    /// that string's bytes: the reminder id of `fired`, the reminder id and the worker of
    /// `acknowledged`, the request id of `answered`.
    @Test(arguments: [
        ([5] + [1, 0, 0, 0, 0xFF] + [UInt8](repeating: 0, count: 8) + [0] + [UInt8](repeating: 0, count: 8), 5),
        ([6] + [1, 0, 0, 0, 0xFF] + [UInt8](repeating: 0, count: 20) + [1, 0, 0, 0, 0x77] + [UInt8](repeating: 0, count: 8), 5),
        ([6] + [1, 0, 0, 0, 0x72] + [UInt8](repeating: 0, count: 20) + [1, 0, 0, 0, 0xFF] + [UInt8](repeating: 0, count: 8), 30),
        ([4] + [UInt8](repeating: 0, count: 8) + [2, 0, 0, 0, 0xC3, 0x28] + [0, 0, 0, 0], 13),
    ] as [([UInt8], Int)])
    func invalidUTF8IsRefused(payload: [UInt8], offset: Int) {
        let error = #expect(throws: BinaryDecodingError.self) { try CompactEntryEncoding.decode(payload[...]) }
        #expect(error?.reason == .invalidUTF8)
        #expect(error?.offset == offset)
    }

    @Test func journalReportsAnUndecodableCompactRecordWithItsReason() throws {
        let payload: [UInt8] = [5] + [1, 0, 0, 0, 0xFF] + [UInt8](repeating: 0, count: 8) + [0] + [UInt8](repeating: 0, count: 8)
        let record = RecordReader.Record(sequence: 3, encoding: CompactEntryEncoding.encoding, offset: 40, payload: payload[...])
        let error = #expect(throws: JournalError.self) { try JournalEntryCodec().decode(record, path: "j") }
        #expect(error?.code == .undecodableEntry)
        #expect(error?.message.contains("invalid_utf8 at offset 5") == true, "\(String(describing: error))")
    }
}
