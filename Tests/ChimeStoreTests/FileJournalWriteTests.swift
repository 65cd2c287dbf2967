import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

/// `FileJournal.write`: records handed to the file with no data `fdatasync`, whatever the
/// policy (the coordinator's loop writes a lone request's entries this way under `interval`).
@Suite struct FileJournalWriteTests {
    let temporary: TemporaryDirectory
    let directory: URL

    init() throws {
        temporary = try TemporaryDirectory(prefix: "journal-write")
        directory = temporary.url.appendingPathComponent("journal")
    }

    @Test func writeHandsRecordsToTheFileWithoutFdatasyncAndALaterSyncCoversThem() throws {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .always, codec: testCodec)
        try journal.append(makeEntries(3), using: testCodec)
        try journal.write()
        var statistics = journal.statistics
        #expect(statistics.writtenSequence == 3)
        #expect(statistics.durableSequence == 0)
        #expect(statistics.fsyncCount == 0)
        #expect(statistics.writeCalls == 1)
        #expect(journal.hasUnsyncedWrites)
        // On the file already: another reader (a recovery after `kill -9`) sees them.
        #expect(try replayAll(directory).entries.map(\.1) == makeEntries(3))

        try journal.sync()
        statistics = journal.statistics
        #expect(statistics.durableSequence == 3)
        #expect(statistics.fsyncCount == 1)
        #expect(statistics.writeCalls == 1)
        #expect(!journal.hasUnsyncedWrites)
        try journal.close()
    }

    @Test func writeAcrossASegmentRollStillMakesTheOldSegmentAndTheDirectoryDurable() throws {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .interval(milliseconds: 60_000), segmentSize: 8 << 10, codec: testCodec)
        // Many appends (the records of one append share a segment), one write.
        for start in stride(from: 0, to: 600, by: 20) { try journal.append(makeEntries(20, from: start), using: testCodec) }
        try journal.write()
        let statistics = journal.statistics
        #expect(statistics.segmentsCreated >= 2)
        // One fdatasync per rolled segment, none for the tail; one directory fsync.
        #expect(statistics.fsyncCount == statistics.segmentsCreated)
        #expect(statistics.directorySyncCount == 1)
        #expect(journal.hasUnsyncedWrites)
        try journal.close()
        #expect(try replayAll(directory, segmentSize: 8 << 10).entries.map(\.1) == makeEntries(600))
    }
}
