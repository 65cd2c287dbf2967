import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileJournal {
    /// Opens (or creates) the journal in `directory`, checks every segment, hands each
    /// entry after `replayStart` to `replay` in order, cuts off a torn tail, and returns the
    /// journal ready to append after its last good record.
    ///
    /// A torn tail is damage that no valid record follows: an incomplete final record, zero
    /// fill after the last one, or an incomplete final group (cut from its first record: none
    /// of its records is replayed). Damage followed by any valid record is corruption and is
    /// refused (see ``RecordFraming``).
    ///
    /// Nothing on disk changes before every segment has been read, so the errors below
    /// leave the directory as it was. Then: a damaged tail is truncated (a segment whose
    /// header is damaged is deleted, as are later segments holding no valid record); when
    /// the journal ends before `replayStart` (its segments are all covered by the
    /// snapshot), its segments are deleted and a new one starts at `replayStart + 1`; an
    /// empty directory gets a first segment, and so does a journal whose tail segment is of
    /// format 1 and holds no record (it is replaced).
    ///
    /// - Parameters:
    ///   - directory: the `journal/` directory; created when missing (its parent must exist).
    ///   - policy: when `sync` calls `fdatasync`.
    ///   - segmentSize: the size in bytes past which a new segment is started.
    ///   - replayStart: the sequence number the snapshot covers through (0: no snapshot);
    ///     entries after it are replayed, and the journal must reach back to it.
    ///   - clock: the monotonic clock that decides when an `.interval` fsync is due.
    ///   - codec: decodes the records (every one after `replayStart` is decoded and checked).
    ///   - replay: called with each record after `replayStart` and its sequence number.
    /// - Returns: the journal, and what was found and repaired.
    /// - Throws: `JournalError` `.unsupportedVersion` for a segment of a newer format;
    ///   `.unknownEntryKind`/`.undecodableEntry` for a checksummed entry that does not
    ///   decode; `.corrupt` when damage is followed by any valid record (in its segment or
    ///   a later one; the error's `corruption` says where, and how many), a segment is
    ///   missing, or the journal starts after `replayStart + 1`; `.io`; and whatever
    ///   `replay` throws.
    public static func open<Codec: JournalRecordCodec>(
        directory: URL, fsync policy: FsyncPolicy = .always, segmentSize: Int = defaultSegmentSize,
        replayingAfter replayStart: UInt64 = 0, clock: JournalClock = .system, codec: Codec,
        replay: (UInt64, Codec.Record) throws -> Void = { _, _ in }
    ) throws -> (journal: FileJournal, report: JournalOpenReport) {
        precondition(
            segmentSize >= RecordFraming.segmentHeaderLength + RecordFraming.recordHeaderLength,
            "segment size \(segmentSize) cannot hold a record")
        let path = directory.path
        let inspection = try inspect(directory: directory, replayingAfter: replayStart, codec: codec, replay: replay)
        let files = inspection.files
        let scan = inspection.scan

        // Everything is checked: from here on the directory changes.
        if !FileCalls.isDirectory(path) {
            try FileCalls.makeDirectory(path)
            try FileCalls.syncDirectory(directory.deletingLastPathComponent().path)
        }
        var directoryChanged = false
        var truncation: JournalTruncation?
        if let damage = scan.damage {
            let damaged = files[damage.index]
            if damage.record.offset == 0 {
                try FileCalls.removeFile(damaged.path)
                directoryChanged = true
            } else {
                let descriptor = try FileCalls.openFile(damaged.path, O_WRONLY)
                defer { FileCalls.closeFile(descriptor) }
                try FileCalls.truncateFile(descriptor, to: damage.record.offset, path: damaged.path)
                try FileCalls.syncData(descriptor, path: damaged.path)
            }
            var bytesDiscarded = damage.record.bytesDiscarded
            var removedPaths: [String] = []
            for later in files[(damage.index + 1)...] {
                bytesDiscarded += try FileCalls.fileSize(atPath: later.path) ?? 0
                try FileCalls.removeFile(later.path)
                removedPaths.append(later.path)
                directoryChanged = true
            }
            truncation = JournalTruncation(
                segmentPath: damaged.path, offset: damage.record.offset, bytesDiscarded: bytesDiscarded,
                reason: damage.record.reason, removedSegmentPaths: removedPaths,
                incompleteGroupRecords: damage.record.withheldRecords)
        }

        var segments = scan.segments
        var nextSequence = scan.nextSequence ?? files.first?.firstSequence ?? 1
        var removedBehindSnapshot = 0
        if nextSequence <= replayStart {
            for segment in segments { try FileCalls.removeFile(segment.path) }
            removedBehindSnapshot = segments.count
            directoryChanged = directoryChanged || !segments.isEmpty
            segments = []
            nextSequence = replayStart + 1
        }

        // A tail segment of format 1 that holds no record is replaced by one of this format
        // (it has the next segment's name); one holding records stays, and the first append
        // starts a new segment after it.
        var startsSegment = segments.isEmpty
        if let last = segments.last, last.format < RecordFraming.segmentFormatVersion,
            last.size <= RecordFraming.segmentHeaderLength
        {
            try FileCalls.removeFile(last.path)
            segments.removeLast()
            startsSegment = true
        }
        let descriptor: Int32
        if !startsSegment, let last = segments.last {
            descriptor = try FileCalls.openFile(last.path, O_WRONLY | O_APPEND)
        } else {
            let segmentPath = "\(path)/\(RecordFraming.segmentFileName(firstSequence: nextSequence))"
            descriptor = try FileCalls.openFile(segmentPath, O_WRONLY | O_CREAT | O_EXCL | O_APPEND)
            let header = RecordFraming.makeSegmentHeader(firstSequence: nextSequence)
            do {
                try header.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, path: segmentPath) }
                try FileCalls.syncData(descriptor, path: segmentPath)
            } catch {
                FileCalls.closeFile(descriptor)
                throw error
            }
            segments.append(Segment(firstSequence: nextSequence, path: segmentPath, size: header.count))
            directoryChanged = true
        }
        if directoryChanged { try FileCalls.syncDirectory(path) }

        let journal = FileJournal(
            directory: directory, fsyncPolicy: policy, segmentSize: segmentSize, segments: segments,
            descriptor: descriptor, nextSequence: nextSequence, clock: clock)
        let report = JournalOpenReport(
            firstSequence: segments[0].firstSequence, lastSequence: nextSequence - 1,
            entriesReplayed: scan.entriesReplayed, segmentCount: segments.count, truncation: truncation,
            segmentsRemovedBehindSnapshot: removedBehindSnapshot)
        return (journal, report)
    }
}
