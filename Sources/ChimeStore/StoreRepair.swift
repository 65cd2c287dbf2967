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
    /// offset (``RecordReader/validFrames(in:from:)``); one whose sequence number is not
    /// above the previous kept one, or not below the next segment's first, is dropped as
    /// out of order. Undamaged segments and snapshots are not touched. Every segment is
    /// read and checked before the first file changes.
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
                lostSequences: plan.lostSequences, bytesBefore: plan.original.count, bytesAfter: plan.rewritten.count))
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
/// numbers are missing, and the byte ranges left out.
struct SegmentPlan {
    let path: String
    let original: [UInt8]
    var rewritten: [UInt8]
    var recordsKept = 0
    var dropped: [StoreRepairReport.DroppedRange] = []
    var gapRecordsWritten = 0
    var sequencesLost: UInt64 = 0
    var lostSequences: [Range<UInt64>] = []
    var needsRewrite = false
    /// Whether this is the journal's last segment (its damaged end may be a torn tail).
    let isLastSegment: Bool

    /// - Throws: `JournalError` `.unsupportedVersion` for a segment of a newer format.
    init<Codec: JournalRecordCodec>(
        bytes: [UInt8], path: String, firstSequence: UInt64, nextSegmentStart: UInt64?, codec: Codec
    ) throws {
        self.path = path
        original = bytes
        isLastSegment = nextSegmentStart == nil
        rewritten = RecordFraming.makeSegmentHeader(firstSequence: firstSequence)
        var searchFrom = 0
        switch RecordFraming.checkSegmentHeader(bytes) {
        case .newerVersion(let version):
            throw FileJournal.unsupported(version, path: path)
        case .valid(let headerSequence) where headerSequence == firstSequence:
            searchFrom = RecordFraming.segmentHeaderLength
        case .valid, .damaged:
            // Rewritten from the name; its bytes are searched for records from the start.
            needsRewrite = true
            dropped.append(.init(offset: 0, bytes: min(bytes.count, RecordFraming.segmentHeaderLength), reason: RecordDamage.Reason.badSegmentHeader.rawValue))
            searchFrom = min(bytes.count, RecordFraming.segmentHeaderLength)
        }
        var expected = firstSequence
        var covered = searchFrom
        for frame in RecordReader.validFrames(in: bytes, from: searchFrom) {
            let end = frame.offset + RecordFraming.recordHeaderLength + frame.payload.count
            var following = frame.sequence.addingReportingOverflow(1)
            if frame.encoding == RecordFraming.gapEncoding {
                // A malformed gap record is left out like any damage.
                guard let count = RecordFraming.gapCount(frame.payload) else { continue }
                following = frame.sequence.addingReportingOverflow(count)
            }
            let fits = frame.sequence >= expected && !following.overflow
                && nextSegmentStart.map { following.partialValue <= $0 } ?? true
            guard fits else { continue }
            if frame.offset > covered { drop(from: covered, to: frame.offset, in: bytes, codec: codec) }
            if frame.sequence > expected { appendGap(from: expected, to: frame.sequence) }
            rewritten.append(contentsOf: bytes[frame.offset..<end])
            recordsKept += 1
            expected = following.partialValue
            covered = end
        }
        if covered < bytes.count { drop(from: covered, to: bytes.count, in: bytes, codec: codec) }
        if let nextSegmentStart, expected < nextSegmentStart { appendGap(from: expected, to: nextSegmentStart) }
    }

    /// Leaves out `bytes[start..<end]`, naming why its first record failed and, unless it
    /// is the torn tail, what its records were about (`DamagedRecordReader`).
    private mutating func drop<Codec: JournalRecordCodec>(
        from start: Int, to end: Int, in bytes: [UInt8], codec: Codec
    ) {
        needsRewrite = true
        let reason: String
        switch RecordReader.checkFrame(in: bytes, at: start) {
        case .damaged(let damage):
            reason = bytes[start..<end].allSatisfy { $0 == 0 } ? RecordDamage.Reason.zeroFilled.rawValue : damage.rawValue
        case .valid:
            reason = "out_of_order"
        }
        var range = StoreRepairReport.DroppedRange(offset: start, bytes: end - start, reason: reason)
        if isLastSegment && end == bytes.count && RecordReader.isTornTail(in: bytes, at: start) {
            range.isTornTail = true
        } else {
            let reading = DamagedRecordReader.read(bytes, from: start, to: end, codec: codec)
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
        RecordFraming.appendGapRecord(firstMissing: first, count: next - first, to: &rewritten)
        gapRecordsWritten += 1
        sequencesLost += next - first
        lostSequences.append(first..<next)
    }
}
