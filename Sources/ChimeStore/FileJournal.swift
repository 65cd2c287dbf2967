import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The journal on disk: a directory of segment files of checksummed records (the format is
/// described at ``RecordFraming``).
///
/// `append` encodes entries into a memory buffer and gives each the next sequence number;
/// `sync` writes the buffer with one `write` per segment touched and then calls
/// `fdatasync` as the ``FsyncPolicy`` says. The records of one `append` are a **group**
/// (``RecordFraming``): every reader — recovery, a ``JournalFollower``, `verify` — takes all
/// of them or none, so a crash that cuts the `write` anywhere (a `kill -9` can stop a write
/// of many pages part-way) never leaves some of them applied. A segment is rolled (the old
/// one `fdatasync`ed, a new file created and the directory `fsync`ed) before an `append`'s
/// records would make it exceed `segmentSize`; the records of one `append` always share a
/// segment (one larger than `segmentSize` gets a segment of its own). A journal opened on a
/// segment of format 1 starts a new segment at its first `append`, so old segments only
/// ever hold records of their own format.
/// Entries appended but not synced when the journal is deinitialized are lost, as in a
/// crash. After a failed write or fsync the journal refuses every
/// further call: what reached the disk is unknown, so the process should restart and let
/// recovery truncate whatever was torn.
///
/// One thread uses a journal at a time.
public final class FileJournal {
    /// The default size past which a new segment is started: 64 MiB.
    public static let defaultSegmentSize = 64 << 20

    /// The `journal/` directory holding the segments.
    public let directory: URL
    /// When `sync` calls `fdatasync`.
    public let fsyncPolicy: FsyncPolicy
    /// The size in bytes a segment may reach before the next record goes to a new one.
    public let segmentSize: Int

    struct Segment {
        var firstSequence: UInt64
        var path: String
        var size: Int
        /// The segment file format version (its header's).
        var format: UInt32 = RecordFraming.segmentFormatVersion
    }

    /// Bytes for the current segment (`newSegmentFirstSequence == nil`) or for a segment
    /// `sync` must create first (the bytes then start with its file header).
    struct PendingWrite {
        var newSegmentFirstSequence: UInt64?
        var bytes: [UInt8]
    }

    var segments: [Segment]
    var descriptor: Int32
    var pending: [PendingWrite] = []
    var projectedTailSize: Int
    /// The tail segment is of an older format (its records have no group marks): the next
    /// append starts a new segment.
    var isTailOfOlderFormat: Bool
    var nextSequence: UInt64
    var counters = JournalStatistics()
    var hasUnsyncedBytes = false
    /// A segment was created whose directory entry is not yet fsynced.
    var isDirectorySyncPending = false
    var lastFsyncTime: Double
    var failure: JournalError?
    let clock: JournalClock
    /// The tail segment as this journal last left it, for `verifyTailUnchanged()` from any thread.
    let tailWatch = TailWatch()

    init(
        directory: URL, fsyncPolicy: FsyncPolicy, segmentSize: Int, segments: [Segment], descriptor: Int32,
        nextSequence: UInt64, clock: JournalClock
    ) {
        precondition(!segments.isEmpty, "a journal always has a segment to append to")
        self.directory = directory
        self.fsyncPolicy = fsyncPolicy
        self.segmentSize = segmentSize
        self.segments = segments
        self.descriptor = descriptor
        self.nextSequence = nextSequence
        self.projectedTailSize = segments[segments.count - 1].size
        self.isTailOfOlderFormat = segments[segments.count - 1].format < RecordFraming.segmentFormatVersion
        self.clock = clock
        self.lastFsyncTime = clock.now
        counters.writtenSequence = nextSequence - 1
        counters.durableSequence = nextSequence - 1
        tailWatch.follow(path: segments[segments.count - 1].path, descriptor: descriptor, size: projectedTailSize)
    }

    deinit {
        if descriptor >= 0 { FileCalls.closeFile(descriptor) }
    }

    /// The sequence number of the last appended entry (0 when the journal never had one).
    public var lastSequence: UInt64 { nextSequence - 1 }
    /// The sequence number of the first record the segments on disk can hold.
    public var firstSequence: UInt64 { segments[0].firstSequence }
    /// Counters and sizes: entries, bytes, fsyncs and their latency.
    public var statistics: JournalStatistics {
        var statistics = counters
        statistics.lastSequence = lastSequence
        statistics.segmentCount = segments.count
        statistics.journalBytes = segments.reduce(0) { $0 + $1.size }
        return statistics
    }

    /// Encodes `records` with `codec` into the write buffer as one group (see the type's
    /// doc), giving each the next sequence number; nothing reaches the file before `sync`.
    /// Either every record is buffered or none.
    ///
    /// Inlinable, so a caller's codec is specialized into its module (the journal writer's
    /// hot path); the framing below it is not generic.
    /// - Throws: `JournalError` `.invalidEntry` when a record cannot be encoded, its
    ///   payload is over 16 MiB or its encoding byte is 128 or more (the group mark's bit);
    ///   `.closed`; `.io` after an earlier failure.
    @inlinable
    public func append<Codec: JournalRecordCodec>(_ records: [Codec.Record], using codec: Codec) throws {
        try checkUsable()
        var payloads: [JournalRecordPayload] = []
        payloads.reserveCapacity(records.count)
        for record in records {
            let payload = try codec.encode(record)
            guard payload.bytes.count <= RecordFraming.maximumPayloadLength else {
                throw JournalError(
                    .invalidEntry, message: "journal entry of \(payload.bytes.count) bytes is over the 16 MiB limit")
            }
            guard payload.encoding & RecordFraming.groupMark == 0 else {
                throw JournalError(.invalidEntry, message: "payload encoding \(payload.encoding) is over 127")
            }
            payloads.append(payload)
        }
        appendEncoded(payloads)
    }

    /// Frames `payloads` (each checked against the size limit and the group mark) into the
    /// write buffer as one group, all in one segment: when they would not fit in the tail, a
    /// new segment starts before the first of them. One `append` is one caller's unit (a
    /// loop turn's entries, so a request's), and a segment roll between two of its records
    /// would split the group: the old segment is written and `fdatasync`ed before the new one
    /// is created, so readers could not tell a `kill -9` in between from a complete group.
    /// The tail is also rolled when it is a segment of format 1, whose records have no marks.
    @usableFromInline
    func appendEncoded(_ payloads: [JournalRecordPayload]) {
        guard let last = payloads.indices.last else { return }
        let groupLength = payloads.reduce(0) { $0 + RecordFraming.recordHeaderLength + $1.bytes.count }
        let isTailFull = projectedTailSize + groupLength > segmentSize && projectedTailSize > RecordFraming.segmentHeaderLength
        if isTailFull || isTailOfOlderFormat {
            let header = RecordFraming.makeSegmentHeader(firstSequence: nextSequence)
            pending.append(PendingWrite(newSegmentFirstSequence: nextSequence, bytes: header))
            projectedTailSize = header.count
            isTailOfOlderFormat = false
        }
        for (index, payload) in payloads.enumerated() {
            let recordLength = RecordFraming.recordHeaderLength + payload.bytes.count
            if pending.isEmpty { pending.append(PendingWrite(newSegmentFirstSequence: nil, bytes: [])) }
            payload.bytes.withUnsafeBytes {
                RecordFraming.appendRecord(
                    sequence: nextSequence, encoding: payload.encoding, continuesGroup: index < last, payload: $0,
                    to: &pending[pending.count - 1].bytes)
            }
            projectedTailSize += recordLength
            nextSequence += 1
        }
        counters.appendedEntries += payloads.count
    }

    /// Writes every buffered record (one `write` per segment touched), then `fdatasync`s
    /// as the fsync policy says. Under `.always`, returning means every appended entry is
    /// on stable storage; a sync with nothing new since the last `fdatasync` does not call
    /// it again.
    ///
    /// A write that fails for want of space (`ENOSPC`, `EDQUOT`) is undone: the segment is
    /// truncated back to its last complete record and every buffered record stays buffered,
    /// in order, so a later `sync` (or more `append`s, then `sync`) writes them once space
    /// returns. Nothing after the first unwritten record reaches the file before it.
    /// - Throws: `JournalError` `.noSpace` when a write or a segment creation found no
    ///   space (the journal stays usable; call `sync` again later); `.io` when a write or
    ///   fsync fails otherwise, or an fsync reports no space (the journal is then unusable:
    ///   after a failed fsync what reached the disk is unknown); `.closed`.
    public func sync() throws {
        try checkUsable()
        counters.syncCalls += 1
        try keepingUsableOnlyForNoSpace {
            try writePending()
            if hasUnsyncedBytes && isFsyncDue() { try syncTail() }
            try syncDirectoryIfPending()
        }
    }

    /// Writes every buffered record as `sync` does, but leaves the `fdatasync` of the data to
    /// a later `sync` whatever the policy: the records then survive a crash of the process
    /// (`kill -9`), not yet of the machine. A segment roll still makes the old segment and
    /// the directory durable (as `sync` does), so damage stays at the journal's end.
    /// - Throws: as `sync`.
    public func write() throws {
        try checkUsable()
        try keepingUsableOnlyForNoSpace {
            try writePending()
            try syncDirectoryIfPending()
        }
    }

    /// Whether records were written that no `fdatasync` has covered yet (under `.interval`, a
    /// `sync` once the interval has passed covers them).
    public var hasUnsyncedWrites: Bool { hasUnsyncedBytes }

    /// Runs a write step; a failure other than `.noSpace` makes the journal unusable.
    private func keepingUsableOnlyForNoSpace(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as JournalError where error.code == .noSpace {
            counters.noSpaceFailures += 1
            throw error
        } catch let error as JournalError {
            failure = error
            throw error
        }
    }

    private func writePending() throws {
        guard !pending.isEmpty else { return }
        while let write = pending.first {
            if let firstSequence = write.newSegmentFirstSequence {
                try roll(to: firstSequence)
                // The segment exists now: a retry after no space appends to it.
                pending[0].newSegmentFirstSequence = nil
                isDirectorySyncPending = true
            }
            try writeToTail(write.bytes)
            pending.removeFirst()
        }
        counters.writtenSequence = lastSequence
    }

    private func syncDirectoryIfPending() throws {
        guard isDirectorySyncPending else { return }
        try syncDirectory()
        isDirectorySyncPending = false
    }

    /// Writes what is buffered, `fdatasync`s whatever is not yet on stable storage (under
    /// every policy but `.never`) and closes the segment. Later calls throw `.closed`.
    /// - Throws: `JournalError` `.io` when the final write or fsync fails (the file is
    ///   closed anyway).
    public func close() throws {
        guard descriptor >= 0 else { return }
        defer {
            FileCalls.closeFile(descriptor)
            descriptor = -1
        }
        guard failure == nil else { return }
        try sync()
        if hasUnsyncedBytes && fsyncPolicy != .never { try syncTail() }
    }

    /// Closes the segment without writing what is buffered (those entries are lost, as in a
    /// crash). Later calls throw `.closed`.
    public func abandon() {
        pending = []
        guard descriptor >= 0 else { return }
        FileCalls.closeFile(descriptor)
        descriptor = -1
    }

    /// Deletes the segments whose records all have sequence numbers up to `sequence` (they
    /// are covered by a snapshot), oldest first; the segment being appended to stays.
    /// - Returns: how many segments were deleted.
    /// - Throws: `JournalError` `.io` when a file cannot be removed or the directory synced.
    @discardableResult
    public func removeSegments(through sequence: UInt64) throws -> Int {
        try checkUsable()
        var removed = 0
        while segments.count > 1, segments[1].firstSequence - 1 <= sequence {
            try FileCalls.removeFile(segments[0].path)
            segments.removeFirst()
            removed += 1
        }
        if removed > 0 { try syncDirectory() }
        return removed
    }

    @usableFromInline
    func checkUsable() throws {
        guard descriptor >= 0 else {
            throw JournalError(.closed, path: directory.path, message: "the journal is closed")
        }
        if let failure {
            throw JournalError(
                .io, path: failure.path, message: "the journal is unusable after an earlier failure: \(failure.message)"
            )
        }
    }

    private func isFsyncDue() -> Bool {
        switch fsyncPolicy {
        case .always: true
        case .never: false
        case .interval(let milliseconds): clock.now - lastFsyncTime >= Double(milliseconds) / 1000
        }
    }

    /// Appends `bytes` to the tail segment; when the disk is full, truncates away whatever
    /// part was written (so the file ends with a complete record) and rethrows `.noSpace`.
    private func writeToTail(_ bytes: [UInt8]) throws {
        let tail = segments.count - 1
        // One `fstat` a write: an append after someone cut the file would land in the middle
        // of the journal (O_APPEND writes at the new end), where a later size check could
        // not see it.
        try tailWatch.verifyOpenFile(descriptor, size: segments[tail].size)
        do {
            try bytes.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, path: segments[tail].path) }
        } catch let error as JournalError where error.code == .noSpace {
            // Shrinking needs no space; if even that fails the tail is unknown: fatal.
            do {
                try FileCalls.truncateFile(descriptor, to: segments[tail].size, path: segments[tail].path)
            } catch let truncation as JournalError {
                throw JournalError(.io, path: truncation.path, message: "\(error.message), then \(truncation.message)")
            }
            throw error
        }
        segments[tail].size += bytes.count
        tailWatch.noteSize(segments[tail].size)
        hasUnsyncedBytes = true
        counters.writeCalls += 1
        counters.bytesWritten += bytes.count
    }

    private func syncTail() throws {
        let start = FileCalls.monotonicSeconds()
        try Self.fatalIfNoSpace { try FileCalls.syncData(descriptor, path: segments[segments.count - 1].path) }
        let latency = FileCalls.monotonicSeconds() - start
        counters.fsyncCount += 1
        counters.lastFsyncLatency = latency
        counters.totalFsyncSeconds += latency
        counters.durableSequence = counters.writtenSequence
        hasUnsyncedBytes = false
        lastFsyncTime = clock.now
    }

    /// Makes the current segment durable, so damage can only ever be at the end of the
    /// journal, then starts the next one.
    private func roll(to firstSequence: UInt64) throws {
        if hasUnsyncedBytes { try syncTail() }
        let path = directory.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: firstSequence)).path
        let newDescriptor = try FileCalls.openFile(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND)
        FileCalls.closeFile(descriptor)
        descriptor = newDescriptor
        segments.append(Segment(firstSequence: firstSequence, path: path, size: 0))
        tailWatch.follow(path: path, descriptor: newDescriptor, size: 0)
        counters.segmentsCreated += 1
    }

    private func syncDirectory() throws {
        try Self.fatalIfNoSpace { try FileCalls.syncDirectory(directory.path) }
        counters.directorySyncCount += 1
    }

    /// An fsync that reports no space may have dropped dirty pages (Linux marks them clean
    /// after a failed writeback), so it is damage of unknown extent, never a retryable
    /// `.noSpace`.
    private static func fatalIfNoSpace(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as JournalError where error.code == .noSpace {
            throw JournalError(.io, path: error.path, message: error.message)
        }
    }
}
