import ChimeCore
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

@Suite struct JournalFollowerTests {
    let temporary: TemporaryDirectory
    let directory: URL

    init() throws {
        temporary = try TemporaryDirectory(prefix: "follower")
        directory = temporary.url.appendingPathComponent("journal")
    }

    func readNew(_ follower: JournalFollower) throws -> [(UInt64, TestRecord)] {
        var read: [(UInt64, TestRecord)] = []
        try follower.readNew(using: testCodec) { read.append(($0, $1)) }
        return read
    }

    @Test func followsAJournalAsItGrowsAcrossSegmentRolls() throws {
        let entries = makeEntries(300)
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, segmentSize: 4096, codec: testCodec)
        try journal.append(Array(entries[0..<100]), using: testCodec)
        try journal.sync()
        let follower = JournalFollower(directory: directory, after: 0)
        let first = try readNew(follower)
        #expect(first.map(\.0) == Array(1...100))
        #expect(first.map(\.1) == Array(entries[0..<100]))
        #expect(try readNew(follower).isEmpty)

        for start in stride(from: 100, to: 300, by: 25) {
            try journal.append(Array(entries[start..<(start + 25)]), using: testCodec)
            try journal.sync()
        }
        #expect(try segmentPaths(directory).count > 5)
        let rest = try readNew(follower)
        #expect(rest.map(\.0) == Array(101...300))
        #expect(rest.map(\.1) == Array(entries[100..<300]))
        #expect(follower.lastSequence == 300)
        try journal.close()
    }

    @Test func startsAfterASnapshotsSequenceAndStopsAtAnIncompleteRecord() throws {
        let entries = makeEntries(60)
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, segmentSize: 1 << 20, codec: testCodec)
        try journal.append(entries, using: testCodec)
        try journal.sync()
        try journal.close()
        let segment = try #require(try segmentPaths(directory).last)
        let complete = try Data(contentsOf: URL(fileURLWithPath: segment))
        // Half of a record, as a reader may see it while the writer's write is under way.
        let handle = try #require(FileHandle(forWritingAtPath: segment))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x43, 0x72, 1, 2, 40, 0, 0, 0, 61, 0]))
        try handle.close()

        let follower = JournalFollower(directory: directory, after: 40)
        #expect(try readNew(follower).map(\.0) == Array(41...60))
        #expect(try readNew(follower).isEmpty)
        #expect(follower.lastSequence == 60)
        #expect(try Data(contentsOf: URL(fileURLWithPath: segment)).count == complete.count + 10, "the follower changes nothing")
    }

    @Test func refusesAJournalThatNoLongerReachesBackToItsPosition() throws {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, segmentSize: 4096, codec: testCodec)
        for start in stride(from: 0, to: 200, by: 10) { try journal.append(makeEntries(10, from: start), using: testCodec) }
        try journal.sync()
        let follower = JournalFollower(directory: directory, after: 0)
        try journal.removeSegments(through: 150)
        #expect(throws: JournalError(.corrupt)) { try follower.readNew(using: testCodec) { _, _ in } }
        try journal.close()
    }

    @Test func holdsAnIncompleteGroupUntilItsLastRecordArrives() throws {
        let first = makeEntries(3)
        let second = makeEntries(6, from: 3)
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, codec: testCodec)
        try journal.append(first, using: testCodec)
        try journal.append(second, using: testCodec)
        try journal.close()
        let segment = try #require(try segmentPaths(directory).only)
        let whole = try Data(contentsOf: URL(fileURLWithPath: segment))
        let inSegment = try records(ofSegment: segment)
        // The writer's bytes as a reader may find them mid-`write`: every record boundary of
        // the second group and a cut inside each of its records.
        var cuts = inSegment[3...].map(\.offset)
        cuts += inSegment[3...].map { $0.offset + RecordFraming.recordHeaderLength + $0.payload.count / 2 }
        for cut in cuts.sorted() {
            try whole.prefix(cut).write(to: URL(fileURLWithPath: segment))
            let follower = JournalFollower(directory: directory, after: 0)
            #expect(try readNew(follower).map(\.1) == first, "cut at \(cut): only the complete group")
            #expect(follower.lastSequence == 3)
            #expect(try readNew(follower).isEmpty, "cut at \(cut): still held")
            // The writer's `write` completes: the whole group comes at once.
            try whole.write(to: URL(fileURLWithPath: segment))
            let released = try readNew(follower)
            #expect(released.map(\.0) == Array(4...9), "cut at \(cut)")
            #expect(released.map(\.1) == second)
            #expect(follower.lastSequence == 9)
        }
    }

    @Test func handsOutNothingOfAGroupWithARecordThatDoesNotDecode() throws {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, codec: testCodec)
        try journal.append(makeEntries(2), using: testCodec)
        try journal.close()
        let segment = try #require(try segmentPaths(directory).only)
        // A group whose third record is of a kind this version does not know.
        var group: [UInt8] = []
        for (index, payload) in [[1] + Array("a".utf8), [1] + Array("b".utf8), [9] + Array("c".utf8)].enumerated() {
            payload.withUnsafeBytes {
                RecordFraming.appendRecord(
                    sequence: 3 + UInt64(index), encoding: TestRecordCodec.encoding, continuesGroup: index < 2, payload: $0,
                    to: &group)
            }
        }
        try appendBytes(group, to: segment)
        let follower = JournalFollower(directory: directory, after: 0)
        var handed: [UInt64] = []
        #expect(throws: JournalError(.unknownEntryKind)) { try follower.readNew(using: testCodec) { sequence, _ in handed.append(sequence) } }
        #expect(handed == [1, 2], "nothing of the undecodable group")
        #expect(follower.lastSequence == 2)
    }

    @Test func followsASegmentOfFormatOneIntoTheNextOfFormatTwo() throws {
        // A journal of the previous format: header and records of version 1.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var old = RecordFraming.makeSegmentHeader(firstSequence: 1, formatVersion: 1)
        for (index, entry) in makeEntries(4).enumerated() {
            testCodec.encode(entry).bytes.withUnsafeBytes {
                RecordFraming.appendRecord(sequence: 1 + UInt64(index), encoding: TestRecordCodec.encoding, recordVersion: 1, payload: $0, to: &old)
            }
        }
        let oldPath = directory.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: 1))
        try Data(old).write(to: oldPath)
        let follower = JournalFollower(directory: directory, after: 0)
        #expect(try readNew(follower).map(\.1) == makeEntries(4))

        // Opened by this version, the journal appends to a new segment of format 2.
        let (journal, report) = try FileJournal.open(directory: directory, fsync: .never, codec: testCodec)
        #expect(report.entriesReplayed == 4 && report.truncation == nil)
        try journal.append(makeEntries(3, from: 4), using: testCodec)
        try journal.close()
        #expect(try Data(contentsOf: oldPath) == Data(old), "the old segment is never appended to")
        let segments = try segmentPaths(directory)
        #expect(segments.count == 2)
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segments[1])).prefix(12))
        #expect(header.suffix(4) == [UInt8(RecordFraming.segmentFormatVersion), 0, 0, 0])
        let rest = try readNew(follower)
        #expect(rest.map(\.0) == [5, 6, 7])
        #expect(rest.map(\.1) == makeEntries(3, from: 4))
    }
}
