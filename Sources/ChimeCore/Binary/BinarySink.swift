import Foundation

/// Where the binary encoders of ``Reminder/binaryEncoded()`` write: ``ByteWriter`` keeps the
/// bytes, ``ByteCounter`` only counts them, so the writer can reserve the exact size first.
///
/// Primitives (see ``Reminder/binaryEncoded()`` for the layout built from them): a varint
/// is unsigned LEB128, least significant group first, in as few bytes as possible; an int
/// is a zigzag-mapped varint; fixed 64-bit values are little-endian.
protocol BinarySink {
    /// Whether the bytes are kept, so the order of unordered things (dictionary keys) matters.
    static var keepsBytes: Bool { get }
    mutating func writeByte(_ byte: UInt8)
    mutating func writeVarint(_ value: UInt64)
    mutating func writeFixed64(_ value: UInt64)
    /// The UTF-8 bytes of `text`, without a length.
    mutating func writeUTF8(_ text: String)
}

extension BinarySink {
    /// A signed integer, zigzag-mapped (0, −1, 1, −2 … become 0, 1, 2, 3 …) so small
    /// magnitudes of either sign take one byte.
    mutating func writeInt(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value &<< 1) ^ (value >> 63)))
    }

    mutating func writeInt(_ value: Int) { writeInt(Int64(value)) }

    mutating func writeCount(_ count: Int) { writeVarint(UInt64(count)) }

    /// The IEEE 754 bit pattern, so every value (−0.0, NaN payloads, subnormals) comes back.
    mutating func writeDouble(_ value: Double) { writeFixed64(value.bitPattern) }

    /// Seconds since 2001-01-01T00:00:00Z (Foundation's reference date) as a double.
    mutating func writeInstant(_ date: Date) { writeDouble(date.timeIntervalSinceReferenceDate) }

    /// A varint byte count, then the UTF-8 bytes.
    mutating func writeString(_ text: String) {
        writeCount(text.utf8.count)
        writeUTF8(text)
    }
}

/// Appends the bytes to an array.
struct ByteWriter: BinarySink {
    static var keepsBytes: Bool { true }
    private(set) var bytes: [UInt8] = []

    /// A writer whose array has room for `capacity` bytes.
    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func writeByte(_ byte: UInt8) { bytes.append(byte) }

    mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    mutating func writeFixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func writeUTF8(_ text: String) { bytes.append(contentsOf: text.utf8) }
}

/// Counts the bytes a ``ByteWriter`` would append.
struct ByteCounter: BinarySink {
    static var keepsBytes: Bool { false }
    private(set) var count = 0

    mutating func writeByte(_ byte: UInt8) { count += 1 }

    mutating func writeVarint(_ value: UInt64) {
        let significantBits = UInt64.bitWidth - value.leadingZeroBitCount
        count += max(1, (significantBits + 6) / 7)
    }

    mutating func writeFixed64(_ value: UInt64) { count += 8 }

    mutating func writeUTF8(_ text: String) { count += text.utf8.count }
}
