import ChimeCore
/// The on-disk format of the journal: segment files holding checksummed, length-prefixed
/// records, grouped so that what one append wrote is read whole or not at all.
///
/// All integers are little-endian. CRC-32C is the Castagnoli checksum (see ``CRC32C``).
///
/// **Segment files.** The journal is the directory `journal/`; each file in it is a segment
/// named by the sequence number of its first record, in 20 decimal digits:
/// `journal/00000000000000000001.log`, `journal/00000000000000125001.log`, … A segment
/// starts with a 24-byte file header:
///
/// | Offset | Size | Field |
/// |-------:|-----:|-------|
/// | 0      | 8    | magic, ASCII `CHIMEJNL` |
/// | 8      | 4    | format version, UInt32: `2` is written; `1` is still read |
/// | 12     | 8    | first sequence number, UInt64 (equals the file name) |
/// | 20     | 4    | CRC-32C of bytes 0..<20 |
///
/// **Records** follow back to back until the end of the file, each a 20-byte header and a
/// payload:
///
/// | Offset | Size | Field |
/// |-------:|-----:|-------|
/// | 0      | 2    | magic, ASCII `Cr` (`0x43 0x72`) |
/// | 2      | 1    | record format version: the segment's format version (`2`, or `1` in a segment of format 1) |
/// | 3      | 1    | version 2: bit 7 is the **group mark** (set: the record's group goes on after it), bits 0–6 the payload encoding; version 1: the payload encoding (no mark) |
/// | 4      | 4    | payload length *n* in bytes, UInt32, at most 16 MiB |
/// | 8      | 8    | sequence number, UInt64 |
/// | 16     | 4    | CRC-32C of header bytes 0..<16 followed by the *n* payload bytes |
/// | 20     | *n*  | payload |
///
/// Payload encodings are `3` for a gap; any other value (below 128) is the
/// ``JournalRecordCodec``'s (the coordinator's: `4` one `JournalEntry` as UTF-8 JSON, `2`
/// compact, `1` JSON of earlier versions). The codec decides what a payload means (the
/// coordinator's `JournalEntryCodec` documents its kinds). A record whose encoding or kind the
/// codec does not know was written by a newer version: reading it fails with
/// `JournalError.Code.unknownEntryKind` and changes nothing.
///
/// **Groups.** The records of one ``FileJournal/append(_:using:)`` (the coordinator appends
/// one loop turn's entries at a time, so every request's entries) form a **group**: each
/// record but the last carries the group mark. A group is never split across segments. A
/// reader hands out a group's records only once its last one has been read: a group whose
/// last record is missing — the bytes end, a record is torn, or a gap record comes first — is
/// an **incomplete group**, and none of its records is replayed. A record of format 1 (every
/// store written before groups) is a group of one, so old journals read as they always did.
/// Format 2 is a new segment format version rather than new bits in old records: a reader of
/// format 1 meets a segment of format 2 at its header and refuses it (`unsupportedVersion`,
/// nothing changed) instead of misreading a group mark as an encoding; and this code never
/// appends to a segment of format 1 (the first append after opening one starts a segment of
/// format 2).
///
/// **Sequence numbers** start at 1 and grow by one per record across segments, so segment
/// *k + 1* starts where segment *k* ends. A new segment is started when the current one
/// would grow past the segment size (64 MiB by default); a record is never split, nor a group
/// (a group larger than the segment size gets a segment of its own).
///
/// **Gaps.** A record with payload encoding `3` stands for sequence numbers that
/// `chime store repair` could not salvage: its sequence number is the first one missing and
/// its payload a UInt64 count *k* ≥ 1 of missing numbers, so the next record carries the
/// sequence number plus *k*. It holds no entry, belongs to no group (it never carries the
/// mark, and one inside a group makes that group incomplete); readers skip it.
///
/// **Damage.** A reader accepts records in order and stops at the first one that is torn
/// or fails a check: fewer than 20 header bytes left, a wrong magic (zero bytes, as a power
/// loss leaves on some file systems, are reported as such), a record version other than the
/// segment's, a length over the limit or past the end of the file, a checksum mismatch, a
/// malformed gap record, or a sequence number that is not the previous one plus one. Good
/// records end at the end of the last complete group: the records of an incomplete group
/// before the damage are cut off with it. The reader then searches the rest of the segment,
/// byte by byte, for a frame that passes every check but the sequence number
/// (``RecordReader/validFrames(in:from:recordVersion:)``). Only when none is found, in this
/// segment or a later one, is the damage a **torn tail** (an incomplete final record, zero
/// fill after the last record, or an incomplete final group — the bytes a `kill -9` leaves
/// of a `write` of several records it cut short): ``FileJournal`` truncates it at the start
/// of the incomplete group (or of the damaged record) and reports where, how many bytes and
/// how many whole records of the incomplete group went with it. Damage followed by any valid
/// frame is **corruption** — an incomplete group followed by valid records included, which
/// the writer never leaves —: opening fails with `JournalError.Code.corrupt` carrying a
/// ``JournalCorruption`` report, and nothing on disk changes (`chime store repair` salvages
/// every valid record).
public enum RecordFraming {
    /// The size of a record header, in bytes.
    public static let recordHeaderLength = 20
    /// The size of a segment file header, in bytes.
    public static let segmentHeaderLength = 24
    /// The largest payload a record may carry, in bytes (16 MiB).
    public static let maximumPayloadLength = 16 << 20
    /// The segment file format version this code writes: 2, whose records carry group marks.
    public static let segmentFormatVersion: UInt32 = 2
    /// The oldest segment file format version this code reads: 1, every record a group of one.
    public static let oldestSegmentFormatVersion: UInt32 = 1
    /// The record format version this code writes (in segments of format 2); a segment's
    /// records carry its format version.
    public static let recordFormatVersion: UInt8 = 2
    /// In a record of version 2, the bit of the encoding byte that says its group goes on
    /// after it (the **group mark**); the other seven bits are the payload encoding.
    public static let groupMark: UInt8 = 0x80
    /// The payload encoding byte of a gap record: sequence numbers a repair could not
    /// salvage (see **Gaps** above).
    public static let gapEncoding: UInt8 = 3

    static let segmentMagic = Array("CHIMEJNL".utf8)
    static let recordMagic: [UInt8] = [0x43, 0x72]

    /// Appends one framed record (header and payload) to `buffer`.
    /// - Parameters:
    ///   - sequence: the record's sequence number.
    ///   - encoding: the payload encoding (below 128).
    ///   - continuesGroup: whether the record's group goes on after it (the group mark; only
    ///     in records of version 2).
    ///   - recordVersion: `recordFormatVersion` (2), or 1 for a segment of format 1 (tests
    ///     and repairs of old segments).
    ///   - payload: the payload bytes.
    ///   - buffer: where the record goes.
    /// - Precondition: `payload.count <= maximumPayloadLength`; `encoding < 128` (version 2);
    ///   no group mark in version 1.
    public static func appendRecord(
        sequence: UInt64, encoding: UInt8, continuesGroup: Bool = false, recordVersion: UInt8 = recordFormatVersion,
        payload: UnsafeRawBufferPointer, to buffer: inout [UInt8]
    ) {
        precondition(payload.count <= maximumPayloadLength, "journal payload of \(payload.count) bytes over the limit")
        precondition(recordVersion == 1 || recordVersion == recordFormatVersion, "record version \(recordVersion) is not written")
        precondition(recordVersion == 1 ? !continuesGroup : encoding & groupMark == 0, "payload encoding \(encoding) collides with the group mark")
        let start = buffer.count
        buffer.append(contentsOf: recordMagic)
        buffer.append(recordVersion)
        buffer.append(continuesGroup ? encoding | groupMark : encoding)
        buffer.appendLittleEndian(UInt32(payload.count))
        buffer.appendLittleEndian(sequence)
        var crc = CRC32C()
        buffer.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[start..<(start + 16)])) }
        crc.update(payload)
        buffer.appendLittleEndian(crc.value)
        buffer.append(contentsOf: payload)
    }

    /// The payload encoding and group mark an encoding byte of a record of `recordVersion`
    /// holds (version 1 has no mark).
    static func splitEncodingByte(_ byte: UInt8, recordVersion: UInt8) -> (encoding: UInt8, continuesGroup: Bool) {
        recordVersion == 1 ? (byte, false) : (byte & ~groupMark, byte & groupMark != 0)
    }

    /// Whether this code reads records of `version`.
    static func isReadableRecordVersion(_ version: UInt8) -> Bool {
        version >= UInt8(oldestSegmentFormatVersion) && version <= recordFormatVersion
    }

    /// The record version the records of a segment of format `format` carry (the two are
    /// numbered alike: 1 or 2), for a ``RecordReader`` of that segment.
    public static func recordVersion(ofSegmentFormat format: UInt32) -> UInt8 { UInt8(truncatingIfNeeded: format) }

    /// Appends a gap record (header and an 8-byte payload) standing for the `count` sequence
    /// numbers from `firstMissing` on, of `recordVersion` (the segment's).
    /// - Precondition: `count >= 1`.
    public static func appendGapRecord(
        firstMissing: UInt64, count: UInt64, recordVersion: UInt8 = recordFormatVersion, to buffer: inout [UInt8]
    ) {
        precondition(count >= 1, "a gap record stands for at least one sequence number")
        let payload = Swift.withUnsafeBytes(of: count.littleEndian) { Array($0) }
        payload.withUnsafeBytes {
            appendRecord(sequence: firstMissing, encoding: gapEncoding, recordVersion: recordVersion, payload: $0, to: &buffer)
        }
    }

    /// The count of missing sequence numbers a gap record's payload holds; `nil` when the
    /// payload is not 8 bytes or holds 0.
    static func gapCount(_ payload: ArraySlice<UInt8>) -> UInt64? {
        guard payload.count == 8 else { return nil }
        var count: UInt64 = 0
        for (shift, byte) in payload.enumerated() { count |= UInt64(byte) << (8 * UInt64(shift)) }
        return count == 0 ? nil : count
    }

    /// The 24-byte file header of a segment whose first record has `firstSequence`, of
    /// `formatVersion` (`segmentFormatVersion`, or 1 for tests and repairs of old segments).
    public static func makeSegmentHeader(firstSequence: UInt64, formatVersion: UInt32 = segmentFormatVersion) -> [UInt8] {
        var header = segmentMagic
        header.appendLittleEndian(formatVersion)
        header.appendLittleEndian(firstSequence)
        header.appendLittleEndian(CRC32C.checksum(header))
        return header
    }

    /// The file name of the segment starting at `firstSequence`, such as
    /// `00000000000000000001.log`.
    public static func segmentFileName(firstSequence: UInt64) -> String {
        let digits = String(firstSequence)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".log"
    }

    /// The first sequence number a segment file name stands for, or `nil` when `name` is
    /// not a segment file name.
    public static func firstSequence(ofSegmentFileName name: String) -> UInt64? {
        guard name.utf8.count == 24, name.hasSuffix(".log") else { return nil }
        let digits = name.prefix(20)
        guard digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(digits)
    }

    /// What a segment's first bytes say.
    enum SegmentHeaderCheck: Equatable {
        /// A valid header of a format this code reads (its records carry `format` as their
        /// record version).
        case valid(firstSequence: UInt64, format: UInt32)
        /// A valid magic with a format version newer than this code reads.
        case newerVersion(UInt32)
        /// A torn or corrupt header.
        case damaged(RecordDamage.Reason)
    }

    /// Checks the segment header at the start of `bytes`.
    static func checkSegmentHeader(_ bytes: [UInt8]) -> SegmentHeaderCheck {
        let available = min(bytes.count, segmentHeaderLength)
        if bytes.isEmpty || bytes.allSatisfy({ $0 == 0 }) { return .damaged(.zeroFilled) }
        guard bytes.starts(with: segmentMagic.prefix(available)) else { return .damaged(.badMagic) }
        guard bytes.count >= 12 else { return .damaged(.truncatedHeader) }
        let version = bytes.loadLittleEndian(UInt32.self, at: 8)
        if version > segmentFormatVersion { return .newerVersion(version) }
        guard bytes.count >= segmentHeaderLength else { return .damaged(.truncatedHeader) }
        guard version >= oldestSegmentFormatVersion else { return .damaged(.badSegmentHeader) }
        guard CRC32C.checksum(bytes[0..<20]) == bytes.loadLittleEndian(UInt32.self, at: 20) else {
            return .damaged(.badSegmentHeader)
        }
        return .valid(firstSequence: bytes.loadLittleEndian(UInt64.self, at: 12), format: version)
    }
}

extension [UInt8] {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    func loadLittleEndian<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count, "read past the end of a buffer")
        return withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
}
