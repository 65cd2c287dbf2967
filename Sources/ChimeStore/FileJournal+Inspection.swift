import Foundation

extension FileJournal {
    /// A segment file found in the journal directory.
    struct SegmentFile {
        var firstSequence: UInt64
        var path: String
    }

    /// What reading every segment found, before anything on disk changes.
    struct Inspection {
        /// The segment files, oldest first.
        var files: [SegmentFile]
        /// The segments read up to the first damage.
        var scan: Scan
    }

    /// The segment files of the journal in `directory`, oldest first; `[]` when it does not
    /// exist.
    /// - Throws: `JournalError` `.io`.
    static func segmentFiles(in directory: URL) throws -> [SegmentFile] {
        let path = directory.path
        return try FileCalls.listDirectory(path)
            .compactMap { name in
                RecordFraming.firstSequence(ofSegmentFileName: name).map { SegmentFile(firstSequence: $0, path: "\(path)/\(name)") }
            }
            .sorted { $0.firstSequence < $1.firstSequence }
    }

    /// Reads every segment in order, replays the entries after `replayStart`, and decides
    /// whether damage is a torn tail (no valid record after it: the caller may cut it off)
    /// or corruption (thrown). Reads only.
    /// - Throws: as `open`, before anything is changed.
    static func inspect<Codec: JournalRecordCodec>(
        directory: URL, replayingAfter replayStart: UInt64, codec: Codec, replay: (UInt64, Codec.Record) throws -> Void
    ) throws -> Inspection {
        let files = try segmentFiles(in: directory)
        if let first = files.first, first.firstSequence > replayStart + 1 {
            throw JournalError(
                .corrupt, path: first.path,
                message:
                    "the journal starts at sequence \(first.firstSequence) but the newest valid snapshot covers only through \(replayStart): entries \(replayStart + 1)...\(first.firstSequence - 1) are missing"
            )
        }
        var scan = Scan(replayStart: replayStart)
        var laterRecords = 0
        var laterPaths: [String] = []
        for (index, file) in files.enumerated() {
            let bytes = try FileCalls.readFile(file.path)
            if scan.damage != nil {
                let count = try validRecordCount(inLaterSegment: bytes, path: file.path)
                if count > 0 {
                    laterRecords += count
                    laterPaths.append(file.path)
                }
            } else if index + 1 < files.count, files[index + 1].firstSequence <= replayStart + 1 {
                // Wholly behind the snapshot (kept for a fallback to the previous one): its
                // records are neither replayed nor checked, only its header and place.
                try scan.skip(bytes, path: file.path, firstSequence: file.firstSequence, nextSequence: files[index + 1].firstSequence)
            } else {
                try scan.read(bytes, index: index, path: file.path, firstSequence: file.firstSequence, codec: codec, replay: replay)
            }
        }
        if let damage = scan.damage, scan.followingInSegment.count + laterRecords > 0 || scan.isDamageInWrittenBytes {
            let path = files[damage.index].path
            // An incomplete group has no damaged bytes of its own: name where it starts.
            let offset = damage.record.reason == .incompleteGroup ? damage.record.offset : damage.record.frameOffset
            let corruption = JournalCorruption(
                segmentPath: path, offset: offset, reason: damage.record.reason,
                validRecordsAfter: scan.followingInSegment.count + laterRecords,
                nextValidOffset: scan.followingInSegment.first?.offset, laterSegmentPaths: laterPaths,
                isWholeRecord: scan.isDamageInWrittenBytes)
            throw JournalError(
                .corrupt, path: path, offset: UInt64(offset),
                message:
                    "\(corruption): damage to records that were written whole, not a torn tail; nothing was changed ('chime store repair' keeps a copy, salvages every valid record and names what was lost)",
                corruption: corruption)
        }
        return Inspection(files: files, scan: scan)
    }

    /// The state of reading the segments in order, up to the first damage.
    struct Scan {
        let replayStart: UInt64
        var segments: [Segment] = []
        var nextSequence: UInt64?
        var damage: (index: Int, record: RecordDamage)?
        /// Whether the damage is to bytes written whole (`RecordReader.isTornTail` says no):
        /// corruption even when no valid record follows.
        var isDamageInWrittenBytes = false
        /// Valid frames after the damage in the damaged segment.
        var followingInSegment: [RecordReader.Record] = []
        var entriesReplayed = 0
        /// Records checked (replayed or not), gap records aside.
        var recordsRead = 0
        /// Gap records left by a repair.
        var gapRecords = 0

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
            case .valid(let headerSequence, let format):
                guard headerSequence == firstSequence, nextSequence.map({ $0 == firstSequence }) ?? true else {
                    throw JournalError(
                        .corrupt, path: path,
                        message: "the segment header says it starts at sequence \(headerSequence), its name \(firstSequence), the previous segment ends at \((nextSequence ?? 1) - 1)")
                }
                segments.append(Segment(firstSequence: firstSequence, path: path, size: bytes.count, format: format))
                nextSequence = next
            }
        }

        mutating func read<Codec: JournalRecordCodec>(
            _ bytes: [UInt8], index: Int, path: String, firstSequence: UInt64, codec: Codec,
            replay: (UInt64, Codec.Record) throws -> Void
        ) throws {
            switch RecordFraming.checkSegmentHeader(bytes) {
            case .newerVersion(let version):
                throw unsupported(version, path: path)
            case .damaged(let reason):
                damage = (index, RecordDamage(offset: 0, bytesDiscarded: bytes.count, reason: reason))
                followingInSegment = RecordReader.validFrames(in: bytes, from: 0, recordVersion: nil)
            case .valid(let headerSequence, _) where headerSequence != firstSequence:
                // A checksummed header is no torn write: the file was renamed or copied.
                throw JournalError(
                    .corrupt, path: path,
                    message:
                        "the segment header says it starts at sequence \(headerSequence), its name says \(firstSequence)"
                )
            case .valid(_, let format):
                if let nextSequence, firstSequence != nextSequence {
                    throw JournalError(
                        .corrupt, path: path,
                        message:
                            "the segment starts at sequence \(firstSequence) but the previous one ends at \(nextSequence - 1): a segment is missing"
                    )
                }
                let recordVersion = RecordFraming.recordVersion(ofSegmentFormat: format)
                var reader = RecordReader(
                    bytes: bytes, startingAt: RecordFraming.segmentHeaderLength, expectedSequence: firstSequence,
                    recordVersion: recordVersion)
                // The reader hands out only complete groups: an incomplete one is never replayed.
                while let record = reader.next() {
                    recordsRead += 1
                    guard record.sequence > replayStart else { continue }
                    try replay(record.sequence, codec.decode(record, path: path))
                    entriesReplayed += 1
                }
                gapRecords += reader.gapRecords
                segments.append(Segment(firstSequence: firstSequence, path: path, size: reader.offset, format: format))
                nextSequence = reader.expectedSequence
                if let record = reader.damage {
                    // Cut at `record.offset`: the damaged record, or the incomplete group it ends.
                    damage = (index, record)
                    // Only a search of the rest tells a torn tail from corruption (zero fill to
                    // the end holds no frame; an incomplete group at the very end, no byte).
                    if record.reason != .zeroFilled {
                        followingInSegment = RecordReader.validFrames(in: bytes, from: record.frameOffset, recordVersion: recordVersion)
                        isDamageInWrittenBytes = !RecordReader.isTornTail(in: bytes, at: record.frameOffset, recordVersion: recordVersion)
                    }
                }
            }
        }
    }

    /// How many valid records a segment after a damaged one holds (0: it is part of the
    /// damaged tail, such as a segment just created when the machine lost power).
    /// - Throws: `JournalError` `.unsupportedVersion` for a segment of a newer format.
    static func validRecordCount(inLaterSegment bytes: [UInt8], path: String) throws -> Int {
        switch RecordFraming.checkSegmentHeader(bytes) {
        case .newerVersion(let version): throw unsupported(version, path: path)
        case .valid(_, let format):
            return RecordReader.validFrames(in: bytes, from: 0, recordVersion: RecordFraming.recordVersion(ofSegmentFormat: format)).count
        case .damaged: return RecordReader.validFrames(in: bytes, from: 0, recordVersion: nil).count
        }
    }

    static func unsupported(_ version: UInt32, path: String) -> JournalError {
        JournalError(
            .unsupportedVersion, path: path,
            message:
                "journal segment format version \(version) is newer than the supported \(RecordFraming.segmentFormatVersion); nothing was changed"
        )
    }
}
