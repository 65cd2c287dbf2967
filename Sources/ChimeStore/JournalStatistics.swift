/// Counters and sizes of a ``FileJournal`` since it was opened.
public struct JournalStatistics: Hashable, Sendable {
    /// Entries passed to `append`.
    public var appendedEntries = 0
    /// Calls of `sync`.
    public var syncCalls = 0
    /// `write` calls made by `sync` (one per segment touched by a sync with new records).
    public var writeCalls = 0
    /// Bytes written to segments, headers included.
    public var bytesWritten = 0
    /// `fdatasync` calls on segments.
    public var fsyncCount = 0
    /// `fsync` calls on the `journal/` directory (after creating or removing segments).
    public var directorySyncCount = 0
    /// How long the last `fdatasync` took, in seconds; `nil` before the first.
    public var lastFsyncLatency: Double?
    /// How long every `fdatasync` took together, in seconds.
    public var totalFsyncSeconds = 0.0
    /// Segments created by rolling over.
    public var segmentsCreated = 0
    /// `sync` calls that found no space (`JournalError.noSpace`) and kept their records.
    public var noSpaceFailures = 0
    /// The sequence number of the last appended entry (0: none yet).
    public var lastSequence: UInt64 = 0
    /// The sequence number of the last entry handed to the kernel (survives `kill -9`).
    public var writtenSequence: UInt64 = 0
    /// The sequence number of the last entry known to be on stable storage (survives a
    /// power loss).
    public var durableSequence: UInt64 = 0
    /// Segment files on disk.
    public var segmentCount = 0
    /// The size of every segment together, in bytes.
    public var journalBytes = 0

    /// Creates zeroed statistics.
    public init() {}
}

/// What `FileJournal.open` found and repaired.
public struct JournalOpenReport: Hashable, Sendable {
    /// The sequence number of the first record the remaining segments can hold.
    public var firstSequence: UInt64
    /// The sequence number of the last good record (0: none).
    public var lastSequence: UInt64
    /// Entries handed to the replay closure (those after `replayingAfter`).
    public var entriesReplayed: Int
    /// Segment files after the repair.
    public var segmentCount: Int
    /// The torn tail that was cut off (damage no valid record follows), if there was one.
    public var truncation: JournalTruncation?
    /// Segments deleted because the snapshot covers all of them and the journal ended
    /// before the snapshot's sequence (possible after a power loss under `.never`).
    public var segmentsRemovedBehindSnapshot: Int

    /// Creates a report.
    public init(
        firstSequence: UInt64, lastSequence: UInt64, entriesReplayed: Int, segmentCount: Int,
        truncation: JournalTruncation?, segmentsRemovedBehindSnapshot: Int
    ) {
        self.firstSequence = firstSequence
        self.lastSequence = lastSequence
        self.entriesReplayed = entriesReplayed
        self.segmentCount = segmentCount
        self.truncation = truncation
        self.segmentsRemovedBehindSnapshot = segmentsRemovedBehindSnapshot
    }
}

/// A torn journal tail (damage that no valid record follows) cut off when the journal was
/// opened, or that a start would cut off (`FileStore.verify`).
public struct JournalTruncation: Hashable, Sendable, CustomStringConvertible {
    /// The segment file holding the first damaged byte.
    public var segmentPath: String
    /// The byte offset in that segment where good records end and the file was truncated
    /// (0: the segment's header was damaged and the file was deleted).
    public var offset: Int
    /// How many bytes were discarded: the rest of that segment plus any later segments,
    /// which held no valid record.
    public var bytesDiscarded: Int
    /// What check the first damaged record failed.
    public var reason: RecordDamage.Reason
    /// Later segment files deleted with the tail.
    public var removedSegmentPaths: [String]
    /// Whole records of an incomplete final group cut off with the tail (their group's last
    /// record was missing, so none of them was replayed); 0 when the cut is at a group's end.
    public var incompleteGroupRecords: Int

    /// Creates a truncation report.
    public init(
        segmentPath: String, offset: Int, bytesDiscarded: Int, reason: RecordDamage.Reason,
        removedSegmentPaths: [String] = [], incompleteGroupRecords: Int = 0
    ) {
        self.segmentPath = segmentPath
        self.offset = offset
        self.bytesDiscarded = bytesDiscarded
        self.reason = reason
        self.removedSegmentPaths = removedSegmentPaths
        self.incompleteGroupRecords = incompleteGroupRecords
    }

    /// Such as "truncated 120 bytes at offset 4096 of …/00000000000000000001.log
    /// (truncated_payload)", then ", with 3 whole records of an incomplete group" when there
    /// were some.
    public var description: String {
        let group = incompleteGroupRecords > 0 ? ", with \(incompleteGroupRecords) whole records of an incomplete group" : ""
        return "truncated \(bytesDiscarded) bytes at offset \(offset) of \(segmentPath) (\(reason))\(group)"
    }
}
