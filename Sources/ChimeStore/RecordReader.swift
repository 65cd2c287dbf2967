import ChimeCore
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
        /// The payload encoding byte (see ``RecordFraming``).
        public var encoding: UInt8
        /// The byte offset of the record's header in the file.
        public var offset: Int
        /// The payload bytes.
        public var payload: ArraySlice<UInt8>

        /// A record with these fields (for a codec's tests; readers make them from bytes).
        public init(sequence: UInt64, encoding: UInt8, offset: Int, payload: ArraySlice<UInt8>) {
            self.sequence = sequence
            self.encoding = encoding
            self.offset = offset
            self.payload = payload
        }
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
    /// record (then `damage` says where and why). Gap records (sequence numbers a repair
    /// could not salvage) are skipped: the record after one carries its sequence number
    /// plus its count.
    public mutating func next() -> Record? {
        while damage == nil, offset < bytes.count {
            let frame: Frame
            switch Self.checkFrame(in: bytes, at: offset) {
            case .damaged(let reason):
                let isZeroTail = (reason == .truncatedHeader || reason == .badMagic) && tailIsZero()
                return stop(isZeroTail ? .zeroFilled : reason)
            case .valid(let valid):
                frame = valid
            }
            if let expectedSequence, frame.sequence != expectedSequence { return stop(.sequenceMismatch) }
            let payload = bytes[(offset + RecordFraming.recordHeaderLength)..<(offset + frame.length)]
            var following = frame.sequence &+ 1
            if frame.encoding == RecordFraming.gapEncoding {
                guard let count = RecordFraming.gapCount(payload), frame.sequence <= UInt64.max - count else {
                    return stop(.badGapRecord)
                }
                following = frame.sequence + count
            }
            let record = Record(sequence: frame.sequence, encoding: frame.encoding, offset: offset, payload: payload)
            offset += frame.length
            expectedSequence = following
            if frame.encoding == RecordFraming.gapEncoding {
                gapRecords += 1
                continue
            }
            return record
        }
        return nil
    }

    /// Gap records skipped so far (left by `chime store repair`).
    public private(set) var gapRecords = 0

    /// A frame that passed every check but its sequence number.
    struct Frame {
        /// Header and payload, in bytes.
        var length: Int
        var sequence: UInt64
        var encoding: UInt8
    }

    enum FrameCheck {
        case valid(Frame)
        case damaged(RecordDamage.Reason)
    }

    /// Checks the record frame at `offset`: magic, version, length and checksum (not the
    /// sequence number). Reads only inside `bytes`.
    static func checkFrame(in bytes: [UInt8], at offset: Int) -> FrameCheck {
        let header = RecordFraming.recordHeaderLength
        guard offset >= 0, offset < bytes.count else { return .damaged(.truncatedHeader) }
        let remaining = bytes.count - offset
        guard remaining >= header else { return .damaged(.truncatedHeader) }
        guard bytes[offset] == RecordFraming.recordMagic[0], bytes[offset + 1] == RecordFraming.recordMagic[1] else {
            return .damaged(.badMagic)
        }
        guard bytes[offset + 2] == RecordFraming.recordFormatVersion else { return .damaged(.badRecordHeader) }
        let length = Int(bytes.loadLittleEndian(UInt32.self, at: offset + 4))
        guard length <= RecordFraming.maximumPayloadLength else { return .damaged(.lengthOutOfRange) }
        guard length <= remaining - header else { return .damaged(.truncatedPayload) }
        var crc = CRC32C()
        crc.update(bytes[offset..<(offset + 16)])
        crc.update(bytes[(offset + header)..<(offset + header + length)])
        guard crc.value == bytes.loadLittleEndian(UInt32.self, at: offset + 16) else {
            return .damaged(.checksumMismatch)
        }
        return .valid(Frame(
            length: header + length, sequence: bytes.loadLittleEndian(UInt64.self, at: offset + 8),
            encoding: bytes[offset + 3]))
    }

    /// Every frame from `offset` on that passes the checks of a record but its sequence
    /// number (magic, version, length, CRC-32C), in file order, gap records included.
    ///
    /// The search tries each byte offset in turn; after a valid frame it goes on after that
    /// frame's end, so a frame is never counted inside another one's payload. It decides
    /// whether damage is a torn tail (no valid frame follows) or corruption. A random match
    /// needs a 2-byte magic, a version byte, a plausible length and a 32-bit checksum to
    /// agree by chance.
    /// - Parameters:
    ///   - bytes: a whole segment file.
    ///   - offset: where to start, in bytes (the damaged record's offset).
    /// - Returns: the frames as records (`payload` slices `bytes`).
    public static func validFrames(in bytes: [UInt8], from offset: Int) -> [Record] {
        var frames: [Record] = []
        var position = max(0, offset)
        let last = bytes.count - RecordFraming.recordHeaderLength
        while position <= last {
            guard bytes[position] == RecordFraming.recordMagic[0], case .valid(let frame) = checkFrame(in: bytes, at: position)
            else {
                position += 1
                continue
            }
            let payloadStart = position + RecordFraming.recordHeaderLength
            frames.append(Record(
                sequence: frame.sequence, encoding: frame.encoding, offset: position,
                payload: bytes[payloadStart..<(position + frame.length)]))
            position += frame.length
        }
        return frames
    }

    /// Whether damage at `offset` that no valid frame follows is a **torn tail** — the bytes
    /// a crash leaves of a write it cut short — rather than a record that was written whole
    /// and changed afterwards, which is corruption wherever it sits (a bit flip in the last
    /// record must not pass for a torn write: that record may have been acknowledged).
    ///
    /// Torn: every byte from `offset` on is zero (zero fill after the last good record);
    /// fewer bytes than a record header are left; or a header with the record magic and
    /// version whose payload runs past the end of the bytes — unless a length field with
    /// one bit changed, or one reaching exactly to the end, makes the checksum pass (then
    /// the length was damaged, not the write). Anything else — a whole header with a wrong
    /// magic or version, a record whose length fits and whose checksum fails — is damage to
    /// written bytes.
    /// - Parameters:
    ///   - bytes: a whole segment file.
    ///   - offset: the damaged record's offset (`RecordDamage.offset`).
    public static func isTornTail(in bytes: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset < bytes.count else { return true }
        if bytes[offset...].allSatisfy({ $0 == 0 }) { return true }
        let header = RecordFraming.recordHeaderLength
        let remaining = bytes.count - offset
        guard remaining >= header else { return true }
        guard bytes[offset] == RecordFraming.recordMagic[0], bytes[offset + 1] == RecordFraming.recordMagic[1],
            bytes[offset + 2] == RecordFraming.recordFormatVersion
        else { return false }
        let length = Int(bytes.loadLittleEndian(UInt32.self, at: offset + 4))
        guard length > remaining - header else { return false }
        let stored = bytes.loadLittleEndian(UInt32.self, at: offset + 16)
        var candidates = (0..<32).map { length ^ (1 << $0) }
        candidates.append(remaining - header)
        for candidate in candidates where candidate >= 0 && candidate <= remaining - header {
            if checksum(of: bytes, at: offset, length: candidate) == stored { return false }
        }
        return true
    }

    /// The CRC-32C of the header at `offset` with its length field set to `length`, and
    /// `length` payload bytes.
    private static func checksum(of bytes: [UInt8], at offset: Int, length: Int) -> UInt32 {
        var header = Array(bytes[offset..<(offset + 16)])
        withUnsafeBytes(of: UInt32(length).littleEndian) { header.replaceSubrange(4..<8, with: $0) }
        var crc = CRC32C()
        crc.update(header)
        let payloadStart = offset + RecordFraming.recordHeaderLength
        crc.update(bytes[payloadStart..<(payloadStart + length)])
        return crc.value
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
        /// A gap record (encoding 3) whose payload is not a count of 1 or more that fits
        /// the sequence numbers.
        public static let badGapRecord = Reason(rawValue: "bad_gap_record")

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
