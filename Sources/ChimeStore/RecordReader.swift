/// Reads framed records from a segment's bytes in order, stopping at the first torn or
/// corrupt one (see ``RecordFraming`` for the format and the checks).
///
/// ```swift
/// var reader = RecordReader(bytes: segment, startingAt: RecordFraming.segmentHeaderLength,
///                           expectedSequence: 1)
/// while let record = reader.next() { … }
/// if let damage = reader.damage { print(damage) }
/// ```
public struct RecordReader {
    /// One record that passed every check.
    public struct Record: Sendable {
        /// The record's sequence number.
        public var sequence: UInt64
        /// The payload encoding byte (`RecordFraming.jsonEntryEncoding`).
        public var encoding: UInt8
        /// The byte offset of the record's header in the file.
        public var offset: Int
        /// The payload bytes.
        public var payload: ArraySlice<UInt8>
    }

    private let bytes: [UInt8]
    /// The byte offset where the next record starts: after the last good record once the
    /// reader has stopped.
    public private(set) var offset: Int
    /// The sequence number the next record must carry, when known.
    public private(set) var expectedSequence: UInt64?
    /// Why the reader stopped before the end of the bytes; `nil` while reading and after a
    /// clean end.
    public private(set) var damage: RecordDamage?

    /// Prepares to read `bytes` from `offset`.
    /// - Parameters:
    ///   - bytes: a whole segment file.
    ///   - offset: where the first record starts, in bytes (after the segment header).
    ///   - expectedSequence: the first record's sequence number, when known; every later
    ///     record must carry the previous one's plus one.
    public init(bytes: [UInt8], startingAt offset: Int, expectedSequence: UInt64? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.expectedSequence = expectedSequence
    }

    /// The next good record, or `nil` at the end of the bytes or at the first damaged
    /// record (then `damage` says where and why).
    public mutating func next() -> Record? {
        guard damage == nil, offset < bytes.count else { return nil }
        let remaining = bytes.count - offset
        let header = RecordFraming.recordHeaderLength
        guard remaining >= header else {
            return stop(tailIsZero() ? .zeroFilled : .truncatedHeader)
        }
        guard bytes[offset] == RecordFraming.recordMagic[0], bytes[offset + 1] == RecordFraming.recordMagic[1] else {
            return stop(tailIsZero() ? .zeroFilled : .badMagic)
        }
        guard bytes[offset + 2] == RecordFraming.recordFormatVersion else { return stop(.badRecordHeader) }
        let length = Int(bytes.loadLittleEndian(UInt32.self, at: offset + 4))
        guard length <= RecordFraming.maximumPayloadLength else { return stop(.lengthOutOfRange) }
        guard length <= remaining - header else { return stop(.truncatedPayload) }
        let sequence = bytes.loadLittleEndian(UInt64.self, at: offset + 8)
        var crc = CRC32C()
        crc.update(bytes[offset..<(offset + 16)])
        crc.update(bytes[(offset + header)..<(offset + header + length)])
        guard crc.value == bytes.loadLittleEndian(UInt32.self, at: offset + 16) else {
            return stop(.checksumMismatch)
        }
        if let expectedSequence, sequence != expectedSequence { return stop(.sequenceMismatch) }
        let record = Record(
            sequence: sequence, encoding: bytes[offset + 3], offset: offset,
            payload: bytes[(offset + header)..<(offset + header + length)])
        offset += header + length
        expectedSequence = sequence &+ 1
        return record
    }

    private mutating func stop(_ reason: RecordDamage.Reason) -> Record? {
        damage = RecordDamage(offset: offset, bytesDiscarded: bytes.count - offset, reason: reason)
        return nil
    }

    private func tailIsZero() -> Bool {
        bytes[offset...].allSatisfy { $0 == 0 }
    }
}

/// Where a segment's good records end and why: the damaged tail from `offset` to the end
/// of the file.
public struct RecordDamage: Hashable, Sendable, CustomStringConvertible {
    /// Why a record or segment header failed its checks.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// A stable name such as `"checksum_mismatch"`.
        public var rawValue: String

        /// Creates a reason from its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Fewer bytes than a header are left (a write torn by a crash).
        public static let truncatedHeader = Reason(rawValue: "truncated_header")
        /// The payload runs past the end of the file (a write torn by a crash).
        public static let truncatedPayload = Reason(rawValue: "truncated_payload")
        /// Every byte from the offset to the end of the file is zero, as some file systems
        /// leave after a power loss.
        public static let zeroFilled = Reason(rawValue: "zero_filled")
        /// The header does not start with the record (or segment) magic.
        public static let badMagic = Reason(rawValue: "bad_magic")
        /// The record format version byte is not one this code writes.
        public static let badRecordHeader = Reason(rawValue: "bad_record_header")
        /// The segment file header has a wrong format version or fails its checksum.
        public static let badSegmentHeader = Reason(rawValue: "bad_segment_header")
        /// The payload length is over `RecordFraming.maximumPayloadLength`.
        public static let lengthOutOfRange = Reason(rawValue: "length_out_of_range")
        /// The CRC-32C does not match the header and payload.
        public static let checksumMismatch = Reason(rawValue: "checksum_mismatch")
        /// The sequence number is not the previous record's plus one.
        public static let sequenceMismatch = Reason(rawValue: "sequence_mismatch")

        /// The stable name.
        public var description: String { rawValue }
    }

    /// The byte offset in the file of the first damaged record (0: the segment header).
    public var offset: Int
    /// How many bytes lie from `offset` to the end of the file.
    public var bytesDiscarded: Int
    /// What check failed.
    public var reason: Reason

    /// Creates a damage report.
    public init(offset: Int, bytesDiscarded: Int, reason: Reason) {
        self.offset = offset
        self.bytesDiscarded = bytesDiscarded
        self.reason = reason
    }

    /// Such as "checksum_mismatch at offset 4096, 120 bytes".
    public var description: String { "\(reason) at offset \(offset), \(bytesDiscarded) bytes" }
}
