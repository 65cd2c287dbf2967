import Foundation

/// The coordinator's durable store in one directory: `LOCK` and `EPOCH` (see
/// ``StoreLock``), `journal/` (see ``FileJournal`` and ``RecordFraming``) and `snapshot/`
/// (see ``SnapshotStore``).
///
/// ```swift
/// let (store, recovery) = try FileStore.open(directory: url, fsync: .always, codec: codec)
/// state = try recovery.snapshot.map { try decodeState($0.payload) } ?? State()
/// for entry in recovery.entries { state.apply(entry) }
/// logger.info("\(recovery.report)")
/// try store.append(entries, using: codec); try store.sync()   // each loop turn
/// try store.writeSnapshot(encodeState(state))      // now and then
/// ```
///
/// Recovery is the newest valid snapshot plus every journal entry after its sequence
/// number, in order. Snapshots are kept two deep and journal segments are deleted only
/// once the *older* retained snapshot covers them, so a damaged newest snapshot still
/// falls back to the previous one plus the journal.
///
/// One thread uses a store at a time.
public final class FileStore {
    /// Tunables of a store.
    public struct Options: Sendable {
        /// The size in bytes past which the journal starts a new segment (64 MiB).
        public var segmentSize = FileJournal.defaultSegmentSize
        /// How many snapshots to keep, newest first (at least 1; 2 by default).
        public var retainedSnapshots = 2
        /// The monotonic clock that decides when an `FsyncPolicy.interval` fsync is due.
        public var clock = JournalClock.system

        /// The defaults.
        public init() {}
    }

    /// The store directory.
    public let directory: URL
    /// The lock this store holds on `directory`.
    public let lock: StoreLock
    /// The journal in `journal/`.
    public let journal: FileJournal
    /// The snapshots in `snapshot/`.
    public let snapshots: SnapshotStore
    /// How many snapshots are kept, newest first (`Options.retainedSnapshots`).
    public let retainedSnapshots: Int
    var snapshotFiles: [SnapshotStore.File]

    private init(
        directory: URL, lock: StoreLock, journal: FileJournal, snapshots: SnapshotStore, retainedSnapshots: Int,
        snapshotFiles: [SnapshotStore.File]
    ) {
        self.directory = directory
        self.lock = lock
        self.journal = journal
        self.snapshots = snapshots
        self.retainedSnapshots = retainedSnapshots
        self.snapshotFiles = snapshotFiles
    }

    /// Locks the store directory (creating it when missing) and recovers: loads the
    /// newest valid snapshot, replays the journal after it, truncates a torn tail, moves
    /// damaged snapshots aside (`.snap.corrupt`) and removes leftover temp files.
    ///
    /// Nothing in the directory changes before the snapshots and every journal segment
    /// have been read and checked, so each error below leaves the files as they were.
    /// - Parameters:
    ///   - directory: the store directory; created when missing (its parent must exist).
    ///   - policy: when the journal calls `fdatasync` (see ``FsyncPolicy``).
    ///   - options: segment size, snapshot retention, clock.
    ///   - lock: a lock already taken on `directory` (a standby's `StoreLock.acquire`);
    ///     `nil` takes it with `StoreLock.tryAcquire`. The store owns it from here on.
    ///   - heldThrough: for a warm standby, the sequence number through which the caller
    ///     already holds the state (a snapshot plus the entries a `JournalFollower` read):
    ///     no snapshot is read (`recovery.snapshot` is `nil`) and only the entries after it
    ///     are replayed; the journal is still checked and its torn tail cut off as usual.
    ///   - codec: decodes the journal's records.
    /// - Returns: the store and what was recovered.
    /// - Throws: `JournalError` `.locked` when another holder has the lock;
    ///   `.unsupportedVersion` for a snapshot or segment of a newer format;
    ///   `.unknownEntryKind`; `.corrupt` when journal damage is followed by any valid
    ///   record (the error's `corruption` says where and how many) or the journal does not
    ///   reach back to the snapshot; `.io`.
    public static func open<Codec: JournalRecordCodec>(
        directory: URL, fsync policy: FsyncPolicy = .always, options: Options = Options(), lock: StoreLock? = nil,
        heldThrough: UInt64? = nil, codec: Codec
    ) throws -> (store: FileStore, recovery: Recovery<Codec.Record>) {
        precondition(options.retainedSnapshots >= 1, "keep at least one snapshot")
        let start = FileCalls.monotonicSeconds()
        let lock = try lock ?? StoreLock.tryAcquire(directory: directory)
        precondition(lock.isHeld, "FileStore.open was given a released lock")
        let snapshots = SnapshotStore(directory: directory.appendingPathComponent("snapshot"))
        let (snapshot, skipped) = heldThrough == nil ? try snapshots.loadNewestValid() : (nil, [])
        var entries: [Codec.Record] = []
        let (journal, journalReport) = try FileJournal.open(
            directory: directory.appendingPathComponent("journal"), fsync: policy, segmentSize: options.segmentSize,
            replayingAfter: heldThrough ?? snapshot?.sequence ?? 0, clock: options.clock, codec: codec
        ) { _, entry in entries.append(entry) }
        for damaged in skipped { try snapshots.quarantine(damaged) }
        let removedTemporaryFiles = try snapshots.removeTemporaryFiles()

        let store = FileStore(
            directory: directory, lock: lock, journal: journal, snapshots: snapshots,
            retainedSnapshots: options.retainedSnapshots, snapshotFiles: try snapshots.list())
        let report = RecoveryReport(
            snapshotSequence: snapshot?.sequence, snapshotBytes: snapshot?.payload.count ?? 0,
            entriesReplayed: journalReport.entriesReplayed, lastSequence: journalReport.lastSequence,
            truncation: journalReport.truncation, skippedSnapshots: skipped,
            removedTemporaryFiles: removedTemporaryFiles, duration: FileCalls.monotonicSeconds() - start)
        return (store, Recovery(snapshot: snapshot, entries: entries, report: report))
    }

    /// The sequence number of the last appended entry (0: none ever).
    public var lastSequence: UInt64 { journal.lastSequence }

    /// Buffers records for the next `sync` (see `FileJournal.append(_:using:)`).
    /// - Throws: as `FileJournal.append(_:using:)`.
    @inlinable
    public func append<Codec: JournalRecordCodec>(_ records: [Codec.Record], using codec: Codec) throws {
        try journal.append(records, using: codec)
    }

    /// Writes buffered entries and fsyncs per the policy (see `FileJournal.sync`).
    /// - Throws: as `FileJournal.sync`.
    public func sync() throws { try journal.sync() }

    /// Writes buffered entries without the data `fdatasync` (see `FileJournal.write`).
    /// - Throws: as `FileJournal.write`.
    public func write() throws { try journal.write() }

    /// Writes `payload` as a snapshot covering every entry appended so far (pending ones
    /// are synced first), keeps the newest `retainedSnapshots`, and deletes the journal
    /// segments the oldest retained snapshot covers. The payload must therefore reflect
    /// every appended entry.
    /// - Returns: the snapshot file written.
    /// - Throws: `JournalError` `.io`; as `sync`.
    @discardableResult
    public func writeSnapshot(_ payload: Data) throws -> SnapshotStore.File {
        try writeSnapshot(payloadLength: payload.count) { sink in payload.withUnsafeBytes { sink.writeBytes($0) } }
    }

    /// ``writeSnapshot(_:)`` with the payload streamed to the file in chunks (see
    /// `SnapshotStore.write(payloadLength:coveringThrough:payload:)`): `payload` must write
    /// exactly `payloadLength` bytes.
    /// - Returns: the snapshot file written.
    /// - Throws: `JournalError` `.io` (also for a payload of another length); as `sync`.
    @discardableResult
    public func writeSnapshot(
        payloadLength: Int, payload: (inout SnapshotPayloadSink) -> Void
    ) throws -> SnapshotStore.File {
        try journal.sync()
        let file = try snapshots.write(payloadLength: payloadLength, coveringThrough: journal.lastSequence, payload: payload)
        try applyRetention()
        return file
    }

    /// Keeps the newest `retainedSnapshots`, and deletes the journal segments the oldest
    /// retained snapshot covers.
    /// - Throws: `JournalError` `.io`.
    private func applyRetention() throws {
        noteSnapshots(try snapshots.retainNewest(retainedSnapshots))
        if let bound = segmentRemovalBound { try journal.removeSegments(through: bound) }
    }

    /// Takes in the snapshot files after another thread wrote one and applied the retention
    /// (the coordinator's snapshot thread), for `statistics`.
    public func noteSnapshots(_ files: [SnapshotStore.File]) { snapshotFiles = files }

    /// The sequence number through which journal segments may be removed: the oldest retained
    /// snapshot's, once `retainedSnapshots` are kept (so a damaged newest snapshot still falls
    /// back to the previous one plus the journal); `nil` before.
    public var segmentRemovalBound: UInt64? {
        snapshotFiles.count >= retainedSnapshots ? snapshotFiles.first?.sequence : nil
    }

    /// Adds one to the persisted coordinator epoch (see `StoreLock.incrementEpoch`).
    /// - Throws: as `StoreLock.incrementEpoch`.
    public func incrementEpoch() throws -> UInt64 { try lock.incrementEpoch() }

    /// Sizes and counters for `chime ctl store`.
    public var statistics: StoreStatistics { statistics(journal: journal.statistics) }

    /// ``statistics`` with the journal's figures as given (taken on the thread that writes
    /// the journal) instead of read from it.
    public func statistics(journal: JournalStatistics) -> StoreStatistics {
        StoreStatistics(
            journal: journal, snapshotCount: snapshotFiles.count,
            snapshotBytes: snapshotFiles.reduce(0) { $0 + $1.size },
            newestSnapshotSequence: snapshotFiles.last?.sequence)
    }

    /// Closes the journal without writing what is buffered, then releases the lock: for a
    /// holder whose `LOCK` was deleted or replaced (`StoreLock.verifyOwnership`), which must
    /// not write to the store any more. Later calls throw `.closed`.
    public func abandon() {
        defer { lock.release() }
        journal.abandon()
    }

    /// Syncs and closes the journal, then releases the lock. Later calls throw `.closed`.
    /// - Throws: as `FileJournal.close` (the lock is released anyway).
    public func close() throws {
        defer { lock.release() }
        try journal.close()
    }
}

/// What `FileStore.open` recovered: the state to rebuild and how it went.
public struct Recovery<Record> {
    /// The newest valid snapshot; `nil` when there is none (replay from the start).
    public var snapshot: Snapshot?
    /// Every journal record after the snapshot, decoded, in order.
    public var entries: [Record]
    /// Figures for the start-up log line.
    public var report: RecoveryReport
}

extension Recovery: Sendable where Record: Sendable {}
