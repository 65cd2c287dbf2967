import Foundation

/// What `FileStore.repair(directory:at:codec:)` did to each journal segment it rewrote.
public struct StoreRepairReport: Sendable {
    /// A byte range of a segment that held no valid record and was left out.
    public struct DroppedRange: Hashable, Sendable, CustomStringConvertible {
        /// Its offset in the original segment, in bytes.
        public var offset: Int
        /// Its length, in bytes.
        public var bytes: Int
        /// Why: the check the first record there failed, or `out_of_order` for a valid
        /// record whose sequence number does not fit between its neighbours.
        public var reason: String
        /// Whether the range is the journal's torn tail (a write a crash cut short, or zero
        /// fill): never acknowledged under `fsync: always`. Anything else was written whole.
        public var isTornTail: Bool
        /// What the range's records were about, as far as they could be read
        /// (`DamagedRecordReader`); empty for a torn tail.
        public var subjects: RecordSubjects
        /// Records read exactly (one flipped bit corrected, the checksum confirming it).
        public var exactRecords: Int
        /// Records read without a checksum match: their ids may be altered by the damage.
        public var possiblyAlteredRecords: Int
        /// Records that could not be read at all: their ids cannot be named.
        public var unreadableRecords: Int

        /// Creates a range.
        public init(
            offset: Int, bytes: Int, reason: String, isTornTail: Bool = false, subjects: RecordSubjects = RecordSubjects(),
            exactRecords: Int = 0, possiblyAlteredRecords: Int = 0, unreadableRecords: Int = 0
        ) {
            self.offset = offset
            self.bytes = bytes
            self.reason = reason
            self.isTornTail = isTornTail
            self.subjects = subjects
            self.exactRecords = exactRecords
            self.possiblyAlteredRecords = possiblyAlteredRecords
            self.unreadableRecords = unreadableRecords
        }

        /// Such as "120 bytes at offset 4096 (checksum_mismatch)".
        public var description: String { "\(bytes) bytes at offset \(offset) (\(reason)\(isTornTail ? ", torn tail" : ""))" }
    }

    /// One rewritten segment.
    public struct Segment: Sendable {
        /// The segment file (rewritten in place).
        public var path: String
        /// The untouched copy of the damaged original, beside it.
        public var copyPath: String
        /// Valid records kept, gap records of an earlier repair included.
        public var recordsKept: Int
        /// Byte ranges left out.
        public var dropped: [DroppedRange]
        /// Gap records written for sequence numbers that were lost.
        public var gapRecordsWritten: Int
        /// Sequence numbers those gap records stand for.
        public var sequencesLost: UInt64
        /// The ranges of those sequence numbers.
        public var lostSequences: [Range<UInt64>] = []
        /// Groups of records the damage cut in the middle whose surviving records were kept,
        /// the last of them re-framed to end the group (see `FileStore.repair`).
        public var groupsClosed = 0
        /// The segment's size before the repair, in bytes.
        public var bytesBefore: Int
        /// The segment's size after the repair, in bytes.
        public var bytesAfter: Int
    }

    /// The store directory.
    public var directory: String
    /// The segments rewritten, oldest first; empty when nothing needed repair.
    public var segments: [Segment]
    /// The store checked again after the repair.
    public var after: StoreVerification

    /// Bytes left out over every segment.
    public var bytesDropped: Int { segments.reduce(0) { $0 + $1.dropped.reduce(0) { $0 + $1.bytes } } }
    /// Valid records kept in the rewritten segments.
    public var recordsKept: Int { segments.reduce(0) { $0 + $1.recordsKept } }
    /// What the dropped records held (`JournalLoss`).
    public var loss: JournalLoss { JournalLoss(segments.flatMap(\.dropped), sequences: segments.flatMap(\.lostSequences)) }
}
