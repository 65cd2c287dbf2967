import ChimeCore
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

@Suite struct StoreRepairTests {
    let temporary: TemporaryDirectory
    var directory: URL { temporary.url.appendingPathComponent("store") }
    var journalDirectory: URL { directory.appendingPathComponent("journal") }

    init() throws { temporary = try TemporaryDirectory(prefix: "repair") }

    /// Writes `count` entries into the store's journal, then closes it.
    func populate(_ count: Int, segmentSize: Int = FileJournal.defaultSegmentSize) throws {
        var options = FileStore.Options()
        options.segmentSize = segmentSize
        let (store, _) = try FileStore.open(directory: directory, fsync: .never, options: options, codec: testCodec)
        for start in stride(from: 0, to: count, by: 50) {
            try store.append(makeEntries(min(50, count - start), from: start), using: testCodec)
            try store.sync()
        }
        try store.close()
    }

    /// Every entry a store opened on `directory` recovers.
    func recoveredEntries() throws -> (entries: [TestRecord], lastSequence: UInt64) {
        let (store, recovery) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        defer { try? store.close() }
        return (recovery.entries, store.lastSequence)
    }

    @Test func verifiesACleanStore() throws {
        try populate(120)
        let before = try contentsOfTree(directory)
        let result = try FileStore.verify(directory: directory, codec: testCodec)
        #expect(result.verdict == .clean)
        #expect(result.recordsChecked == 120)
        #expect(result.lastSequence == 120)
        #expect(result.segmentCount == 1)
        #expect(result.tornTail == nil && result.corruption == nil && result.refusal == nil)
        #expect(try contentsOfTree(directory) == before)
    }

    @Test func verifyReportsATornTailWithItsIncompleteGroupAsRecoverableAndChangesNothing() throws {
        // Appends of 50, 50 and 20: the torn last record's group holds records 101...120.
        try populate(120)
        let segment = try #require(try segmentPaths(journalDirectory).only)
        let groupStart = try records(ofSegment: segment)[100].offset
        let size = try fileSize(segment)
        try truncate(segment, to: size - 3)
        let before = try contentsOfTree(directory)

        let result = try FileStore.verify(directory: directory, codec: testCodec)
        #expect(result.verdict == .recoverable)
        #expect(result.tornTail?.offset == groupStart)
        #expect(result.tornTail?.bytesDiscarded == size - 3 - groupStart)
        #expect(result.tornTail?.reason == .truncatedPayload)
        #expect(result.tornTail?.incompleteGroupRecords == 19)
        #expect(result.lastSequence == 100)
        #expect(try contentsOfTree(directory) == before)
    }

    @Test func repairKeepsACopyAndSalvagesEveryValidRecordAfterAFlippedByte() throws {
        try populate(300)
        let segment = try #require(try segmentPaths(journalDirectory).only)
        let inSegment = try records(ofSegment: segment)
        let victim = inSegment[149]
        let victimLength = inSegment[150].offset - victim.offset
        try flipByte(segment, at: victim.offset + RecordFraming.recordHeaderLength)
        let damagedBytes = try Data(contentsOf: URL(fileURLWithPath: segment))

        let verified = try FileStore.verify(directory: directory, codec: testCodec)
        #expect(verified.verdict == .corrupt)
        #expect(verified.corruption?.offset == victim.offset)
        #expect(verified.corruption?.validRecordsAfter == 150)
        expectJournalError(.corrupt) { try FileStore.open(directory: directory, fsync: .never, codec: testCodec) }

        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let report = try FileStore.repair(directory: directory, at: now, codec: testCodec)
        let repaired = try #require(report.segments.only)
        #expect(repaired.path == segment)
        #expect(repaired.copyPath == segment + ".damaged-20270115T080000Z")
        #expect(try Data(contentsOf: URL(fileURLWithPath: repaired.copyPath)) == damagedBytes, "the copy is the damaged original")
        #expect(repaired.recordsKept == 299)
        #expect(repaired.dropped.map { "\($0)" } == ["\(victimLength) bytes at offset \(victim.offset) (checksum_mismatch)"])
        #expect(repaired.dropped.first?.isTornTail == false)
        // xor 0x5A on the kind byte: four bits, no single-bit correction, and no kind the
        // codec knows.
        #expect(repaired.dropped.first.map { [$0.exactRecords, $0.possiblyAlteredRecords, $0.unreadableRecords] } == [0, 0, 1])
        #expect(repaired.gapRecordsWritten == 1)
        #expect(repaired.sequencesLost == 1)
        #expect(repaired.bytesAfter == damagedBytes.count - victimLength + RecordFraming.recordHeaderLength + 8)
        #expect(report.bytesDropped == victimLength)
        #expect(report.after.verdict == .clean)
        #expect(report.after.gapRecords == 1)
        #expect(report.after.recordsChecked == 299)

        var expected = makeEntries(300)
        expected.remove(at: 149)
        let recovered = try recoveredEntries()
        #expect(recovered.entries == expected)
        #expect(recovered.lastSequence == 300)
    }

    @Test func repairSalvagesRecordsInLaterSegmentsAndBridgesTheLostSequenceNumbers() throws {
        try populate(2_000, segmentSize: 32 << 10)
        let segments = try segmentPaths(journalDirectory)
        let middle = segments[segments.count / 2]
        let inMiddle = try records(ofSegment: middle)
        // The last two records of a middle segment: the gap reaches the next segment's start.
        let victims = inMiddle.suffix(2)
        try overwrite(middle, at: victims[victims.startIndex].offset, with: [0x00, 0x01, 0x02])
        try truncate(middle, to: try fileSize(middle) - 5)
        let before = try contentsOfTree(directory)
        let verified = try FileStore.verify(directory: directory, codec: testCodec)
        #expect(verified.verdict == .corrupt)
        #expect(try contentsOfTree(directory) == before)

        let report = try FileStore.repair(directory: directory, codec: testCodec)
        let repaired = try #require(report.segments.only)
        #expect(repaired.path == middle)
        #expect(repaired.recordsKept == inMiddle.count - 2)
        #expect(repaired.gapRecordsWritten == 1)
        #expect(repaired.sequencesLost == 2)
        #expect(report.after.verdict == .clean)
        for path in segments where path != middle {
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before["journal/" + URL(fileURLWithPath: path).lastPathComponent], "\(path) untouched")
        }
        let lost = Set(victims.map { Int($0.sequence) - 1 })
        let expected = makeEntries(2_000).enumerated().filter { !lost.contains($0.offset) }.map(\.element)
        let recovered = try recoveredEntries()
        #expect(recovered.entries == expected)
        #expect(recovered.lastSequence == 2_000)
    }

    @Test func aDamagedHeaderBeforeValidRecordsIsRefusedThenRepairedWithEveryRecord() throws {
        try populate(2_000, segmentSize: 32 << 10)
        let segments = try segmentPaths(journalDirectory)
        let last = try #require(segments.last)
        let inLast = try records(ofSegment: last)
        // Before: a damaged header was taken for a segment torn by a roll and deleted with
        // every record in it.
        try flipByte(last, at: 14)
        let before = try contentsOfTree(directory)

        let error = expectJournalError(.corrupt) { try FileStore.open(directory: directory, fsync: .never, codec: testCodec) }
        #expect(error?.corruption?.offset == 0)
        #expect(error?.corruption?.reason == .badSegmentHeader)
        #expect(error?.corruption?.validRecordsAfter == inLast.count)
        #expect(error?.corruption?.nextValidOffset == RecordFraming.segmentHeaderLength)
        #expect(try contentsOfTree(directory) == before)

        let report = try FileStore.repair(directory: directory, codec: testCodec)
        let repaired = try #require(report.segments.only)
        #expect(repaired.path == last)
        #expect(repaired.recordsKept == inLast.count)
        #expect(repaired.dropped.map { "\($0)" } == ["\(RecordFraming.segmentHeaderLength) bytes at offset 0 (bad_segment_header)"])
        #expect(repaired.gapRecordsWritten == 0)
        #expect(repaired.bytesAfter == repaired.bytesBefore)
        #expect(report.after.verdict == .clean)
        let recovered = try recoveredEntries()
        #expect(recovered.entries == makeEntries(2_000))
        #expect(recovered.lastSequence == 2_000)
    }

    @Test func repairOfACleanStoreChangesNothing() throws {
        try populate(60)
        let before = try contentsOfTree(directory)
        let report = try FileStore.repair(directory: directory, codec: testCodec)
        #expect(report.segments.isEmpty)
        #expect(report.after.verdict == .clean)
        var after = try contentsOfTree(directory)
        // LOCK holds the pid of its last holder, the repair, and LEASE its lease.
        after["LOCK"] = before["LOCK"]
        after["LEASE"] = before["LEASE"]
        #expect(after == before)
    }

    @Test func repairRefusesAStoreAnotherProcessHolds() throws {
        try populate(10)
        let (store, _) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        defer { try? store.close() }
        expectJournalError(.locked) { try FileStore.repair(directory: directory, codec: testCodec) }
    }
}
