/// The binary form of `userInfo` values; the layout is on ``Reminder/binaryEncoded()``.
extension PropertyListValue {
    private enum BinaryTag {
        static let string: UInt8 = 0
        static let integer: UInt8 = 1
        static let real: UInt8 = 2
        static let `false`: UInt8 = 3
        static let `true`: UInt8 = 4
        static let array: UInt8 = 5
        static let dictionary: UInt8 = 6
    }

    func writeBinary(to sink: inout some BinarySink) {
        switch self {
        case .string(let value):
            sink.writeByte(BinaryTag.string)
            sink.writeString(value)
        case .integer(let value):
            sink.writeByte(BinaryTag.integer)
            sink.writeInt(value)
        case .real(let value):
            sink.writeByte(BinaryTag.real)
            sink.writeDouble(value)
        case .boolean(let value):
            sink.writeByte(value ? BinaryTag.true : BinaryTag.false)
        case .array(let values):
            sink.writeByte(BinaryTag.array)
            sink.writeCount(values.count)
            for value in values { value.writeBinary(to: &sink) }
        case .dictionary(let entries):
            sink.writeByte(BinaryTag.dictionary)
            Self.writeBinaryEntries(of: entries, to: &sink)
        }
    }

    /// A dictionary body: the count, then each key and value, keys in ascending order.
    static func writeBinaryEntries(of entries: [String: PropertyListValue], to sink: inout some BinarySink) {
        sink.writeCount(entries.count)
        guard type(of: sink).keepsBytes else {
            // Counting needs no order, so it skips the sort.
            for (key, value) in entries {
                sink.writeString(key)
                value.writeBinary(to: &sink)
            }
            return
        }
        // UTF-8 byte order, not `String.<`: that order is not total (in Swift 6.3 "e\u{301}"
        // and "\u{E9} " are neither equal nor ordered), so sorting by it is not deterministic.
        for (key, value) in entries.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            sink.writeString(key)
            value.writeBinary(to: &sink)
        }
    }

    /// Reads a value at nesting `level` (1 is the `userInfo` dictionary itself).
    init(reading reader: inout ByteReader, level: Int) throws(BinaryDecodingError) {
        let offset = reader.offset
        guard level <= Reminder.maximumBinaryUserInfoDepth else { throw BinaryDecodingError(.tooDeep, offset: offset) }
        switch try reader.readByte() {
        case BinaryTag.string: self = .string(try reader.readString())
        case BinaryTag.integer: self = .integer(try reader.readInt64())
        case BinaryTag.real: self = .real(try reader.readDouble())
        case BinaryTag.false: self = .boolean(false)
        case BinaryTag.true: self = .boolean(true)
        case BinaryTag.array:
            let count = try reader.readCount()
            var values: [PropertyListValue] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try PropertyListValue(reading: &reader, level: level + 1)) }
            self = .array(values)
        case BinaryTag.dictionary:
            self = .dictionary(try Self.readBinaryEntries(from: &reader, level: level))
        default:
            throw BinaryDecodingError(.unknownTag, offset: offset)
        }
    }

    /// Reads a dictionary body at nesting `level`; keys must be in strictly ascending UTF-8
    /// byte order and unequal as `String`s (canonically equivalent spellings are one key).
    static func readBinaryEntries(from reader: inout ByteReader, level: Int) throws(BinaryDecodingError)
        -> [String: PropertyListValue]
    {
        let offset = reader.offset
        guard level <= Reminder.maximumBinaryUserInfoDepth else { throw BinaryDecodingError(.tooDeep, offset: offset) }
        let count = try reader.readCount()
        var entries = [String: PropertyListValue](minimumCapacity: count)
        var previousKey: String?
        for _ in 0..<count {
            let keyOffset = reader.offset
            let key = try reader.readString()
            if let previousKey, !previousKey.utf8.lexicographicallyPrecedes(key.utf8) {
                throw BinaryDecodingError(.nonCanonical, offset: keyOffset)
            }
            let value = try PropertyListValue(reading: &reader, level: level + 1)
            guard entries.updateValue(value, forKey: key) == nil else {
                throw BinaryDecodingError(.nonCanonical, offset: keyOffset)
            }
            previousKey = key
        }
        return entries
    }
}
