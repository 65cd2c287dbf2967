import ChimeCore
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

/// The records of one append are a group (`RecordFraming`): recovery, `verify` and `repair`
/// take a group whole or not at all, wherever a crash cut its write.
@Suite struct JournalGroupTests {
    let temporary: TemporaryDirectory
    let directory: URL
    var journalDirectory: URL { directory.appendingPathComponent("journal") }

    init() throws {
        temporary = try TemporaryDirectory(prefix: "journal-groups")
        directory = temporary.url.appendingPathComponent("store")
    }

    /// Appends each group with one `append`, then closes the store.
    func populate(_ groups: [[TestRecord]], segmentSize: Int = FileJournal.defaultSegmentSize) throws {
        var options = FileStore.Options()
        options.segmentSize = segmentSize
        let (store, _) = try FileStore.open(directory: directory, fsync: .never, options: options, codec: testCodec)
        for group in groups {
            try store.append(group, using: testCodec)
            try store.sync()
        }
        try store.close()
    }

    /// Groups of 3, 5 and 4 records (12 in all).
    static let groups = [makeEntries(3), makeEntries(5, from: 3), makeEntries(4, from: 8)]

    @Test func aGroupCutAtEveryRecordBoundaryIsDroppedWholeAsATornTail() throws {
        try populate(Self.groups)
        let segment = try #require(try segmentPaths(journalDirectory).only)
        let original = try Data(contentsOf: URL(fileURLWithPath: segment))
        let offsets = try records(ofSegment: segment).map(\.offset) + [original.count]
        // Cut after k records of the last group: k = 0 and k = 4 are group boundaries.
        let lastGroupStart = offsets[8]
        for kept in 0...4 {
            try original.prefix(offsets[8 + kept]).write(to: URL(fileURLWithPath: segment))
            let verified = try FileStore.verify(directory: directory, codec: testCodec)
            let (store, recovery) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
            try store.close()
            if kept == 0 || kept == 4 {
                #expect(verified.verdict == .clean, "cut after \(kept)")
                #expect(recovery.report.truncation == nil, "cut after \(kept)")
                #expect(recovery.entries == Array(Self.groups.joined().prefix(8 + kept)), "cut after \(kept)")
                continue
            }
            #expect(verified.verdict == .recoverable, "cut after \(kept)")
            #expect(verified.tornTail?.offset == lastGroupStart && verified.tornTail?.incompleteGroupRecords == kept)
            #expect(verified.lastSequence == 8)
            #expect(recovery.entries == Array(Self.groups.joined().prefix(8)), "cut after \(kept): the whole group goes")
            let truncation = try #require(recovery.report.truncation)
            #expect(truncation.offset == lastGroupStart)
            #expect(truncation.bytesDiscarded == offsets[8 + kept] - lastGroupStart)
            #expect(truncation.reason == .incompleteGroup)
            #expect(truncation.incompleteGroupRecords == kept)
            #expect(try fileSize(segment) == lastGroupStart)
        }
    }

    @Test func aGroupCutAtRandomByteOffsetsIsDroppedWholeAsATornTail() throws {
        try populate(Self.groups)
        let segment = try #require(try segmentPaths(journalDirectory).only)
        let original = try Data(contentsOf: URL(fileURLWithPath: segment))
        let inSegment = try records(ofSegment: segment)
        let middleGroup = inSegment[3].offset..<inSegment[8].offset
        var random = SeededRandomNumberGenerator(seed: 36)
        // Cuts inside the middle group (the last one lost with it) and inside the last group.
        var cuts = (0..<60).map { _ in Int.random(in: (middleGroup.lowerBound + 1)..<middleGroup.upperBound, using: &random) }
        cuts += (0..<60).map { _ in Int.random(in: (inSegment[8].offset + 1)..<original.count, using: &random) }
        for cut in cuts {
            try original.prefix(cut).write(to: URL(fileURLWithPath: segment))
            let groupStart = cut < middleGroup.upperBound ? middleGroup.lowerBound : inSegment[8].offset
            let kept = cut < middleGroup.upperBound ? 3 : 8
            let verified = try FileStore.verify(directory: directory, codec: testCodec)
            #expect(verified.verdict == .recoverable, "cut at \(cut)")
            #expect(verified.tornTail?.offset == groupStart, "cut at \(cut)")
            let (store, recovery) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
            try store.close()
            #expect(recovery.entries == Array(Self.groups.joined().prefix(kept)), "cut at \(cut)")
            #expect(recovery.report.truncation?.offset == groupStart, "cut at \(cut)")
            #expect(recovery.report.truncation?.bytesDiscarded == cut - groupStart, "cut at \(cut)")
            #expect(try fileSize(segment) == groupStart)
        }
    }

    @Test func aGroupIsNeverSplitAcrossSegments() throws {
        // 2 KiB segments; groups of 1 to 30 records of 31 to 131 bytes, some larger than a segment.
        var random = SeededRandomNumberGenerator(seed: 7)
        var groups: [[TestRecord]] = []
        var written = 0
        for _ in 0..<60 {
            let count = Int.random(in: 1...30, using: &random)
            groups.append(makeEntries(count, from: written))
            written += count
        }
        try populate(groups, segmentSize: 2048)
        var boundaries = Set([UInt64(0)])
        var sequence: UInt64 = 0
        for group in groups {
            sequence += UInt64(group.count)
            boundaries.insert(sequence)
        }
        let segments = try segmentPaths(journalDirectory)
        #expect(segments.count > 10)
        for path in segments {
            let inSegment = try records(ofSegment: path)
            let first = try #require(inSegment.first)
            #expect(boundaries.contains(first.sequence - 1), "\(path) starts a group")
            #expect(inSegment.last?.continuesGroup == false, "\(path) ends a group")
        }
    }

    @Test func anIncompleteGroupFollowedByValidRecordsIsCorruptionAndRepairKeepsItsRecords() throws {
        // 1 KiB segments: the third group (16 records) starts a segment of its own.
        let groups = [makeEntries(2), makeEntries(3, from: 2), makeEntries(16, from: 5)]
        try populate(groups, segmentSize: 1024)
        let segments = try segmentPaths(journalDirectory)
        #expect(segments.count == 2)
        // The first segment loses the last record of its second group, exactly at its start.
        let firstSegment = try records(ofSegment: segments[0])
        #expect(firstSegment.count == 5)
        try truncate(segments[0], to: firstSegment[4].offset)
        let before = try contentsOfTree(directory)

        let verified = try FileStore.verify(directory: directory, codec: testCodec)
        #expect(verified.verdict == .corrupt)
        let corruption = try #require(verified.corruption)
        #expect(corruption.reason == .incompleteGroup)
        #expect(corruption.offset == firstSegment[2].offset)
        #expect(corruption.validRecordsAfter == 16)
        #expect(corruption.laterSegmentPaths == [segments[1]])
        let refused = expectJournalError(.corrupt) { try FileStore.open(directory: directory, fsync: .never, codec: testCodec) }
        #expect(refused?.corruption == corruption)
        #expect(try contentsOfTree(directory) == before)

        // Repair keeps both survivors of the cut group (the second now ends it) and bridges
        // the lost sequence number 5.
        let repaired = try FileStore.repair(directory: directory, codec: testCodec)
        let segment = try #require(repaired.segments.only)
        #expect(segment.path == segments[0])
        #expect(segment.groupsClosed == 1)
        #expect(segment.recordsKept == 4)
        #expect(segment.lostSequences == [5..<6])
        #expect(repaired.after.verdict == .clean)
        let rewritten = try records(ofSegment: segments[0])
        #expect(rewritten.map(\.continuesGroup) == [true, false, true, false])
        let (store, recovery) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        try store.close()
        #expect(recovery.entries == makeEntries(4) + makeEntries(16, from: 5))
    }

    @Test func repairDropsAnIncompleteFinalGroupWithTheTornTail() throws {
        try populate(Self.groups)
        let segment = try #require(try segmentPaths(journalDirectory).only)
        let inSegment = try records(ofSegment: segment)
        let size = try fileSize(segment)
        try truncate(segment, to: size - 7)

        let repaired = try FileStore.repair(directory: directory, codec: testCodec)
        let plan = try #require(repaired.segments.only)
        #expect(plan.dropped == [
            StoreRepairReport.DroppedRange(
                offset: inSegment[8].offset, bytes: size - 7 - inSegment[8].offset, reason: "truncated_payload", isTornTail: true)
        ])
        #expect(plan.recordsKept == 8 && plan.groupsClosed == 0 && plan.gapRecordsWritten == 0)
        #expect(!repaired.loss.isAcknowledgedDataLost)
        #expect(repaired.after.verdict == .clean)
        #expect(repaired.after.lastSequence == 8)

        // Cut exactly after a record: the group's whole records are the torn tail.
        try populate([makeEntries(3, from: 8)])
        let again = try #require(try segmentPaths(journalDirectory).only)
        let grown = try records(ofSegment: again)
        try truncate(again, to: grown[10].offset)
        let second = try FileStore.repair(directory: directory, codec: testCodec)
        #expect(second.segments.only?.dropped.map(\.reason) == ["incomplete_group"])
        #expect(second.segments.only?.dropped.first?.isTornTail == true)
        #expect(second.after.verdict == .clean && second.after.lastSequence == 8)
    }

    @Test func repairClosesAGroupThatCorruptionCutAndKeepsItsSurvivors() throws {
        try populate(Self.groups + [makeEntries(2, from: 12)])
        let segment = try #require(try segmentPaths(journalDirectory).only)
        let inSegment = try records(ofSegment: segment)
        // The third record of the middle group (sequence 6) is damaged; valid records follow.
        try flipByte(segment, at: inSegment[5].offset + RecordFraming.recordHeaderLength + 3)
        expectJournalError(.corrupt) { try FileStore.open(directory: directory, fsync: .never, codec: testCodec) }

        let repaired = try FileStore.repair(directory: directory, codec: testCodec)
        let plan = try #require(repaired.segments.only)
        #expect(plan.groupsClosed == 1)
        #expect(plan.lostSequences == [6..<7])
        #expect(repaired.after.verdict == .clean)
        let (store, recovery) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        try store.close()
        var expected = makeEntries(14)
        expected.remove(at: 5)
        #expect(recovery.entries == expected)
        // 1-5 as written but 5 now ends its group; the gap; 7 and 8 still end theirs.
        let marks = try records(ofSegment: segment).map(\.continuesGroup)
        #expect(marks == [true, true, false, true, false, true, false, true, true, true, false, true, false])
    }

    @Test func aGapRecordInsideAGroupEndsItAsIncomplete() {
        var buffer = RecordFraming.makeSegmentHeader(firstSequence: 1)
        Array("one".utf8).withUnsafeBytes {
            RecordFraming.appendRecord(sequence: 1, encoding: TestRecordCodec.encoding, payload: $0, to: &buffer)
        }
        let groupStart = buffer.count
        Array("two".utf8).withUnsafeBytes {
            RecordFraming.appendRecord(sequence: 2, encoding: TestRecordCodec.encoding, continuesGroup: true, payload: $0, to: &buffer)
        }
        let gap = buffer.count
        RecordFraming.appendGapRecord(firstMissing: 3, count: 1, to: &buffer)
        Array("four".utf8).withUnsafeBytes {
            RecordFraming.appendRecord(sequence: 4, encoding: TestRecordCodec.encoding, payload: $0, to: &buffer)
        }
        var reader = RecordReader(bytes: buffer, startingAt: RecordFraming.segmentHeaderLength, expectedSequence: 1)
        var read: [UInt64] = []
        while let record = reader.next() { read.append(record.sequence) }
        #expect(read == [1])
        #expect(reader.offset == groupStart)
        #expect(reader.expectedSequence == 2)
        #expect(reader.damage == RecordDamage(
            offset: groupStart, bytesDiscarded: buffer.count - groupStart, reason: .incompleteGroup, frameOffset: gap,
            withheldRecords: 1))
        #expect(RecordReader.validFrames(in: buffer, from: gap).map(\.sequence) == [3, 4])
    }

    @Test func readsAGroupOnlyOnceItsLastRecordIsThere() {
        var buffer = RecordFraming.makeSegmentHeader(firstSequence: 10)
        var ends: [Int] = []
        for index in 0..<4 {
            Array("record \(index)".utf8).withUnsafeBytes {
                RecordFraming.appendRecord(
                    sequence: 10 + UInt64(index), encoding: TestRecordCodec.encoding, continuesGroup: index == 1 || index == 2,
                    payload: $0, to: &buffer)
            }
            ends.append(buffer.count)
        }
        // Groups: [10], [11, 12, 13].
        for cut in RecordFraming.segmentHeaderLength...buffer.count {
            var reader = RecordReader(bytes: Array(buffer.prefix(cut)), startingAt: RecordFraming.segmentHeaderLength, expectedSequence: 10)
            var read: [UInt64] = []
            var marks: [Bool] = []
            while let record = reader.next() {
                read.append(record.sequence)
                marks.append(record.continuesGroup)
            }
            switch cut {
            case ..<ends[0]:
                #expect(read.isEmpty, "cut at \(cut)")
            case ..<ends[3]:
                #expect(read == [10], "cut at \(cut)")
                #expect(reader.offset == ends[0], "cut at \(cut)")
                #expect(reader.damage?.offset == (cut == ends[0] ? nil : ends[0]), "cut at \(cut)")
                let whole = ends[1...].filter { $0 <= cut }.count
                if cut > ends[0] { #expect(reader.damage?.withheldRecords == whole, "cut at \(cut)") }
            default:
                #expect(read == [10, 11, 12, 13])
                #expect(marks == [false, true, true, false])
                #expect(reader.damage == nil)
                #expect(reader.offset == buffer.count)
                #expect(reader.expectedSequence == 14)
            }
        }
    }

    /// A segment of format 1 (as every store before groups wrote it) holding `entries`.
    static func formatOneSegment(_ entries: [TestRecord], firstSequence: UInt64 = 1) -> [UInt8] {
        var bytes = RecordFraming.makeSegmentHeader(firstSequence: firstSequence, formatVersion: 1)
        for (index, entry) in entries.enumerated() {
            testCodec.encode(entry).bytes.withUnsafeBytes {
                RecordFraming.appendRecord(
                    sequence: firstSequence + UInt64(index), encoding: TestRecordCodec.encoding, recordVersion: 1, payload: $0,
                    to: &bytes)
            }
        }
        return bytes
    }

    @Test func aJournalOfFormatOneReadsEachRecordAsAGroupOfOne() throws {
        try FileManager.default.createDirectory(at: journalDirectory, withIntermediateDirectories: true)
        let old = Self.formatOneSegment(makeEntries(10))
        let path = journalDirectory.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: 1)).path
        // Its last record torn: only that record goes, as before groups.
        try Data(old.dropLast(5)).write(to: URL(fileURLWithPath: path))
        let lastOffset = try #require(RecordReader.validFrames(in: old, from: RecordFraming.segmentHeaderLength, recordVersion: 1).last?.offset)
        let verified = try FileStore.verify(directory: directory, codec: testCodec)
        #expect(verified.verdict == .recoverable)
        #expect(verified.tornTail?.offset == lastOffset && verified.tornTail?.incompleteGroupRecords == 0)
        let (store, recovery) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        #expect(recovery.entries == makeEntries(9))
        #expect(recovery.report.truncation?.reason == .truncatedPayload)
        try store.append(makeEntries(2, from: 9), using: testCodec)
        try store.close()
        // The old segment keeps its format and bytes; the new group went to a segment of format 2.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(old.prefix(lastOffset)))
        let segments = try segmentPaths(journalDirectory)
        #expect(segments.count == 2)
        #expect(try records(ofSegment: segments[1]).map(\.continuesGroup) == [true, false])
        let (_, reopened) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        #expect(reopened.entries == makeEntries(11))
    }

    @Test func aRecordOfFormatTwoInASegmentOfFormatOneIsDamage() throws {
        var bytes = Self.formatOneSegment(makeEntries(2))
        let intruder = bytes.count
        Array("new".utf8).withUnsafeBytes {
            RecordFraming.appendRecord(sequence: 3, encoding: TestRecordCodec.encoding, payload: $0, to: &bytes)
        }
        var reader = RecordReader(bytes: bytes, startingAt: RecordFraming.segmentHeaderLength, expectedSequence: 1, recordVersion: 1)
        var count = 0
        while reader.next() != nil { count += 1 }
        #expect(count == 2)
        #expect(reader.damage?.reason == .badRecordHeader && reader.damage?.offset == intruder)
    }

    @Test func anEmptyTailSegmentOfFormatOneIsReplacedByOneOfFormatTwo() throws {
        try FileManager.default.createDirectory(at: journalDirectory, withIntermediateDirectories: true)
        let first = Self.formatOneSegment(makeEntries(3))
        try Data(first).write(to: journalDirectory.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: 1)))
        let empty = journalDirectory.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: 4))
        try Data(Self.formatOneSegment([], firstSequence: 4)).write(to: empty)

        let (store, recovery) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        #expect(recovery.entries == makeEntries(3))
        #expect(try Data(contentsOf: empty) == Data(RecordFraming.makeSegmentHeader(firstSequence: 4)))
        try store.append(makeEntries(2, from: 3), using: testCodec)
        try store.close()
        #expect(try segmentPaths(journalDirectory).count == 2)
        let (_, reopened) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        #expect(reopened.entries == makeEntries(5))
    }
}
