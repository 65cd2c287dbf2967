/// Damage inside the journal that is not a torn tail: a record that fails its checks
/// followed by valid records, in its own segment or a later one (an incomplete group of
/// records followed by valid records included: reason `incomplete_group`, at the group's
/// first record), or a whole record that fails its checks at the very end (written
/// completely, then changed). Opening the journal
/// refuses it (`JournalError.Code.corrupt`) and changes nothing; `chime store repair`
/// salvages the valid records.
public struct JournalCorruption: Hashable, Sendable, CustomStringConvertible {
    /// The segment file holding the damaged record.
    public var segmentPath: String
    /// The byte offset of the damaged record in that file (0: the segment header).
    public var offset: Int
    /// What check the record failed.
    public var reason: RecordDamage.Reason
    /// Valid records after the damage: in the damaged segment (found by searching for
    /// valid frames, see ``RecordReader/validFrames(in:from:recordVersion:)``) and in every later
    /// segment, together.
    public var validRecordsAfter: Int
    /// The byte offset of the first valid record after the damage in the same segment;
    /// `nil` when only later segments hold valid records.
    public var nextValidOffset: Int?
    /// The later segment files that hold valid records, oldest first.
    public var laterSegmentPaths: [String]
    /// Whether the damaged record itself was written whole (its length fits the file, or its
    /// header is whole but not a record's): damage to acknowledged bytes, not a write a
    /// crash cut short (`RecordReader.isTornTail`).
    public var isWholeRecord: Bool

    /// Creates a report.
    public init(
        segmentPath: String, offset: Int, reason: RecordDamage.Reason, validRecordsAfter: Int, nextValidOffset: Int?,
        laterSegmentPaths: [String] = [], isWholeRecord: Bool = false
    ) {
        self.isWholeRecord = isWholeRecord
        self.segmentPath = segmentPath
        self.offset = offset
        self.reason = reason
        self.validRecordsAfter = validRecordsAfter
        self.nextValidOffset = nextValidOffset
        self.laterSegmentPaths = laterSegmentPaths
    }

    /// Such as "checksum_mismatch at offset 4096 of …/00000000000000000001.log, followed by
    /// 151 valid records (the next at offset 4160)".
    public var description: String {
        if validRecordsAfter == 0 {
            return "\(reason) at offset \(offset) of \(segmentPath): the last record was written whole and then changed (not a torn write)"
        }
        var text = "\(reason) at offset \(offset) of \(segmentPath), followed by \(validRecordsAfter) valid records"
        if let nextValidOffset {
            text += " (the next at offset \(nextValidOffset))"
        } else if let first = laterSegmentPaths.first {
            text += " (in \(first)" + (laterSegmentPaths.count > 1 ? " and \(laterSegmentPaths.count - 1) later segments)" : ")")
        }
        return text
    }
}
