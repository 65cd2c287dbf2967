import ChimeJournal
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

/// The journal of `Tests/Fixtures/store-0.1.0`, written by release 0.1.0 in segment format 1
/// (no group marks), opens unchanged with this version: every record a group of one.
@Suite struct FormatOneJournalTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/store-0.1.0/journal/00000000000000000001.log")

    /// A copy of the fixture's journal in a temporary directory.
    static func copy() throws -> (directory: TemporaryDirectory, journal: URL, segment: URL) {
        let temporary = try TemporaryDirectory(prefix: "format-one")
        let journal = temporary.url.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        let segment = journal.appendingPathComponent(fixture.lastPathComponent)
        try FileManager.default.copyItem(at: fixture, to: segment)
        return (temporary, journal, segment)
    }

    @Test func theFixtureIsOfFormatOne() throws {
        let bytes = [UInt8](try Data(contentsOf: Self.fixture))
        #expect(Array(bytes[8..<12]) == [1, 0, 0, 0])
        let frames = RecordReader.validFrames(in: bytes, from: RecordFraming.segmentHeaderLength, recordVersion: 1)
        #expect(frames.count > 20)
        #expect(frames.allSatisfy { !$0.continuesGroup && bytes[$0.offset + 2] == 1 })
    }

    @Test func opensUnchangedAndAppendsAfterItInAFormatTwoSegment() throws {
        let (temporary, journal, segment) = try Self.copy()
        defer { temporary.remove() }
        let original = try Data(contentsOf: segment)
        var replayed: [JournalEntry] = []
        let (opened, report) = try FileJournal.open(directory: journal, fsync: .never) { _, entry in replayed.append(entry) }
        let count = RecordReader.validFrames(in: [UInt8](original), from: RecordFraming.segmentHeaderLength, recordVersion: 1).count
        #expect(replayed.count == count)
        #expect(report.truncation == nil && report.lastSequence == UInt64(count))
        try opened.append([.seqReserved(through: 1 << 30), .seqReserved(through: 2 << 30)])
        try opened.close()
        #expect(try Data(contentsOf: segment) == original, "a segment of format 1 is never appended to")

        var again: [JournalEntry] = []
        let (_, reopened) = try FileJournal.open(directory: journal, fsync: .never) { _, entry in again.append(entry) }
        #expect(reopened.segmentCount == 2)
        #expect(again == replayed + [.seqReserved(through: 1 << 30), .seqReserved(through: 2 << 30)])
    }

    @Test func aTornLastRecordOfFormatOneTakesOnlyItself() throws {
        let (temporary, journal, segment) = try Self.copy()
        defer { temporary.remove() }
        let bytes = [UInt8](try Data(contentsOf: segment))
        let frames = RecordReader.validFrames(in: bytes, from: RecordFraming.segmentHeaderLength, recordVersion: 1)
        let last = try #require(frames.last)
        try Data(bytes.dropLast(3)).write(to: segment)
        var replayed = 0
        let (opened, report) = try FileJournal.open(directory: journal, fsync: .never) { _, _ in replayed += 1 }
        try opened.close()
        #expect(replayed == frames.count - 1)
        #expect(report.truncation?.offset == last.offset)
        #expect(report.truncation?.incompleteGroupRecords == 0)
    }
}
