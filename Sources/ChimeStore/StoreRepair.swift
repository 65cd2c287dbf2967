import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileStore {
    /// Salvages a damaged journal: takes the store lock, keeps a copy of each damaged
    /// segment beside it (`<segment>.damaged-<UTC time>`), and rewrites that segment with
    /// every valid record it holds, in sequence order, with a gap record (see
    /// ``RecordFraming``) where sequence numbers were lost, so the journal opens again.
    ///
    /// A segment is damaged when some of its bytes hold no valid record (torn tail
    /// included), its header fails its checks, or its records do not reach the next
    /// segment's first sequence number. Valid records are found by searching every byte
    /// offset (``RecordReader/validFrames(in:from:recordVersion:)``); one whose sequence number is not
    /// above the previous kept one, or not below the next segment's first, is dropped as
    /// out of order. Undamaged segments and snapshots are not touched. Every segment is
    /// read and checked before the first file changes. A rewritten segment keeps its format.
    ///
    /// Groups of records (``RecordFraming``): a group the damage cut in the middle keeps its
    /// surviving records, the last one before the damage re-framed to end the group
    /// (`groupsClosed`: its records were written whole and may have been acknowledged, so
    /// they are salvaged like any other and the lost ones named); an incomplete group at the
    /// journal's very end, followed only by a torn tail, is dropped with that tail (it was
    /// never acknowledged, and a start would cut it too).
    /// - Parameters:
    ///   - directory: the store directory.
    ///   - now: names the copies (UTC, to the second).
    ///   - codec: reads what dropped records were about, and checks the store afterwards.
    /// - Returns: what was rewritten and dropped, and the store verified again.
    /// - Throws: `JournalError` `.locked` while a coordinator holds the store;
    ///   `.unsupportedVersion` for a segment of a newer format (nothing changed); `.io`.
    public static func repair<Codec: JournalRecordCodec>(
        directory: URL, at now: Date = Date(), codec: Codec
    ) throws -> StoreRepairReport {
        guard FileCalls.isDirectory(directory.path) else {
            throw JournalError(.io, path: directory.path, message: "no store directory here")
        }
        let lock = try StoreLock.tryAcquire(directory: directory)
        defer { lock.release() }
        let journalDirectory = directory.appendingPathComponent("journal")
        let plans = try plan(journal: journalDirectory, codec: codec)

        // Everything is checked: from here on the directory changes.
        let stamp = Self.copyStamp(now)
        var copyPaths: [String] = []
        for plan in plans {
            var copyPath = "\(plan.path).damaged-\(stamp)"
            var suffix = 1
            while try FileCalls.fileSize(atPath: copyPath) != nil {
                copyPath = "\(plan.path).damaged-\(stamp)-\(suffix)"
                suffix += 1
            }
            try writeDurably(plan.original, to: copyPath)
            copyPaths.append(copyPath)
        }
        // The copies are durable before any original is replaced.
        if !plans.isEmpty { try FileCalls.syncDirectory(journalDirectory.path) }
        var segments: [StoreRepairReport.Segment] = []
        for (plan, copyPath) in zip(plans, copyPaths) {
            let temporaryPath = plan.path + ".repair.tmp"
            try writeDurably(plan.rewritten, to: temporaryPath)
            try FileCalls.renameFile(temporaryPath, to: plan.path)
            segments.append(StoreRepairReport.Segment(
                path: plan.path, copyPath: copyPath, recordsKept: plan.recordsKept, dropped: plan.dropped,
                gapRecordsWritten: plan.gapRecordsWritten, sequencesLost: plan.sequencesLost,
                lostSequences: plan.lostSequences, groupsClosed: plan.groupsClosed, bytesBefore: plan.original.count,
                bytesAfter: plan.rewritten.count))
        }
        if !plans.isEmpty { try FileCalls.syncDirectory(journalDirectory.path) }
        lock.release()
        return StoreRepairReport(directory: directory.path, segments: segments, after: try verify(directory: directory, codec: codec))
    }

    /// How a repair would rewrite each damaged segment of `journal` (reads only).
    /// - Throws: `JournalError` `.unsupportedVersion` for a segment of a newer format; `.io`.
    static func plan<Codec: JournalRecordCodec>(journal: URL, codec: Codec) throws -> [SegmentPlan] {
        let files = try FileJournal.segmentFiles(in: journal)
        var plans: [SegmentPlan] = []
        for (index, file) in files.enumerated() {
            let bytes = try FileCalls.readFile(file.path)
            let next = index + 1 < files.count ? files[index + 1].firstSequence : nil
            let plan = try SegmentPlan(
                bytes: bytes, path: file.path, firstSequence: file.firstSequence, nextSegmentStart: next, codec: codec)
            if plan.needsRewrite { plans.append(plan) }
        }
        return plans
    }

    /// `20261201T114500Z`: the time a repair names its copies with.
    static func copyStamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: date)
    }

    /// Creates `path` (it must not exist) with `bytes`, `fsync`ed.
    private static func writeDurably(_ bytes: [UInt8], to path: String) throws {
        let descriptor = try FileCalls.openFile(path, O_WRONLY | O_CREAT | O_TRUNC)
        defer { FileCalls.closeFile(descriptor) }
        try bytes.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, path: path) }
        try FileCalls.syncFile(descriptor, path: path)
    }
}

/// How one segment is rewritten: its valid records in order, gap records where sequence
/// numbers are missing, and the byte ranges left out, in the segment's own format.
///
/// Groups (``RecordFraming``): a group whose records are all kept is copied as it was. A
/// group that damage cut in the middle — records written whole, and possibly acknowledged,
/// on both sides of the damage — keeps its surviving records, and the last survivor before
/// the damage is re-framed without the group mark so that the group ends there
/// (`groupsClosed`); the survivors after the damage keep their marks. An incomplete group at
/// the very end of the journal, where only a torn tail follows, is dropped with the torn tail,
/// as a start would cut it.
struct SegmentPlan {
    let path: String
    let original: [UInt8]
    var rewritten: [UInt8]
    var recordsKept = 0
    var dropped: [StoreRepairReport.DroppedRange] = []
    var gapRecordsWritten = 0
    var sequencesLost: UInt64 = 0
    var lostSequences: [Range<UInt64>] = []
    /// Groups cut by damage whose last surviving record was re-framed to end them.
    var groupsClosed = 0
    var needsRewrite = false
    /// Whether this is the journal's last segment (its damaged end may be a torn tail).
    let isLastSegment: Bool
    /// The record version of the segment's format, kept by the rewrite.
    let recordVersion: UInt8
    /// Kept records of a group whose last record has not come yet, with their ends.
    private var openGroup: [(record: RecordReader.Record, end: Int)] = []

    /// - Throws: `JournalError` `.unsupportedVersion` for a segment of a newer format.
    init<Codec: JournalRecordCodec>(
        bytes: [UInt8], path: String, firstSequence: UInt64, nextSegmentStart: UInt64?, codec: Codec
    ) throws {
        self.path = path
        original = bytes
        isLastSegment = nextSegmentStart == nil
        var searchFrom = 0
        var format = RecordFraming.segmentFormatVersion
        var damagedHeader: RecordDamage.Reason?
        switch RecordFraming.checkSegmentHeader(bytes) {
        case .newerVersion(let version):
            throw FileJournal.unsupported(version, path: path)
        case .valid(let headerSequence, let headerFormat) where headerSequence == firstSequence:
            searchFrom = RecordFraming.segmentHeaderLength
            format = headerFormat
        case .valid(_, let headerFormat):
            damagedHeader = .badSegmentHeader
            format = headerFormat
        case .damaged:
            damagedHeader = .badSegmentHeader
            // The format its records are in: the first frame of any version this code reads.
            let header = min(bytes.count, RecordFraming.segmentHeaderLength)
            if let first = RecordReader.validFrames(in: bytes, from: header, recordVersion: nil).first {
                format = UInt32(bytes[first.offset + 2])
            }
        }
        recordVersion = RecordFraming.recordVersion(ofSegmentFormat: format)
        rewritten = RecordFraming.makeSegmentHeader(firstSequence: firstSequence, formatVersion: format)
        if let damagedHeader {
            // Rewritten from the name; its bytes are searched for records from the start.
            needsRewrite = true
            dropped.append(.init(offset: 0, bytes: min(bytes.count, RecordFraming.segmentHeaderLength), reason: damagedHeader.rawValue))
            searchFrom = min(bytes.count, RecordFraming.segmentHeaderLength)
        }
        var expected = firstSequence
        var covered = searchFrom
        var lastFrameOffset = -1
        for frame in RecordReader.validFrames(in: bytes, from: searchFrom, recordVersion: recordVersion) {
            lastFrameOffset = frame.offset
            let end = frame.offset + RecordFraming.recordHeaderLength + frame.payload.count
            let isGap = frame.encoding == RecordFraming.gapEncoding
            var following = frame.sequence.addingReportingOverflow(1)
            if isGap {
                // A malformed gap record is left out like any damage.
                guard !frame.continuesGroup, let count = RecordFraming.gapCount(frame.payload) else { continue }
                following = frame.sequence.addingReportingOverflow(count)
            }
            let fits = frame.sequence >= expected && !following.overflow
                && nextSegmentStart.map { following.partialValue <= $0 } ?? true
            guard fits else { continue }
            // A hole (or a gap record, which no group holds) ends the group before it.
            if frame.offset > covered || frame.sequence > expected || isGap { closeOpenGroup(in: bytes) }
            if frame.offset > covered { drop(from: covered, to: frame.offset, in: bytes, codec: codec) }
            if frame.sequence > expected { appendGap(from: expected, to: frame.sequence) }
            openGroup.append((frame, end))
            if !frame.continuesGroup { writeOpenGroup(in: bytes) }
            expected = following.partialValue
            covered = end
        }
        if let first = openGroup.first {
            // Only a torn tail after it (or nothing): the incomplete final group a start cuts.
            let isTornAfter = covered == bytes.count
                || (lastFrameOffset < covered && RecordReader.isTornTail(in: bytes, at: covered, recordVersion: recordVersion))
            if isLastSegment && isTornAfter {
                let reason: RecordDamage.Reason
                switch RecordReader.checkFrame(in: bytes, at: covered, recordVersion: recordVersion) {
                case .damaged(let damage) where covered < bytes.count:
                    reason = bytes[covered...].allSatisfy { $0 == 0 } ? .zeroFilled : damage
                default:
                    reason = .incompleteGroup
                }
                openGroup = []
                expected = first.record.sequence
                drop(from: first.record.offset, to: bytes.count, in: bytes, codec: codec, tornTail: reason)
                covered = bytes.count
            } else {
                closeOpenGroup(in: bytes)
            }
        }
        if covered < bytes.count { drop(from: covered, to: bytes.count, in: bytes, codec: codec) }
        if let nextSegmentStart, expected < nextSegmentStart { appendGap(from: expected, to: nextSegmentStart) }
    }

    /// Copies the open group, which just got its last record, as it was written.
    private mutating func writeOpenGroup(in bytes: [UInt8]) {
        for (record, end) in openGroup { rewritten.append(contentsOf: bytes[record.offset..<end]) }
        recordsKept += openGroup.count
        openGroup = []
    }

    /// Writes the surviving records of a group that damage cut, the last of them re-framed
    /// without the group mark so that the group ends there.
    private mutating func closeOpenGroup(in bytes: [UInt8]) {
        guard let (last, _) = openGroup.popLast() else { return }
        writeOpenGroup(in: bytes)
        last.payload.withUnsafeBytes {
            RecordFraming.appendRecord(
                sequence: last.sequence, encoding: last.encoding, recordVersion: recordVersion, payload: $0, to: &rewritten)
        }
        recordsKept += 1
        groupsClosed += 1
        needsRewrite = true
    }

    /// Leaves out `bytes[start..<end]`, naming why its first record failed and, unless it
    /// is the torn tail, what its records were about (`DamagedRecordReader`).
    /// - Parameter tornTail: for an incomplete final group and what follows it, the reason of
    ///   the torn tail (the range starts at the group's first, valid, record).
    private mutating func drop<Codec: JournalRecordCodec>(
        from start: Int, to end: Int, in bytes: [UInt8], codec: Codec, tornTail: RecordDamage.Reason? = nil
    ) {
        needsRewrite = true
        let reason: String
        switch RecordReader.checkFrame(in: bytes, at: start, recordVersion: recordVersion) {
        case .damaged(let damage):
            reason = bytes[start..<end].allSatisfy { $0 == 0 } ? RecordDamage.Reason.zeroFilled.rawValue : damage.rawValue
        case .valid:
            reason = "out_of_order"
        }
        var range = StoreRepairReport.DroppedRange(offset: start, bytes: end - start, reason: tornTail?.rawValue ?? reason)
        if tornTail != nil {
            range.isTornTail = true
        } else if isLastSegment && end == bytes.count && RecordReader.isTornTail(in: bytes, at: start, recordVersion: recordVersion) {
            range.isTornTail = true
        } else {
            let reading = DamagedRecordReader.read(bytes, from: start, to: end, recordVersion: recordVersion, codec: codec)
            for (entry, isExact) in reading.entries {
                range.subjects.formUnion(codec.subjects(of: entry))
                if isExact { range.exactRecords += 1 } else { range.possiblyAlteredRecords += 1 }
            }
            range.unreadableRecords = reading.unreadableRecords
        }
        if let last = dropped.last, last.offset + last.bytes == start, last.isTornTail == range.isTornTail {
            dropped[dropped.count - 1].bytes += range.bytes
            dropped[dropped.count - 1].subjects.formUnion(range.subjects)
            dropped[dropped.count - 1].exactRecords += range.exactRecords
            dropped[dropped.count - 1].possiblyAlteredRecords += range.possiblyAlteredRecords
            dropped[dropped.count - 1].unreadableRecords += range.unreadableRecords
        } else {
            dropped.append(range)
        }
    }

    private mutating func appendGap(from first: UInt64, to next: UInt64) {
        needsRewrite = true
        RecordFraming.appendGapRecord(firstMissing: first, count: next - first, recordVersion: recordVersion, to: &rewritten)
        gapRecordsWritten += 1
        sequencesLost += next - first
        lostSequences.append(first..<next)
    }
}
