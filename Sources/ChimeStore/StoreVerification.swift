import Foundation

/// What `FileStore.verify(directory:codec:)` found, reading only: whether a coordinator would
/// start on the store as it is, repair a torn tail or a damaged snapshot by itself, or
/// refuse to start.
public struct StoreVerification: Sendable {
    /// The overall finding, from best to worst.
    public enum Verdict: String, Sendable {
        /// Nothing damaged.
        case clean
        /// Damaged in a way a start handles by itself: a torn journal tail (truncated; an
        /// incomplete final group of records included) or a damaged snapshot (set aside; the
        /// previous one and the journal are used).
        case recoverable
        /// A start refuses the store: damage followed by valid records (an incomplete group
        /// followed by valid records included), a missing segment,
        /// a newer format (not damage, but refused all the same), an entry that does not
        /// decode. `chime store repair` salvages what is valid when the journal is damaged.
        case corrupt
    }

    /// The store directory.
    public var directory: String
    /// Journal segment files.
    public var segmentCount: Int
    /// Journal records checked (those a start reads: segments wholly behind the newest
    /// valid snapshot are checked by header only).
    public var recordsChecked: Int
    /// The sequence number of the last good record (0: none).
    public var lastSequence: UInt64
    /// The sequence number the newest valid snapshot covers through; `nil` without one.
    public var snapshotSequence: UInt64?
    /// Damaged snapshots a start would set aside, newest first.
    public var damagedSnapshots: [SkippedSnapshot]
    /// The torn tail a start would cut off.
    public var tornTail: JournalTruncation?
    /// Damage followed by valid records: a start refuses.
    public var corruption: JournalCorruption?
    /// Any other reason a start refuses (`corruption` is also here as a `.corrupt` error).
    public var refusal: JournalError?
    /// Gap records left by an earlier repair.
    public var gapRecords: Int
    /// The number in the `EPOCH` file; `nil` when the file is missing.
    public var epochFile: UInt64?
    /// The highest epoch a record checked establishes (`JournalRecordCodec.epoch(of:)`);
    /// `nil` without one.
    public var highestJournalEpoch: UInt64?
    /// What a repair would drop, by id (`JournalLoss`); `nil` when the journal needs none.
    public var loss: JournalLoss?

    /// The overall finding.
    public var verdict: Verdict {
        if refusal != nil { return .corrupt }
        if tornTail != nil || !damagedSnapshots.isEmpty { return .recoverable }
        return .clean
    }
}

extension FileStore {
    /// Checks a store directory the way `open` would, without taking the lock and without
    /// changing a byte: snapshots, every journal segment a start reads, every record's
    /// frame and checksum, and every entry's decoding.
    ///
    /// A coordinator writing meanwhile may make the last record look torn; run it on a
    /// stopped store for a definite answer.
    /// - Parameters:
    ///   - directory: the store directory (holding `journal/` and `snapshot/`).
    ///   - codec: decodes the journal's records.
    /// - Returns: what was found; damage is reported, not thrown.
    /// - Throws: `JournalError` `.io` when the directory does not exist or cannot be read.
    public static func verify<Codec: JournalRecordCodec>(directory: URL, codec: Codec) throws -> StoreVerification {
        guard FileCalls.isDirectory(directory.path) else {
            throw JournalError(.io, path: directory.path, message: "no store directory here")
        }
        var result = StoreVerification(
            directory: directory.path, segmentCount: 0, recordsChecked: 0, lastSequence: 0, snapshotSequence: nil,
            damagedSnapshots: [], tornTail: nil, corruption: nil, refusal: nil, gapRecords: 0, epochFile: nil,
            highestJournalEpoch: nil, loss: nil)
        do {
            result.epochFile = try StoreLock.recordedEpoch(of: directory)
        } catch let error as JournalError {
            result.refusal = error
            return result
        }
        let journalDirectory = directory.appendingPathComponent("journal")
        do {
            result.segmentCount = try FileJournal.segmentFiles(in: journalDirectory).count
            let (snapshot, skipped) = try SnapshotStore(directory: directory.appendingPathComponent("snapshot"))
                .loadNewestValid()
            result.snapshotSequence = snapshot?.sequence
            result.damagedSnapshots = skipped
            var highestEpoch: UInt64?
            let inspection = try FileJournal.inspect(
                directory: journalDirectory, replayingAfter: snapshot?.sequence ?? 0, codec: codec
            ) { _, record in
                if let epoch = codec.epoch(of: record) { highestEpoch = max(highestEpoch ?? 0, epoch) }
            }
            result.highestJournalEpoch = highestEpoch
            result.recordsChecked = inspection.scan.recordsRead
            result.gapRecords = inspection.scan.gapRecords
            result.lastSequence = max(inspection.scan.nextSequence ?? 1, 1) - 1
            if let damage = inspection.scan.damage {
                let later = inspection.files[(damage.index + 1)...]
                var bytes = damage.record.bytesDiscarded
                for file in later { bytes += try FileCalls.fileSize(atPath: file.path) ?? 0 }
                result.tornTail = JournalTruncation(
                    segmentPath: inspection.files[damage.index].path, offset: damage.record.offset,
                    bytesDiscarded: bytes, reason: damage.record.reason, removedSegmentPaths: later.map(\.path),
                    incompleteGroupRecords: damage.record.withheldRecords)
            }
        } catch let error as JournalError where error.code != .io {
            result.refusal = error
            result.corruption = error.corruption
        }
        if result.tornTail != nil || result.corruption != nil {
            // What a repair would drop, read from the same bytes (a newer format has thrown above).
            if let plans = try? plan(journal: journalDirectory, codec: codec) {
                result.loss = JournalLoss(plans.flatMap(\.dropped), sequences: plans.flatMap(\.lostSequences))
            }
        }
        return result
    }
}
