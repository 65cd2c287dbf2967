import Foundation

/// Where the binary encoders of ``Reminder/binaryEncoded()`` write: ``ByteWriter`` keeps the
/// bytes, ``ByteCounter`` only counts them, so the writer can reserve the exact size first.
///
/// Primitives (see ``Reminder/binaryEncoded()`` for the layout built from them): a varint
/// is unsigned LEB128, least significant group first, in as few bytes as possible; an int
/// is a zigzag-mapped varint; fixed 32- and 64-bit values are little-endian. ``ByteReader``
/// reads them back.
public protocol BinarySink {
    /// Whether the bytes are kept, so the order of unordered things (dictionary keys) matters.
    static var keepsBytes: Bool { get }
    /// One byte.
    mutating func writeByte(_ byte: UInt8)
    /// Unsigned LEB128, shortest form (1 to 10 bytes).
    mutating func writeVarint(_ value: UInt64)
    /// Eight bytes, little-endian.
    mutating func writeFixed64(_ value: UInt64)
    /// The UTF-8 bytes of `text`, without a length.
    mutating func writeUTF8(_ text: String)
    /// Raw bytes, without a length.
    mutating func writeBytes(_ raw: UnsafeRawBufferPointer)
}

extension BinarySink {
    /// A signed integer, zigzag-mapped (0, −1, 1, −2 … become 0, 1, 2, 3 …) so small
    /// magnitudes of either sign take one byte.
    public mutating func writeInt(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value &<< 1) ^ (value >> 63)))
    }

    /// A signed integer, zigzag-mapped (see `writeInt(_: Int64)`).
    public mutating func writeInt(_ value: Int) { writeInt(Int64(value)) }

    /// Four bytes, little-endian.
    public mutating func writeFixed32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { writeBytes($0) }
    }

    /// A length or element count (≥ 0, and below 2³² for `.fixed32`).
    public mutating func writeCount(_ count: Int, _ prefix: BinaryLengthPrefix = .varint) {
        switch prefix {
        case .varint: writeVarint(UInt64(count))
        case .fixed32: writeFixed32(UInt32(count))
        }
    }

    /// The IEEE 754 bit pattern, so every value (−0.0, NaN payloads, subnormals) comes back.
    public mutating func writeDouble(_ value: Double) { writeFixed64(value.bitPattern) }

    /// Seconds since 2001-01-01T00:00:00Z (Foundation's reference date) as a double.
    public mutating func writeInstant(_ date: Date) { writeDouble(date.timeIntervalSinceReferenceDate) }

    /// A byte count, then the UTF-8 bytes.
    public mutating func writeString(_ text: String, _ prefix: BinaryLengthPrefix = .varint) {
        writeCount(text.utf8.count, prefix)
        writeUTF8(text)
    }

    /// A byte count, then the bytes.
    public mutating func writeBytes(_ data: Data, _ prefix: BinaryLengthPrefix) {
        writeCount(data.count, prefix)
        data.withUnsafeBytes { writeBytes($0) }
    }
}

/// Appends the bytes to an array.
public struct ByteWriter: BinarySink {
    /// `true`: the bytes are kept.
    public static var keepsBytes: Bool { true }
    /// What was written so far.
    public private(set) var bytes: [UInt8] = []

    /// A writer whose array has room for `capacity` bytes.
    public init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Appends one byte.
    public mutating func writeByte(_ byte: UInt8) { bytes.append(byte) }

    /// Appends unsigned LEB128, shortest form.
    public mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    /// Appends eight bytes, little-endian.
    public mutating func writeFixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends the UTF-8 bytes of `text`, without a length.
    public mutating func writeUTF8(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// Raw bytes, without a length.
    public mutating func writeBytes(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }
}

/// Counts the bytes a ``ByteWriter`` would append.
public struct ByteCounter: BinarySink {
    /// `false`: only counted.
    public static var keepsBytes: Bool { false }
    /// How many bytes were written so far.
    public private(set) var count = 0

    /// A counter at zero.
    public init() {}

    /// Counts one byte.
    public mutating func writeByte(_ byte: UInt8) { count += 1 }

    /// Counts the varint's length.
    public mutating func writeVarint(_ value: UInt64) {
        let significantBits = UInt64.bitWidth - value.leadingZeroBitCount
        count += max(1, (significantBits + 6) / 7)
    }

    /// Counts eight bytes.
    public mutating func writeFixed64(_ value: UInt64) { count += 8 }

    /// Counts the UTF-8 bytes of `text`.
    public mutating func writeUTF8(_ text: String) { count += text.utf8.count }

    /// Counts the raw bytes.
    public mutating func writeBytes(_ raw: UnsafeRawBufferPointer) { count += raw.count }
}
