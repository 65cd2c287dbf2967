import Foundation

/// How a `FileStore` recovered, for the coordinator's start-up log line.
public struct RecoveryReport: Hashable, Sendable, CustomStringConvertible {
    /// The sequence number the loaded snapshot covers through; `nil` without one.
    public var snapshotSequence: UInt64?
    /// The loaded snapshot's payload size, in bytes.
    public var snapshotBytes: Int
    /// Journal entries replayed after the snapshot.
    public var entriesReplayed: Int
    /// The sequence number of the last good journal record (0: none).
    public var lastSequence: UInt64
    /// The damaged journal tail that was cut off, if any.
    public var truncation: JournalTruncation?
    /// Damaged snapshots skipped (and renamed to `.snap.corrupt`), newest first.
    public var skippedSnapshots: [SkippedSnapshot]
    /// Leftover `.snap.tmp` files removed.
    public var removedTemporaryFiles: Int
    /// How long recovery took, in seconds.
    public var duration: Double

    /// Creates a report.
    public init(
        snapshotSequence: UInt64?, snapshotBytes: Int, entriesReplayed: Int, lastSequence: UInt64,
        truncation: JournalTruncation?, skippedSnapshots: [SkippedSnapshot], removedTemporaryFiles: Int,
        duration: Double
    ) {
        self.snapshotSequence = snapshotSequence
        self.snapshotBytes = snapshotBytes
        self.entriesReplayed = entriesReplayed
        self.lastSequence = lastSequence
        self.truncation = truncation
        self.skippedSnapshots = skippedSnapshots
        self.removedTemporaryFiles = removedTemporaryFiles
        self.duration = duration
    }

    /// Bytes cut off the journal's tail (0 when it was intact).
    public var truncatedBytes: Int { truncation?.bytesDiscarded ?? 0 }

    /// Such as "snapshot through 4096 (1048576 bytes) + 37 entries, last sequence 4133,
    /// in 0.012 s; truncated 120 bytes at offset 4000 of …/00000000000000000001.log
    /// (checksum_mismatch)".
    public var description: String {
        var parts = [
            (snapshotSequence.map { "snapshot through \($0) (\(snapshotBytes) bytes)" } ?? "no snapshot")
                + " + \(entriesReplayed) entries, last sequence \(lastSequence), in \(String(format: "%.3f", duration)) s"
        ]
        if let truncation { parts.append("\(truncation)") }
        for skipped in skippedSnapshots { parts.append("\(skipped)") }
        if removedTemporaryFiles > 0 { parts.append("removed \(removedTemporaryFiles) temporary files") }
        return parts.joined(separator: "; ")
    }
}

/// Sizes and counters of a `FileStore`, for `chime ctl store`.
public struct StoreStatistics: Hashable, Sendable {
    /// The journal's counters since the store was opened, and its sizes.
    public var journal: JournalStatistics
    /// Snapshot files kept.
    public var snapshotCount: Int
    /// Their size together, in bytes.
    public var snapshotBytes: Int
    /// The sequence number the newest snapshot covers through; `nil` without one.
    public var newestSnapshotSequence: UInt64?

    /// Creates statistics.
    public init(journal: JournalStatistics, snapshotCount: Int, snapshotBytes: Int, newestSnapshotSequence: UInt64?) {
        self.journal = journal
        self.snapshotCount = snapshotCount
        self.snapshotBytes = snapshotBytes
        self.newestSnapshotSequence = newestSnapshotSequence
    }

    /// The journal's size on disk, in bytes.
    public var journalBytes: Int { journal.journalBytes }
    /// The journal's segment files.
    public var segmentCount: Int { journal.segmentCount }
    /// How long the last `fdatasync` took, in seconds; `nil` before the first.
    public var lastFsyncLatency: Double? { journal.lastFsyncLatency }
}
