import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileJournal {
    /// Opens (or creates) the journal in `directory`, checks every segment, hands each
    /// entry after `replayStart` to `replay` in order, cuts off a torn or corrupt tail, and
    /// returns the journal ready to append after its last good record.
    ///
    /// Nothing on disk changes before every segment has been read, so the errors below
    /// leave the directory as it was. Then: a damaged tail is truncated (a segment whose
    /// header is damaged is deleted, as are later segments holding no valid record); when
    /// the journal ends before `replayStart` (its segments are all covered by the
    /// snapshot), its segments are deleted and a new one starts at `replayStart + 1`; an
    /// empty directory gets a first segment.
    ///
    /// - Parameters:
    ///   - directory: the `journal/` directory; created when missing (its parent must exist).
    ///   - policy: when `sync` calls `fdatasync`.
    ///   - segmentSize: the size in bytes past which a new segment is started.
    ///   - replayStart: the sequence number the snapshot covers through (0: no snapshot);
    ///     entries after it are replayed, and the journal must reach back to it.
    ///   - clock: the monotonic clock that decides when an `.interval` fsync is due.
    ///   - replay: called with each entry after `replayStart` and its sequence number.
    /// - Returns: the journal, and what was found and repaired.
    /// - Throws: `JournalError` `.unsupportedVersion` for a segment of a newer format;
    ///   `.unknownEntryKind`/`.undecodableEntry` for a checksummed entry that does not
    ///   decode; `.corrupt` when damage is followed by valid records in a later segment, a
    ///   segment is missing, or the journal starts after `replayStart + 1`; `.io`; and
    ///   whatever `replay` throws.
    public static func open(
        directory: URL, fsync policy: FsyncPolicy = .always, segmentSize: Int = defaultSegmentSize,
        replayingAfter replayStart: UInt64 = 0, clock: JournalClock = .system,
        replay: (UInt64, JournalEntry) throws -> Void = { _, _ in }
    ) throws -> (journal: FileJournal, report: JournalOpenReport) {
        precondition(
            segmentSize >= RecordFraming.segmentHeaderLength + RecordFraming.recordHeaderLength,
            "segment size \(segmentSize) cannot hold a record")
        let path = directory.path
        let files = try FileCalls.listDirectory(path)
            .compactMap { name in
                RecordFraming.firstSequence(ofSegmentFileName: name).map {
                    (firstSequence: $0, path: "\(path)/\(name)")
                }
            }
            .sorted { $0.firstSequence < $1.firstSequence }
        if let first = files.first, first.firstSequence > replayStart + 1 {
            throw JournalError(
                .corrupt, path: first.path,
                message:
                    "the journal starts at sequence \(first.firstSequence) but the newest valid snapshot covers only through \(replayStart): entries \(replayStart + 1)...\(first.firstSequence - 1) are missing"
            )
        }

        var scan = Scan(replayStart: replayStart)
        for (index, file) in files.enumerated() {
            let bytes = try FileCalls.readFile(file.path)
            if let damage = scan.damage {
                try checkHoldsNoRecords(bytes, path: file.path, after: damage, in: files[damage.index].path)
            } else if index + 1 < files.count, files[index + 1].firstSequence <= replayStart + 1 {
                // Wholly behind the snapshot (kept for a fallback to the previous one): its
                // records are neither replayed nor checked, only its header and place.
                try scan.skip(bytes, path: file.path, firstSequence: file.firstSequence, nextSequence: files[index + 1].firstSequence)
            } else {
                try scan.read(bytes, index: index, path: file.path, firstSequence: file.firstSequence, replay: replay)
            }
        }

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
                reason: damage.record.reason, removedSegmentPaths: removedPaths)
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

        let descriptor: Int32
        if let last = segments.last {
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
            segments = [Segment(firstSequence: nextSequence, path: segmentPath, size: header.count)]
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

    /// The state of reading the segments in order, up to the first damage.
    private struct Scan {
        let replayStart: UInt64
        let codec = JournalEntryCodec()
        var segments: [Segment] = []
        var nextSequence: UInt64?
        var damage: (index: Int, record: RecordDamage)?
        var entriesReplayed = 0

        init(replayStart: UInt64) { self.replayStart = replayStart }

        /// Takes a segment that the snapshot covers without reading its records.
        /// - Throws: `JournalError` for a header of a newer version or one that does not
        ///   match the file's name or place.
        mutating func skip(_ bytes: [UInt8], path: String, firstSequence: UInt64, nextSequence next: UInt64) throws {
            switch RecordFraming.checkSegmentHeader(bytes) {
            case .newerVersion(let version):
                throw unsupported(version, path: path)
            case .damaged(let reason):
                throw JournalError(.corrupt, path: path, message: "a segment behind the snapshot has a damaged header: \(reason)")
            case .valid(let headerSequence):
                guard headerSequence == firstSequence, nextSequence.map({ $0 == firstSequence }) ?? true else {
                    throw JournalError(
                        .corrupt, path: path,
                        message: "the segment header says it starts at sequence \(headerSequence), its name \(firstSequence), the previous segment ends at \((nextSequence ?? 1) - 1)")
                }
                segments.append(Segment(firstSequence: firstSequence, path: path, size: bytes.count))
                nextSequence = next
            }
        }

        mutating func read(
            _ bytes: [UInt8], index: Int, path: String, firstSequence: UInt64,
            replay: (UInt64, JournalEntry) throws -> Void
        ) throws {
            switch RecordFraming.checkSegmentHeader(bytes) {
            case .newerVersion(let version):
                throw unsupported(version, path: path)
            case .damaged(let reason):
                damage = (index, RecordDamage(offset: 0, bytesDiscarded: bytes.count, reason: reason))
            case .valid(let headerSequence) where headerSequence != firstSequence:
                // A checksummed header is no torn write: the file was renamed or copied.
                throw JournalError(
                    .corrupt, path: path,
                    message:
                        "the segment header says it starts at sequence \(headerSequence), its name says \(firstSequence)"
                )
            case .valid:
                if let nextSequence, firstSequence != nextSequence {
                    throw JournalError(
                        .corrupt, path: path,
                        message:
                            "the segment starts at sequence \(firstSequence) but the previous one ends at \(nextSequence - 1): a segment is missing"
                    )
                }
                var reader = RecordReader(
                    bytes: bytes, startingAt: RecordFraming.segmentHeaderLength, expectedSequence: firstSequence)
                while let record = reader.next() {
                    guard record.sequence > replayStart else { continue }
                    try replay(record.sequence, codec.decode(record, path: path))
                    entriesReplayed += 1
                }
                segments.append(Segment(firstSequence: firstSequence, path: path, size: reader.offset))
                nextSequence = reader.expectedSequence
                if let record = reader.damage { damage = (index, record) }
            }
        }
    }

    /// Throws unless a segment after a damaged one holds no valid record (then it is part
    /// of the damaged tail, such as a segment just created when the machine lost power).
    private static func checkHoldsNoRecords(
        _ bytes: [UInt8], path: String, after damage: (index: Int, record: RecordDamage), in damagedPath: String
    ) throws {
        switch RecordFraming.checkSegmentHeader(bytes) {
        case .newerVersion(let version):
            throw unsupported(version, path: path)
        case .damaged:
            return
        case .valid:
            var reader = RecordReader(bytes: bytes, startingAt: RecordFraming.segmentHeaderLength)
            guard reader.next() != nil else { return }
            throw JournalError(
                .corrupt, path: damagedPath, offset: UInt64(damage.record.offset),
                message:
                    "\(damage.record.reason) in the middle of the journal: the later segment \(path) holds valid records, so the damage is not a torn tail; nothing was changed"
            )
        }
    }

    private static func unsupported(_ version: UInt32, path: String) -> JournalError {
        JournalError(
            .unsupportedVersion, path: path,
            message:
                "journal segment format version \(version) is newer than the supported \(RecordFraming.segmentFormatVersion); nothing was changed"
        )
    }
}
