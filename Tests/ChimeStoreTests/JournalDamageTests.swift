import ChimeCore
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

/// Issue 25: damage to the last record is corruption unless a crash can have left it (a
/// record cut short, zero fill): a bit flip in a whole, fsynced record must never pass for
/// a torn tail, which a start would cut off silently.
@Suite struct JournalDamageTests {
    let temporary: TemporaryDirectory
    let directory: URL

    init() throws {
        temporary = try TemporaryDirectory(prefix: "damage")
        directory = temporary.url.appendingPathComponent("journal")
    }

    /// Nineteen varied records and, last, one more (what a client was told is durable); the
    /// segment's bytes and the last record's offset.
    func writeJournal() throws -> (segment: String, bytes: [UInt8], lastOffset: Int) {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, codec: testCodec)
        try journal.append(makeEntries(19), using: testCodec)
        try journal.append([makeEntries(1, from: 20)[0]], using: testCodec)
        try journal.close()
        let segment = try #require(try segmentPaths(directory).only)
        let last = try #require(try records(ofSegment: segment).last)
        #expect(last.sequence == 20)
        return (segment, [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment))), last.offset)
    }

    @Test func refusesAWholeLastRecordWhoseChecksumFails() throws {
        let (segment, bytes, lastOffset) = try writeJournal()
        try flipByte(segment, at: lastOffset + RecordFraming.recordHeaderLength + 1)
        let before = try contentsOfTree(temporary.url)

        let error = expectJournalError(.corrupt) { try replayAll(directory) }
        #expect(error?.corruption?.offset == lastOffset)
        #expect(error?.corruption?.reason == .checksumMismatch)
        #expect(error?.corruption?.validRecordsAfter == 0)
        #expect(error?.corruption?.isWholeRecord == true)
        #expect(try contentsOfTree(temporary.url) == before, "nothing on disk changed")
        #expect(bytes.count > lastOffset)
    }

    @Test func aBitFlipAnywhereInTheLastRecordIsCorruptionNeverATornTail() throws {
        let (segment, original, lastOffset) = try writeJournal()
        var silent: [String] = []
        var refused = 0
        for position in lastOffset..<original.count {
            for bit in 0..<8 {
                var damaged = original
                damaged[position] ^= UInt8(1) << UInt8(bit)
                try Data(damaged).write(to: URL(fileURLWithPath: segment))
                do {
                    let (journal, report, replayed) = try replayAll(directory)
                    journal.abandon()
                    silent.append("byte \(position - lastOffset) bit \(bit): opened with \(replayed.count) entries, truncation \(report.truncation.map { "\($0)" } ?? "none")")
                } catch let error as JournalError where error.code == .corrupt {
                    refused += 1
                }
            }
        }
        let recordLength = original.count - lastOffset
        #expect(silent.isEmpty, "\(silent.prefix(10))")
        #expect(refused == recordLength * 8)
        print("bit flips in the last record (\(recordLength) bytes): \(refused) of \(recordLength * 8) refused as corruption, \(silent.count) silent")
    }

    @Test func aLastRecordCutShortAtAnyLengthIsATornTail() throws {
        let (segment, original, lastOffset) = try writeJournal()
        for length in lastOffset..<original.count {
            try Data(original[0..<length]).write(to: URL(fileURLWithPath: segment))
            let (journal, report, replayed) = try replayAll(directory)
            journal.abandon()
            #expect(replayed.map(\.1) == makeEntries(19), "cut at \(length - lastOffset)")
            #expect(report.truncation?.offset == (length == lastOffset ? nil : lastOffset), "cut at \(length - lastOffset)")
        }
    }

    @Test func aZeroedPayloadUnderAWholeHeaderIsCorruptionAZeroedRecordATail() throws {
        let (segment, original, lastOffset) = try writeJournal()
        let recordLength = original.count - lastOffset
        // A header written, its payload's blocks zero (a power loss): a tail.
        var zeroPayload = original
        for index in (lastOffset + RecordFraming.recordHeaderLength)..<original.count { zeroPayload[index] = 0 }
        try Data(zeroPayload).write(to: URL(fileURLWithPath: segment))
        let error = expectJournalError(.corrupt) { try replayAll(directory) }
        #expect(error?.corruption?.isWholeRecord == true, "a whole record with a zeroed payload was written whole")

        // The whole record zeroed: zero fill after the last good one.
        var zeroRecord = original
        for index in lastOffset..<original.count { zeroRecord[index] = 0 }
        try Data(zeroRecord).write(to: URL(fileURLWithPath: segment))
        let (journal, report, replayed) = try replayAll(directory)
        journal.abandon()
        #expect(replayed.count == 19)
        #expect(report.truncation?.reason == .zeroFilled)
        #expect(report.truncation?.bytesDiscarded == recordLength)
    }
}
