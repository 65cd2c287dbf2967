import ChimeCore
import ChimeStore
import ChimeTestSupport
import Foundation
import Synchronization
import Testing

@Suite struct FileJournalTests {
    let temporary: TemporaryDirectory
    let directory: URL

    init() throws {
        temporary = try TemporaryDirectory(prefix: "journal")
        directory = temporary.url.appendingPathComponent("journal")
    }

    /// Appends `entries` in batches with a sync after each, then closes the journal.
    func write(_ entries: [TestRecord], batch: Int = 100, segmentSize: Int = FileJournal.defaultSegmentSize) throws {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, segmentSize: segmentSize, codec: testCodec)
        for start in stride(from: 0, to: entries.count, by: batch) {
            try journal.append(Array(entries[start..<min(start + batch, entries.count)]), using: testCodec)
            try journal.sync()
        }
        try journal.close()
    }

    @Test func roundTripsTenThousandEntriesAcrossSegmentRolls() throws {
        let entries = makeEntries(10_000)
        try write(entries, batch: 137, segmentSize: 64 << 10)

        let segments = try segmentPaths(directory)
        #expect(segments.count > 10)
        for path in segments {
            let name = URL(fileURLWithPath: path).lastPathComponent
            let first = try #require(try records(ofSegment: path).first)
            #expect(RecordFraming.firstSequence(ofSegmentFileName: name) == first.sequence)
            #expect(try fileSize(path) <= 64 << 10)
        }
        let (journal, report, replayed) = try replayAll(directory, segmentSize: 64 << 10)
        #expect(replayed.map(\.1) == entries)
        #expect(replayed.map(\.0) == Array(1...10_000))
        #expect(report.truncation == nil)
        #expect(report.segmentCount == segments.count)
        #expect(journal.lastSequence == 10_000)
    }

    /// A roll between two records of one `append` would let a `kill -9` during the old
    /// segment's `fdatasync` keep the first records of a request and lose the rest (a
    /// half-applied `schedule`, seen in the crash rounds): each append's records share one
    /// segment, and one larger than a segment gets a segment of its own.
    @Test func keepsTheRecordsOfOneAppendInOneSegment() throws {
        let entries = makeEntries(600)
        try write(entries, batch: 7, segmentSize: 4 << 10)
        let segments = try segmentPaths(directory)
        #expect(segments.count > 10)
        for path in segments {
            let inSegment = try records(ofSegment: path)
            let first = try #require(inSegment.first)
            let last = try #require(inSegment.last)
            #expect(first.sequence % 7 == 1, "\(path) starts mid-append at \(first.sequence)")
            #expect(last.sequence % 7 == 0 || last.sequence == 600, "\(path) ends mid-append at \(last.sequence)")
            #expect(try fileSize(path) <= 4 << 10)
        }
        // One append over the segment size: a segment of its own, then the next one.
        let big = makeEntries(100, from: 600)
        let (journal, _, _) = try replayAll(directory, segmentSize: 4 << 10)
        try journal.append(big, using: testCodec)
        try journal.append(makeEntries(1, from: 700), using: testCodec)
        try journal.sync()
        try journal.close()
        let after = try segmentPaths(directory)
        let bigSegment = try records(ofSegment: after[after.count - 2])
        #expect(bigSegment.map(\.sequence) == Array(601...700))
        #expect(try fileSize(after[after.count - 2]) > 4 << 10)
        #expect(try records(ofSegment: after[after.count - 1]).map(\.sequence) == [701])
        #expect(try replayAll(directory, segmentSize: 4 << 10).entries.map(\.1) == makeEntries(701))
    }

    @Test func continuesTheSequenceAfterReopening() throws {
        try write(makeEntries(10))
        let (journal, report, _) = try replayAll(directory)
        #expect(report.lastSequence == 10)
        try journal.append(makeEntries(5, from: 10), using: testCodec)
        try journal.sync()
        #expect(journal.lastSequence == 15)
        try journal.close()

        let (reopened, reopenedReport, replayed) = try replayAll(directory)
        #expect(reopenedReport.lastSequence == 15)
        #expect(reopened.lastSequence == 15)
        #expect(replayed.map(\.0) == Array(1...15))
        #expect(replayed.map(\.1) == makeEntries(15))
    }

    @Test func truncatesATornTailWithItsIncompleteGroupAndReportsWhere() throws {
        // Four appends of 25: the last record torn takes the other 24 of its group with it.
        try write(makeEntries(100), batch: 25)
        let segment = try #require(try segmentPaths(directory).last)
        let inSegment = try records(ofSegment: segment)
        let last = try #require(inSegment.last)
        let groupStart = inSegment[75].offset
        let size = try fileSize(segment)
        let tornLength = last.offset + (size - last.offset) / 2
        try truncate(segment, to: tornLength)

        let (journal, report, replayed) = try replayAll(directory)
        #expect(replayed.map(\.1) == makeEntries(75))
        let truncation = try #require(report.truncation)
        #expect(truncation.segmentPath == segment)
        #expect(truncation.offset == groupStart)
        #expect(truncation.bytesDiscarded == tornLength - groupStart)
        #expect(truncation.reason == .truncatedPayload)
        #expect(truncation.incompleteGroupRecords == 24)
        #expect(try fileSize(segment) == groupStart)

        try journal.append(makeEntries(3, from: 75), using: testCodec)
        try journal.sync()
        try journal.close()
        let (_, reopened, again) = try replayAll(directory)
        #expect(reopened.truncation == nil)
        #expect(again.map(\.1) == makeEntries(78))
        #expect(again.map(\.0) == Array(1...78))
    }

    @Test func refusesAFlippedByteMidSegmentWithValidRecordsAfterItAndChangesNothing() throws {
        // The only segment, as in production (segments are 64 MiB): 300 records.
        try write(makeEntries(300))
        let segment = try #require(try segmentPaths(directory).only)
        let inSegment = try records(ofSegment: segment)
        #expect(inSegment.count == 300)
        let victim = inSegment[149]
        try flipByte(segment, at: victim.offset + RecordFraming.recordHeaderLength + victim.payload.count / 2)
        let before = try contentsOfTree(temporary.url)

        let error = expectJournalError(.corrupt) { try replayAll(directory) }
        let corruption = try #require(error?.corruption)
        #expect(corruption.segmentPath == segment)
        #expect(corruption.offset == victim.offset)
        #expect(corruption.reason == .checksumMismatch)
        #expect(corruption.validRecordsAfter == 150)
        #expect(corruption.nextValidOffset == inSegment[150].offset)
        #expect(corruption.laterSegmentPaths == [])
        #expect(error?.offset == UInt64(victim.offset))
        #expect(try contentsOfTree(temporary.url) == before, "not a byte changed")
    }

    @Test func refusesAFlippedByteInTheLastSegmentOfSeveral() throws {
        try write(makeEntries(2_000), batch: 50, segmentSize: 32 << 10)
        let segments = try segmentPaths(directory)
        #expect(segments.count > 2)
        let segment = try #require(segments.last)
        let inSegment = try records(ofSegment: segment)
        let victim = inSegment[inSegment.count / 2]
        try flipByte(segment, at: victim.offset + RecordFraming.recordHeaderLength + victim.payload.count / 2)
        let before = try contentsOfTree(temporary.url)

        let error = expectJournalError(.corrupt) { try replayAll(directory, segmentSize: 32 << 10) }
        #expect(error?.corruption?.validRecordsAfter == inSegment.count - inSegment.count / 2 - 1)
        #expect(error?.corruption?.offset == victim.offset)
        #expect(try contentsOfTree(temporary.url) == before)
    }

    @Test func refusesZerosMidSegmentFollowedByValidRecords() throws {
        try write(makeEntries(40))
        let segment = try #require(try segmentPaths(directory).only)
        let inSegment = try records(ofSegment: segment)
        // A page that never reached the disk while later ones did: two records zeroed.
        let zeroed = inSegment[10].offset..<inSegment[12].offset
        try overwrite(segment, at: zeroed.lowerBound, with: [UInt8](repeating: 0, count: zeroed.count))
        let before = try contentsOfTree(temporary.url)

        let error = expectJournalError(.corrupt) { try replayAll(directory) }
        #expect(error?.corruption?.offset == zeroed.lowerBound)
        #expect(error?.corruption?.reason == .badMagic)
        #expect(error?.corruption?.validRecordsAfter == 28)
        #expect(error?.corruption?.nextValidOffset == inSegment[12].offset)
        #expect(try contentsOfTree(temporary.url) == before)
    }

    @Test func truncatesAZeroFilledTail() throws {
        try write(makeEntries(50))
        let segment = try #require(try segmentPaths(directory).last)
        let size = try fileSize(segment)
        try appendBytes([UInt8](repeating: 0, count: 4096), to: segment)

        let (_, report, replayed) = try replayAll(directory)
        #expect(replayed.map(\.1) == makeEntries(50))
        #expect(report.truncation?.offset == size)
        #expect(report.truncation?.bytesDiscarded == 4096)
        #expect(report.truncation?.reason == .zeroFilled)
        #expect(try fileSize(segment) == size)
    }

    @Test func truncatesALastRecordZeroedByAPowerLossWithItsGroup() throws {
        try write(makeEntries(50), batch: 10)
        let segment = try #require(try segmentPaths(directory).last)
        let inSegment = try records(ofSegment: segment)
        let last = try #require(inSegment.last)
        let size = try fileSize(segment)
        try overwrite(segment, at: last.offset, with: [UInt8](repeating: 0, count: size - last.offset))
        try appendBytes([UInt8](repeating: 0, count: 4096), to: segment)

        let (_, report, replayed) = try replayAll(directory)
        #expect(replayed.count == 40)
        #expect(report.truncation?.offset == inSegment[40].offset)
        #expect(report.truncation?.bytesDiscarded == size - inSegment[40].offset + 4096)
        #expect(report.truncation?.reason == .zeroFilled)
        #expect(report.truncation?.incompleteGroupRecords == 9)
    }

    @Test func deletesASegmentWhoseHeaderWasTornAfterARoll() throws {
        try write(makeEntries(30))
        let nextSegment = directory.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: 31)).path
        #expect(FileManager.default.createFile(atPath: nextSegment, contents: Data("CHIMEJ".utf8)))

        let (journal, report, replayed) = try replayAll(directory)
        #expect(replayed.count == 30)
        #expect(report.truncation?.segmentPath == nextSegment)
        #expect(report.truncation?.offset == 0)
        #expect(report.truncation?.bytesDiscarded == 6)
        #expect(!FileManager.default.fileExists(atPath: nextSegment))
        try journal.append(makeEntries(1, from: 30), using: testCodec)
        try journal.sync()
        #expect(journal.lastSequence == 31)
    }

    @Test func refusesDamageFollowedByValidRecordsAndChangesNothing() throws {
        try write(makeEntries(2_000), batch: 50, segmentSize: 32 << 10)
        let segments = try segmentPaths(directory)
        let middle = segments[segments.count / 2]
        let inMiddle = try records(ofSegment: middle)
        let victim = inMiddle[3]
        try flipByte(middle, at: victim.offset + RecordFraming.recordHeaderLength)
        let before = try contentsOfTree(temporary.url)

        let error = expectJournalError(.corrupt) { try replayAll(directory, segmentSize: 32 << 10) }
        #expect(error?.path == middle)
        #expect(error?.offset == UInt64(victim.offset))
        let later = segments[(segments.count / 2 + 1)...]
        let recordsAfter = try inMiddle.count - 4 + later.reduce(0) { $0 + (try records(ofSegment: $1).count) }
        #expect(error?.corruption?.validRecordsAfter == recordsAfter)
        #expect(error?.corruption?.laterSegmentPaths == Array(later))
        #expect(try contentsOfTree(temporary.url) == before)
    }

    @Test func segmentsBehindTheSnapshotAreNeitherReplayedNorChecked() throws {
        try write(makeEntries(2_000), batch: 50, segmentSize: 32 << 10)
        let segments = try segmentPaths(directory)
        let first = try records(ofSegment: segments[0])
        try flipByte(segments[0], at: first[3].offset + RecordFraming.recordHeaderLength)
        let covered = try #require(RecordFraming.firstSequence(
            ofSegmentFileName: URL(fileURLWithPath: segments[2]).lastPathComponent)) - 1

        var replayed: [UInt64] = []
        let (journal, report) = try FileJournal.open(
            directory: directory, fsync: .never, segmentSize: 32 << 10, replayingAfter: covered, codec: testCodec
        ) { sequence, _ in replayed.append(sequence) }
        try journal.close()
        #expect(replayed == Array((covered + 1)...2_000), "only what the snapshot does not cover")
        #expect(report.truncation == nil, "damage behind the snapshot is not the journal's tail")
        #expect(report.segmentCount == segments.count)
        #expect(report.lastSequence == 2_000)
    }

    @Test func refusesAMissingSegment() throws {
        try write(makeEntries(2_000), batch: 50, segmentSize: 32 << 10)
        let segments = try segmentPaths(directory)
        try FileManager.default.removeItem(atPath: segments[1])
        expectJournalError(.corrupt) { try replayAll(directory, segmentSize: 32 << 10) }
    }

    @Test func refusesASegmentOfANewerFormatAndChangesNothing() throws {
        try write(makeEntries(20))
        var header = Array("CHIMEJNL".utf8) + [UInt8(RecordFraming.segmentFormatVersion + 1), 0, 0, 0]
        header += withUnsafeBytes(of: UInt64(21).littleEndian) { Array($0) } + [0, 0, 0, 0, 9, 9, 9]
        let newer = directory.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: 21)).path
        #expect(FileManager.default.createFile(atPath: newer, contents: Data(header)))
        let before = try contentsOfTree(temporary.url)

        expectJournalError(.unsupportedVersion) { try replayAll(directory) }
        #expect(try contentsOfTree(temporary.url) == before)
    }

    @Test func reportsAnEntryKindFromANewerVersionAndChangesNothing() throws {
        try write(makeEntries(5))
        let segment = try #require(try segmentPaths(directory).last)
        var record: [UInt8] = []
        ([9] + Array("snoozed".utf8)).withUnsafeBytes {
            RecordFraming.appendRecord(sequence: 6, encoding: TestRecordCodec.encoding, payload: $0, to: &record)
        }
        try appendBytes(record, to: segment)
        let before = try contentsOfTree(temporary.url)

        let error = expectJournalError(.unknownEntryKind) { try replayAll(directory) }
        #expect(error?.message.contains("record 6 holds a record of kind 9") == true)
        #expect(try contentsOfTree(temporary.url) == before)

        try truncate(segment, to: try fileSize(segment) - record.count)
        record = []
        Array("{}".utf8).withUnsafeBytes {
            RecordFraming.appendRecord(sequence: 6, encoding: 9, payload: $0, to: &record)
        }
        try appendBytes(record, to: segment)
        expectJournalError(.unknownEntryKind) { try replayAll(directory) }
    }

    @Test func alwaysCallsFdatasyncOncePerSyncThatWrote() throws {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .always, codec: testCodec)
        for entry in makeEntries(25) {
            try journal.append([entry], using: testCodec)
            try journal.sync()
        }
        try journal.append(makeEntries(100, from: 25), using: testCodec)
        try journal.sync()
        try journal.sync()
        let statistics = journal.statistics
        #expect(statistics.fsyncCount == 26)
        #expect(statistics.syncCalls == 27)
        #expect(statistics.writeCalls == 26)
        #expect(statistics.durableSequence == 125)
        #expect(statistics.lastFsyncLatency != nil)
        try journal.close()
        #expect(try replayAll(directory).entries.count == 125)
    }

    @Test func oneSyncAcrossSegmentRollsWritesEachSegmentOnceAndMakesItDurable() throws {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .always, segmentSize: 8 << 10, codec: testCodec)
        // Many appends (the records of one append share a segment), one sync.
        for start in stride(from: 0, to: 600, by: 20) { try journal.append(makeEntries(20, from: start), using: testCodec) }
        try journal.sync()
        let statistics = journal.statistics
        #expect(statistics.segmentsCreated >= 5)
        #expect(statistics.segmentCount == statistics.segmentsCreated + 1)
        #expect(statistics.writeCalls == statistics.segmentsCreated + 1)
        #expect(statistics.fsyncCount == statistics.segmentsCreated + 1)
        #expect(statistics.directorySyncCount == 1)
        #expect(statistics.journalBytes == statistics.bytesWritten + RecordFraming.segmentHeaderLength)
        try journal.close()
        #expect(try replayAll(directory, segmentSize: 8 << 10).entries.map(\.1) == makeEntries(600))
    }

    @Test func neverCallsFdatasyncButStillWrites() throws {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, codec: testCodec)
        for entry in makeEntries(25) {
            try journal.append([entry], using: testCodec)
            try journal.sync()
        }
        let statistics = journal.statistics
        #expect(statistics.fsyncCount == 0)
        #expect(statistics.writtenSequence == 25)
        #expect(statistics.durableSequence == 0)
        #expect(try replayAll(directory).entries.count == 25)
    }

    @Test func intervalCallsFdatasyncOnlyOnceTheIntervalHasPassed() throws {
        let clock = ManualClock("2026-01-01T00:00:00Z")
        let (journal, _) = try FileJournal.open(
            directory: directory, fsync: .interval(milliseconds: 100),
            clock: JournalClock { clock.now.timeIntervalSinceReferenceDate }, codec: testCodec)
        try journal.append(makeEntries(1), using: testCodec)
        try journal.sync()
        #expect(journal.statistics.fsyncCount == 0)
        clock.advance(by: 0.05)
        try journal.append(makeEntries(1, from: 1), using: testCodec)
        try journal.sync()
        #expect(journal.statistics.fsyncCount == 0)
        clock.advance(by: 0.06)
        try journal.sync()
        #expect(journal.statistics.fsyncCount == 1)
        #expect(journal.statistics.durableSequence == 2)

        clock.advance(by: 1)
        try journal.sync()
        #expect(journal.statistics.fsyncCount == 1, "nothing new to make durable")
        try journal.append(makeEntries(1, from: 2), using: testCodec)
        try journal.sync()
        #expect(journal.statistics.fsyncCount == 2, "the interval has long passed")
        try journal.append(makeEntries(1, from: 3), using: testCodec)
        try journal.sync()
        #expect(journal.statistics.fsyncCount == 2)
        clock.advance(by: 0.15)
        try journal.sync()
        #expect(journal.statistics.fsyncCount == 3, "an idle sync makes the last burst durable")
    }

    @Test func removesSegmentsCoveredThroughASequence() throws {
        try write(makeEntries(2_000), batch: 50, segmentSize: 32 << 10)
        let (journal, report, _) = try replayAll(directory, segmentSize: 32 << 10)
        let firsts = try segmentPaths(directory).map {
            RecordFraming.firstSequence(ofSegmentFileName: URL(fileURLWithPath: $0).lastPathComponent)!
        }
        #expect(report.segmentCount == firsts.count)
        // Through the last record of the third segment: the first three go.
        #expect(try journal.removeSegments(through: firsts[3] - 1) == 3)
        #expect(journal.firstSequence == firsts[3])
        // One short of the end of the (new) first segment: it stays.
        #expect(try journal.removeSegments(through: firsts[4] - 2) == 0)
        #expect(try journal.removeSegments(through: .max) == firsts.count - 4)
        #expect(try segmentPaths(directory).count == 1)
        try journal.close()
        expectJournalError(.corrupt) { try replayAll(directory, segmentSize: 32 << 10) }
        var replayed: [UInt64] = []
        let (_, reopened) = try FileJournal.open(directory: directory, replayingAfter: firsts[firsts.count - 1] - 1, codec: testCodec) {
            sequence, _ in replayed.append(sequence)
        }
        #expect(reopened.lastSequence == 2_000)
        #expect(replayed == Array(firsts[firsts.count - 1]...2_000))
    }

    @Test func refusesCallsAfterClose() throws {
        let (journal, _) = try FileJournal.open(directory: directory, codec: testCodec)
        try journal.close()
        expectJournalError(.closed) { try journal.append(makeEntries(1), using: testCodec) }
        expectJournalError(.closed) { try journal.sync() }
    }
}
