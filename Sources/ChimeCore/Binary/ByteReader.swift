import Foundation

/// How a length or element count is written ahead of what it counts.
public enum BinaryLengthPrefix: Sendable {
    /// Unsigned LEB128, shortest form: reminders and snapshots.
    case varint
    /// Four bytes, little-endian: the dispatch and acknowledgement frames and the compact
    /// journal records.
    case fixed32
}

/// Reads what a ``ByteWriter`` wrote, checking every read: past the end, an overlong or
/// oversized varint, a length beyond the remaining bytes and invalid UTF-8 all throw
/// ``BinaryDecodingError`` with the offset of the item at fault; nothing traps.
///
/// The one reader of every binary form (reminders, snapshots, compact journal records,
/// dispatch frames): a string read refuses invalid UTF-8 whatever its length prefix.
public struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    /// A reader at the start of `bytes`.
    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    /// The read position, in bytes from the start of the input.
    public var offset: Int { index - bytes.startIndex }

    /// How many bytes are left to read.
    public var remainingCount: Int { bytes.endIndex - index }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { index == bytes.endIndex }

    private func error(_ reason: BinaryDecodingError.Reason, atIndex position: Int) -> BinaryDecodingError {
        BinaryDecodingError(reason, offset: position - bytes.startIndex)
    }

    /// An error at the current position.
    private func error(_ reason: BinaryDecodingError.Reason) -> BinaryDecodingError { error(reason, atIndex: index) }

    /// The next `count` bytes as they are.
    public mutating func readBytes(_ count: Int) throws(BinaryDecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remainingCount else { throw error(.lengthPastEnd) }
        defer { index += count }
        return bytes[index..<index + count]
    }

    /// One byte; `.truncated` at the end.
    public mutating func readByte() throws(BinaryDecodingError) -> UInt8 {
        guard index < bytes.endIndex else { throw error(.truncated) }
        defer { index += 1 }
        return bytes[index]
    }

    /// Unsigned LEB128: at most ten bytes, at most 64 bits, no needless final zero group.
    public mutating func readVarint() throws(BinaryDecodingError) -> UInt64 {
        let start = index
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < bytes.endIndex else { throw error(.truncated, atIndex: start) }
            let byte = bytes[index]
            index += 1
            // The tenth group holds bit 63 only: anything more overflows 64 bits.
            if shift == 63 && byte > 1 { throw error(.varintOverflow, atIndex: start) }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                if byte == 0 && shift > 0 { throw error(.nonCanonical, atIndex: start) }
                return value
            }
            shift += 7
        }
    }

    /// A zigzag-mapped varint as a 64-bit signed integer.
    public mutating func readInt64() throws(BinaryDecodingError) -> Int64 {
        let mapped = try readVarint()
        return Int64(bitPattern: mapped >> 1) ^ -Int64(bitPattern: mapped & 1)
    }

    /// A zigzag-mapped varint that must fit `Int`.
    public mutating func readInt() throws(BinaryDecodingError) -> Int {
        let start = index
        guard let value = Int(exactly: try readInt64()) else { throw error(.integerOutOfRange, atIndex: start) }
        return value
    }

    /// A length or element count; `.lengthPastEnd` when the bytes that remain cannot hold
    /// that many elements of `minimumElementSize` bytes each (a count must never size an
    /// allocation by itself).
    public mutating func readCount(
        _ prefix: BinaryLengthPrefix = .varint, minimumElementSize: Int = 1
    ) throws(BinaryDecodingError) -> Int {
        let start = index
        let count =
            switch prefix {
            case .varint: try readVarint()
            case .fixed32: UInt64(try readFixed32())
            }
        guard count <= UInt64(remainingCount / max(1, minimumElementSize)) else {
            throw error(.lengthPastEnd, atIndex: start)
        }
        return Int(count)
    }

    /// A length, then that many bytes as they are.
    public mutating func readBytes(_ prefix: BinaryLengthPrefix) throws(BinaryDecodingError) -> ArraySlice<UInt8> {
        try readBytes(try readCount(prefix))
    }

    /// A count of a list that is only written when it is not empty.
    public mutating func readNonEmptyCount() throws(BinaryDecodingError) -> Int {
        let start = index
        let count = try readCount()
        guard count > 0 else { throw error(.nonCanonical, atIndex: start) }
        return count
    }

    /// A tag byte that `value` maps to a case; `.unknownTag` when it maps to none.
    public mutating func readTag<Value>(_ value: (UInt8) -> Value?) throws(BinaryDecodingError) -> Value {
        let position = index
        guard let result = value(try readByte()) else { throw error(.unknownTag, atIndex: position) }
        return result
    }

    /// Four bytes, little-endian; `.truncated` when fewer remain.
    public mutating func readFixed32() throws(BinaryDecodingError) -> UInt32 {
        guard remainingCount >= 4 else { throw error(.truncated) }
        var value: UInt32 = 0
        for position in 0..<4 { value |= UInt32(bytes[index + position]) << (8 * UInt32(position)) }
        index += 4
        return value
    }

    /// Eight bytes, little-endian; `.truncated` when fewer remain.
    public mutating func readFixed64() throws(BinaryDecodingError) -> UInt64 {
        guard remainingCount >= 8 else { throw error(.truncated) }
        var value: UInt64 = 0
        for position in 0..<8 { value |= UInt64(bytes[index + position]) << (8 * UInt64(position)) }
        index += 8
        return value
    }

    /// A double from its eight-byte bit pattern.
    public mutating func readDouble() throws(BinaryDecodingError) -> Double { Double(bitPattern: try readFixed64()) }

    /// An instant: seconds since 2001-01-01T00:00:00Z as a double.
    public mutating func readInstant() throws(BinaryDecodingError) -> Date {
        Date(timeIntervalSinceReferenceDate: try readDouble())
    }

    /// A byte count and that many bytes of valid UTF-8; `.invalidUTF8` otherwise.
    public mutating func readString(_ prefix: BinaryLengthPrefix = .varint) throws(BinaryDecodingError) -> String {
        try readUTF8(count: try readCount(prefix))
    }

    /// The next `count` bytes as text; `.invalidUTF8` when they are not valid UTF-8,
    /// `.lengthPastEnd` when fewer remain.
    public mutating func readUTF8(count: Int) throws(BinaryDecodingError) -> String {
        guard count >= 0, count <= remainingCount else { throw error(.lengthPastEnd) }
        guard count > 0 else { return "" }
        let text = bytes[index..<index + count].withUnsafeBufferPointer(Self.validatedString)
        guard let text else { throw error(.invalidUTF8) }
        index += count
        return text
    }

    /// The text of `utf8`, or `nil` when it is not valid UTF-8.
    ///
    /// `String(decoding:as:)` replaces invalid sequences with U+FFFD and keeps valid bytes
    /// as they are, so its result equals the input exactly when the input was valid. This
    /// takes half the time of `String(validating:as:)`, which runs unspecialized.
    private static func validatedString(_ utf8: UnsafeBufferPointer<UInt8>) -> String? {
        var text = String(decoding: utf8, as: UTF8.self)
        let isUnchanged = text.withUTF8 { decoded in
            guard decoded.count == utf8.count, let decodedBase = decoded.baseAddress, let inputBase = utf8.baseAddress
            else { return decoded.count == utf8.count }
            return memcmp(decodedBase, inputBase, utf8.count) == 0
        }
        return isUnchanged ? text : nil
    }

    /// Steps over a string without checking its UTF-8.
    public mutating func skipString(_ prefix: BinaryLengthPrefix = .varint) throws(BinaryDecodingError) {
        index += try readCount(prefix)
    }

    /// Throws `.trailingBytes` unless every byte has been read.
    public func expectEnd() throws(BinaryDecodingError) {
        guard index == bytes.endIndex else { throw error(.trailingBytes) }
    }
}
