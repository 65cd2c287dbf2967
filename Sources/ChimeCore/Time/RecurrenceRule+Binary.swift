/// The binary form of a rule, field by field; the layout is on ``Reminder/binaryEncoded()``.
extension RecurrenceRule {
    /// Which rule parts follow the interval, one bit each, in the order they are written.
    struct BinaryParts: OptionSet {
        let rawValue: UInt64

        static let count = Self(rawValue: 1 << 0)
        static let until = Self(rawValue: 1 << 1)
        static let weekdays = Self(rawValue: 1 << 2)
        static let daysOfTheMonth = Self(rawValue: 1 << 3)
        static let months = Self(rawValue: 1 << 4)
        static let setPositions = Self(rawValue: 1 << 5)
        static let hours = Self(rawValue: 1 << 6)
        static let minutes = Self(rawValue: 1 << 7)
        static let seconds = Self(rawValue: 1 << 8)
        static let weekNumbers = Self(rawValue: 1 << 9)
        static let daysOfTheYear = Self(rawValue: 1 << 10)
        static let weekStart = Self(rawValue: 1 << 11)

        static let defined = Self(rawValue: (1 << 12) - 1)
    }

    private var binaryParts: BinaryParts {
        var parts: BinaryParts = []
        if count != nil { parts.insert(.count) }
        if until != nil { parts.insert(.until) }
        if !weekdays.isEmpty { parts.insert(.weekdays) }
        if !daysOfTheMonth.isEmpty { parts.insert(.daysOfTheMonth) }
        if !months.isEmpty { parts.insert(.months) }
        if !setPositions.isEmpty { parts.insert(.setPositions) }
        if !hours.isEmpty { parts.insert(.hours) }
        if !minutes.isEmpty { parts.insert(.minutes) }
        if !seconds.isEmpty { parts.insert(.seconds) }
        if !weekNumbers.isEmpty { parts.insert(.weekNumbers) }
        if !daysOfTheYear.isEmpty { parts.insert(.daysOfTheYear) }
        if weekStart != .monday { parts.insert(.weekStart) }
        return parts
    }

    func writeBinary(to sink: inout some BinarySink) {
        sink.writeByte(frequency.binaryTag)
        sink.writeInt(interval)
        sink.writeVarint(binaryParts.rawValue)
        if let count { sink.writeInt(count) }
        until?.writeBinary(to: &sink)
        if !weekdays.isEmpty {
            sink.writeCount(weekdays.count)
            for weekday in weekdays {
                sink.writeByte(UInt8(weekday.weekday.rawValue) | (weekday.ordinal == nil ? 0 : 8))
                if let ordinal = weekday.ordinal { sink.writeInt(ordinal) }
            }
        }
        Self.writeIntegers(daysOfTheMonth, to: &sink)
        Self.writeIntegers(months, to: &sink)
        Self.writeIntegers(setPositions, to: &sink)
        Self.writeIntegers(hours, to: &sink)
        Self.writeIntegers(minutes, to: &sink)
        Self.writeIntegers(seconds, to: &sink)
        Self.writeIntegers(weekNumbers, to: &sink)
        Self.writeIntegers(daysOfTheYear, to: &sink)
        if weekStart != .monday { sink.writeByte(UInt8(weekStart.rawValue)) }
    }

    init(reading reader: inout ByteReader) throws(BinaryDecodingError) {
        let frequency = try reader.readTag(Frequency.init(binaryTag:))
        self.init(frequency: frequency, interval: try reader.readInt())
        let partsOffset = reader.offset
        let parts = BinaryParts(rawValue: try reader.readVarint())
        guard BinaryParts.defined.isSuperset(of: parts) else {
            throw BinaryDecodingError(.unknownFlags, offset: partsOffset)
        }
        if parts.contains(.count) { count = try reader.readInt() }
        if parts.contains(.until) { until = try RecurrenceDateTime(reading: &reader) }
        if parts.contains(.weekdays) {
            let listCount = try reader.readNonEmptyCount()
            weekdays.reserveCapacity(listCount)
            for _ in 0..<listCount {
                let (weekday, hasOrdinal) = try reader.readTag { tag -> (Weekday, Bool)? in
                    guard tag & ~0x0F == 0, let weekday = Weekday(rawValue: Int(tag & 0x07)) else { return nil }
                    return (weekday, tag & 0x08 != 0)
                }
                weekdays.append(WeekdayNumber(weekday, ordinal: hasOrdinal ? try reader.readInt() : nil))
            }
        }
        if parts.contains(.daysOfTheMonth) { daysOfTheMonth = try Self.readIntegers(from: &reader) }
        if parts.contains(.months) { months = try Self.readIntegers(from: &reader) }
        if parts.contains(.setPositions) { setPositions = try Self.readIntegers(from: &reader) }
        if parts.contains(.hours) { hours = try Self.readIntegers(from: &reader) }
        if parts.contains(.minutes) { minutes = try Self.readIntegers(from: &reader) }
        if parts.contains(.seconds) { seconds = try Self.readIntegers(from: &reader) }
        if parts.contains(.weekNumbers) { weekNumbers = try Self.readIntegers(from: &reader) }
        if parts.contains(.daysOfTheYear) { daysOfTheYear = try Self.readIntegers(from: &reader) }
        if parts.contains(.weekStart) {
            let offset = reader.offset
            weekStart = try reader.readTag { tag in Weekday(rawValue: Int(tag)) }
            // Monday is the default and is written by leaving the bit clear.
            guard weekStart != .monday else { throw BinaryDecodingError(.nonCanonical, offset: offset) }
        }
    }
}

extension RecurrenceRule {
    /// A `list<int>`; writes nothing for an empty list (its part bit is clear).
    private static func writeIntegers(_ values: [Int], to sink: inout some BinarySink) {
        guard !values.isEmpty else { return }
        sink.writeCount(values.count)
        for value in values { sink.writeInt(value) }
    }

    private static func readIntegers(from reader: inout ByteReader) throws(BinaryDecodingError) -> [Int] {
        let count = try reader.readNonEmptyCount()
        var values: [Int] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try reader.readInt()) }
        return values
    }
}

extension RecurrenceRule.Frequency {
    var binaryTag: UInt8 {
        switch self {
        case .minutely: 0
        case .hourly: 1
        case .daily: 2
        case .weekly: 3
        case .monthly: 4
        case .yearly: 5
        }
    }

    init?(binaryTag: UInt8) {
        switch binaryTag {
        case 0: self = .minutely
        case 1: self = .hourly
        case 2: self = .daily
        case 3: self = .weekly
        case 4: self = .monthly
        case 5: self = .yearly
        default: return nil
        }
    }
}
