import ChimeCore
/// Reads framed records from a segment's bytes in order, a whole group at a time, stopping
/// at the first torn or corrupt record (see ``RecordFraming`` for the format, the groups and
/// the checks).
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
        /// The payload encoding (see ``RecordFraming``; the group mark left out).
        public var encoding: UInt8
        /// The byte offset of the record's header in the file.
        public var offset: Int
        /// The payload bytes.
        public var payload: ArraySlice<UInt8>
        /// Whether the record's group goes on after it (the group mark): `false` for the last
        /// record of a group, and for every record of format 1.
        public var continuesGroup: Bool

        /// A record with these fields (for a codec's tests; readers make them from bytes).
        public init(sequence: UInt64, encoding: UInt8, offset: Int, payload: ArraySlice<UInt8>, continuesGroup: Bool = false) {
            self.sequence = sequence
            self.encoding = encoding
            self.offset = offset
            self.payload = payload
            self.continuesGroup = continuesGroup
        }
    }

    private let bytes: [UInt8]
    /// The record version the segment's records must carry.
    public let recordVersion: UInt8
    /// The byte offset after the last complete group read: where the next group starts, and
    /// once the reader has stopped, where good records end.
    public private(set) var offset: Int
    /// The sequence number the next group's first record must carry, when known.
    public private(set) var expectedSequence: UInt64?
    /// Why the reader stopped before the end of the bytes; `nil` while reading and after a
    /// clean end. Its `offset` is where good records end (the reader's `offset`), its
    /// `frameOffset` where the damaged bytes start.
    public private(set) var damage: RecordDamage?
    /// The group being read (not yet complete) or being handed out (complete).
    private var group: [Record] = []
    /// How many records of a complete `group` were handed out; `nil` while it is incomplete.
    private var handedOut: Int?
    /// Where the frame after the last one read starts, and its expected sequence number.
    private var scanOffset: Int
    private var scanSequence: UInt64?

    /// Prepares to read `bytes` from `offset`.
    /// - Parameters:
    ///   - bytes: a whole segment file.
    ///   - offset: where the first record starts, in bytes (after the segment header).
    ///   - expectedSequence: the first record's sequence number, when known; every later
    ///     record must carry the previous one's plus one.
    ///   - recordVersion: the record version of the segment's format (its header's format
    ///     version; `RecordFraming.recordFormatVersion` for a segment this code wrote).
    public init(
        bytes: [UInt8], startingAt offset: Int, expectedSequence: UInt64? = nil,
        recordVersion: UInt8 = RecordFraming.recordFormatVersion
    ) {
        self.bytes = bytes
        self.offset = offset
        self.expectedSequence = expectedSequence
        self.recordVersion = recordVersion
        scanOffset = offset
        scanSequence = expectedSequence
    }

    /// The next good record, or `nil` at the end of the bytes or at the first damaged
    /// record (then `damage` says where and why). A group's records come out only once its
    /// last record has been read: an incomplete group at the end is withheld (`damage` with
    /// reason `incompleteGroup`, or the reason of the damaged record that cut it). Gap
    /// records (sequence numbers a repair could not salvage) are skipped: the record after
    /// one carries its sequence number plus its count.
    public mutating func next() -> Record? {
        if let count = handedOut {
            if count < group.count {
                handedOut = count + 1
                return group[count]
            }
            group.removeAll(keepingCapacity: true)
            handedOut = nil
        }
        while damage == nil, scanOffset < bytes.count {
            let frame: Frame
            switch Self.checkFrame(in: bytes, at: scanOffset, recordVersion: recordVersion) {
            case .damaged(let reason):
                let isZeroTail = (reason == .truncatedHeader || reason == .badMagic) && tailIsZero()
                return stop(isZeroTail ? .zeroFilled : reason)
            case .valid(let valid):
                frame = valid
            }
            if let scanSequence, frame.sequence != scanSequence { return stop(.sequenceMismatch) }
            let payload = bytes[(scanOffset + RecordFraming.recordHeaderLength)..<(scanOffset + frame.length)]
            if frame.encoding == RecordFraming.gapEncoding {
                guard !frame.continuesGroup, let count = RecordFraming.gapCount(payload), frame.sequence <= UInt64.max - count
                else { return stop(.badGapRecord) }
                // A repair never writes one inside a group: the group before it is incomplete.
                guard group.isEmpty else { return stop(.incompleteGroup) }
                scanOffset += frame.length
                scanSequence = frame.sequence + count
                offset = scanOffset
                expectedSequence = scanSequence
                gapRecords += 1
                continue
            }
            let record = Record(
                sequence: frame.sequence, encoding: frame.encoding, offset: scanOffset, payload: payload,
                continuesGroup: frame.continuesGroup)
            scanOffset += frame.length
            scanSequence = frame.sequence &+ 1
            if frame.continuesGroup {
                group.append(record)
                continue
            }
            offset = scanOffset
            expectedSequence = scanSequence
            // A group of one (every record of format 1) needs no buffering.
            if group.isEmpty { return record }
            group.append(record)
            handedOut = 1
            return group[0]
        }
        if damage == nil, !group.isEmpty {
            damage = RecordDamage(
                offset: offset, bytesDiscarded: bytes.count - offset, reason: .incompleteGroup, frameOffset: bytes.count,
                withheldRecords: group.count)
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
        /// The payload encoding, the group mark left out.
        var encoding: UInt8
        var continuesGroup: Bool
        var recordVersion: UInt8
    }

    enum FrameCheck {
        case valid(Frame)
        case damaged(RecordDamage.Reason)
    }

    /// Checks the record frame at `offset`: magic, version (`recordVersion`, or any this code
    /// reads when `nil`), length and checksum (not the sequence number). Reads only inside
    /// `bytes`.
    static func checkFrame(in bytes: [UInt8], at offset: Int, recordVersion: UInt8?) -> FrameCheck {
        let header = RecordFraming.recordHeaderLength
        guard offset >= 0, offset < bytes.count else { return .damaged(.truncatedHeader) }
        let remaining = bytes.count - offset
        guard remaining >= header else { return .damaged(.truncatedHeader) }
        guard bytes[offset] == RecordFraming.recordMagic[0], bytes[offset + 1] == RecordFraming.recordMagic[1] else {
            return .damaged(.badMagic)
        }
        let version = bytes[offset + 2]
        guard recordVersion.map({ version == $0 }) ?? RecordFraming.isReadableRecordVersion(version) else {
            return .damaged(.badRecordHeader)
        }
        let length = Int(bytes.loadLittleEndian(UInt32.self, at: offset + 4))
        guard length <= RecordFraming.maximumPayloadLength else { return .damaged(.lengthOutOfRange) }
        guard length <= remaining - header else { return .damaged(.truncatedPayload) }
        var crc = CRC32C()
        crc.update(bytes[offset..<(offset + 16)])
        crc.update(bytes[(offset + header)..<(offset + header + length)])
        guard crc.value == bytes.loadLittleEndian(UInt32.self, at: offset + 16) else {
            return .damaged(.checksumMismatch)
        }
        let (encoding, continuesGroup) = RecordFraming.splitEncodingByte(bytes[offset + 3], recordVersion: version)
        return .valid(Frame(
            length: header + length, sequence: bytes.loadLittleEndian(UInt64.self, at: offset + 8),
            encoding: encoding, continuesGroup: continuesGroup, recordVersion: version))
    }

    /// Every frame from `offset` on that passes the checks of a record but its sequence
    /// number (magic, version, length, CRC-32C), in file order, gap records included, group
    /// marks as written (groups are not checked).
    ///
    /// The search tries each byte offset in turn; after a valid frame it goes on after that
    /// frame's end, so a frame is never counted inside another one's payload. It decides
    /// whether damage is a torn tail (no valid frame follows) or corruption. A random match
    /// needs a 2-byte magic, a version byte, a plausible length and a 32-bit checksum to
    /// agree by chance.
    /// - Parameters:
    ///   - bytes: a whole segment file.
    ///   - offset: where to start, in bytes (the damaged record's offset).
    ///   - recordVersion: the record version of the segment's format; `nil` (a segment whose
    ///     header is damaged): any version this code reads.
    /// - Returns: the frames as records (`payload` slices `bytes`).
    public static func validFrames(
        in bytes: [UInt8], from offset: Int, recordVersion: UInt8? = RecordFraming.recordFormatVersion
    ) -> [Record] {
        var frames: [Record] = []
        var position = max(0, offset)
        let last = bytes.count - RecordFraming.recordHeaderLength
        while position <= last {
            guard bytes[position] == RecordFraming.recordMagic[0],
                case .valid(let frame) = checkFrame(in: bytes, at: position, recordVersion: recordVersion)
            else {
                position += 1
                continue
            }
            let payloadStart = position + RecordFraming.recordHeaderLength
            frames.append(Record(
                sequence: frame.sequence, encoding: frame.encoding, offset: position,
                payload: bytes[payloadStart..<(position + frame.length)], continuesGroup: frame.continuesGroup))
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
    /// written bytes. (Whole records of an incomplete group before `offset` are a torn tail
    /// with it: the caller cuts from the group's start.)
    /// - Parameters:
    ///   - bytes: a whole segment file.
    ///   - offset: the damaged record's offset (`RecordDamage.frameOffset`).
    ///   - recordVersion: the record version of the segment's format; `nil`: any this code reads.
    public static func isTornTail(
        in bytes: [UInt8], at offset: Int, recordVersion: UInt8? = RecordFraming.recordFormatVersion
    ) -> Bool {
        guard offset >= 0, offset < bytes.count else { return true }
        if bytes[offset...].allSatisfy({ $0 == 0 }) { return true }
        let header = RecordFraming.recordHeaderLength
        let remaining = bytes.count - offset
        guard remaining >= header else { return true }
        let version = bytes[offset + 2]
        guard bytes[offset] == RecordFraming.recordMagic[0], bytes[offset + 1] == RecordFraming.recordMagic[1],
            recordVersion.map({ version == $0 }) ?? RecordFraming.isReadableRecordVersion(version)
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

    /// Stops at the frame at `scanOffset`: good records end at `offset`, the end of the last
    /// complete group, and the records of an incomplete one go with the damage.
    private mutating func stop(_ reason: RecordDamage.Reason) -> Record? {
        damage = RecordDamage(
            offset: offset, bytesDiscarded: bytes.count - offset, reason: reason, frameOffset: scanOffset,
            withheldRecords: group.count)
        return nil
    }

    private func tailIsZero() -> Bool {
        bytes[scanOffset...].allSatisfy { $0 == 0 }
    }
}

/// Where a segment's good records end and why: the damaged tail from `offset` to the end
/// of the file — the damaged bytes from `frameOffset` on, and before them the whole records of
/// an incomplete group, if any (`withheldRecords`).
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
        /// the sequence numbers, or that carries the group mark.
        public static let badGapRecord = Reason(rawValue: "bad_gap_record")
        /// A group whose last record is missing: the bytes end after a record carrying the
        /// group mark (a write cut short between records), or a gap record follows one.
        public static let incompleteGroup = Reason(rawValue: "incomplete_group")

        /// The stable name.
        public var description: String { rawValue }
    }

    /// The byte offset in the file where good records end: the first damaged record, or the
    /// first record of the incomplete group it cut (0: the segment header).
    public var offset: Int
    /// How many bytes lie from `offset` to the end of the file.
    public var bytesDiscarded: Int
    /// What check failed.
    public var reason: Reason
    /// The byte offset of the damaged bytes themselves: `offset` unless whole records of an
    /// incomplete group come first; the end of the file for `incompleteGroup` at the end.
    public var frameOffset: Int
    /// Whole records of an incomplete group between `offset` and `frameOffset`, withheld
    /// with the damage.
    public var withheldRecords: Int

    /// Creates a damage report.
    public init(offset: Int, bytesDiscarded: Int, reason: Reason, frameOffset: Int? = nil, withheldRecords: Int = 0) {
        self.offset = offset
        self.bytesDiscarded = bytesDiscarded
        self.reason = reason
        self.frameOffset = frameOffset ?? offset
        self.withheldRecords = withheldRecords
    }

    /// Such as "checksum_mismatch at offset 4096, 120 bytes" (and ", 3 records of an
    /// incomplete group before it").
    public var description: String {
        let group = withheldRecords > 0 ? ", \(withheldRecords) records of an incomplete group before it" : ""
        return "\(reason) at offset \(offset), \(bytesDiscarded) bytes\(group)"
    }
}
