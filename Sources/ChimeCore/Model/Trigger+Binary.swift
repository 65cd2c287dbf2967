import Foundation

/// The binary form of a trigger; the layout is on ``Reminder/binaryEncoded()``.
extension Trigger {
    var binaryFields: ReminderBinaryFields {
        var fields: ReminderBinaryFields = []
        if case .wallClock = start { fields.insert(.wallClockStart) }
        if repeatRule != nil { fields.insert(.repeatRule) }
        if recurrenceRule != nil { fields.insert(.recurrenceRule) }
        if !recurrenceDates.isEmpty { fields.insert(.recurrenceDates) }
        if !exceptionDates.isEmpty { fields.insert(.exceptionDates) }
        if monthEnd == .clamp { fields.insert(.clampMonthEnd) }
        if offset != nil { fields.insert(.offset) }
        if misfire != nil { fields.insert(.misfire) }
        if misfireThreshold != nil { fields.insert(.misfireThreshold) }
        if spread != nil { fields.insert(.spread) }
        if !calendars.isEmpty { fields.insert(.calendars) }
        if sun != nil { fields.insert(.sun) }
        if region != nil { fields.insert(.region) }
        if scaledRule != nil { fields.insert(.scaledRule) }
        return fields
    }

    func writeBinary(to sink: inout some BinarySink) {
        switch start {
        case .instant(let date):
            sink.writeInstant(date)
        case .wallClock(let local, let zoneIdentifier):
            local.writeBinary(to: &sink)
            sink.writeString(zoneIdentifier)
        }
        if let repeatRule {
            sink.writeByte(repeatRule.unit.binaryTag)
            sink.writeInt(repeatRule.interval)
        }
        recurrenceRule?.writeBinary(to: &sink)
        RecurrenceDateTime.writeBinaryList(recurrenceDates, to: &sink)
        RecurrenceDateTime.writeBinaryList(exceptionDates, to: &sink)
        if let offset { sink.writeDouble(offset) }
        if let misfire { sink.writeByte(misfire.binaryTag) }
        if let misfireThreshold { sink.writeDouble(misfireThreshold) }
    }

    /// The trigger parts that follow the nag in the layout (bits 20 and up, added after
    /// format 1 shipped: bytes without them read as before).
    func writeBinaryExtensions(to sink: inout some BinarySink) {
        if let spread { sink.writeDouble(spread) }
        if !calendars.isEmpty {
            sink.writeCount(calendars.count)
            for name in calendars { sink.writeString(name) }
        }
        if let sun {
            sink.writeByte(sun.event.binaryTag)
            sink.writeDouble(sun.depression)
            sink.writeDouble(sun.offset)
            sink.writeByte(sun.place == nil ? 0 : 1)
            if let place = sun.place {
                sink.writeDouble(place.latitude)
                sink.writeDouble(place.longitude)
            }
        }
        if let region {
            sink.writeDouble(region.center.latitude)
            sink.writeDouble(region.center.longitude)
            sink.writeDouble(region.radius)
            sink.writeByte((region.notifyOnEntry ? 1 : 0) | (region.notifyOnExit ? 2 : 0) | (region.triggersOnce ? 4 : 0))
        }
        if let scaledRule { sink.writeString(scaledRule.description) }
    }

    mutating func readBinaryExtensions(from reader: inout ByteReader, fields: ReminderBinaryFields) throws(BinaryDecodingError) {
        if fields.contains(.spread) { spread = try reader.readDouble() }
        if fields.contains(.calendars) {
            let count = try reader.readNonEmptyCount()
            var names: [String] = []
            for _ in 0..<count { names.append(try reader.readString()) }
            calendars = names
        }
        if fields.contains(.sun) {
            let event = try reader.readTag(SolarTrigger.Event.init(binaryTag:))
            let depression = try reader.readDouble()
            let offset = try reader.readDouble()
            let hasPlace = try reader.readTag { tag in tag <= 1 ? tag == 1 : nil }
            let place = hasPlace ? GeoPoint(latitude: try reader.readDouble(), longitude: try reader.readDouble()) : nil
            sun = SolarTrigger(event: event, depression: depression, offset: offset, place: place)
        }
        if fields.contains(.region) {
            let center = GeoPoint(latitude: try reader.readDouble(), longitude: try reader.readDouble())
            let radius = try reader.readDouble()
            let flags = try reader.readTag { tag in tag <= 7 ? tag : nil }
            region = RegionTrigger(
                center: center, radius: radius, notifyOnEntry: flags & 1 != 0, notifyOnExit: flags & 2 != 0, triggersOnce: flags & 4 != 0)
        }
        if fields.contains(.scaledRule) {
            let offset = reader.offset
            guard let rule = try? ScaledRule(parsing: try reader.readString()) else { throw BinaryDecodingError(.invalidValue, offset: offset) }
            scaledRule = rule
        }
    }

    init(reading reader: inout ByteReader, fields: ReminderBinaryFields) throws(BinaryDecodingError) {
        if fields.contains(.wallClockStart) {
            let local = try LocalDateTime(reading: &reader)
            start = .wallClock(local, zoneIdentifier: try reader.readString())
        } else {
            start = .instant(try reader.readInstant())
        }
        if fields.contains(.repeatRule) {
            let unit = try reader.readTag(RepeatUnit.init(binaryTag:))
            repeatRule = RepeatRule(unit: unit, interval: try reader.readInt())
        }
        if fields.contains(.recurrenceRule) { recurrenceRule = try RecurrenceRule(reading: &reader) }
        recurrenceDates = fields.contains(.recurrenceDates) ? try RecurrenceDateTime.readBinaryList(from: &reader) : []
        exceptionDates = fields.contains(.exceptionDates) ? try RecurrenceDateTime.readBinaryList(from: &reader) : []
        monthEnd = fields.contains(.clampMonthEnd) ? .clamp : .skip
        if fields.contains(.offset) { offset = try reader.readDouble() }
        if fields.contains(.misfire) { misfire = try reader.readTag(MisfirePolicy.init(binaryTag:)) }
        if fields.contains(.misfireThreshold) { misfireThreshold = try reader.readDouble() }
    }
}

extension RepeatUnit {
    var binaryTag: UInt8 {
        switch self {
        case .minute: 0
        case .hour: 1
        case .day: 2
        case .week: 3
        case .month: 4
        case .year: 5
        }
    }

    init?(binaryTag: UInt8) {
        switch binaryTag {
        case 0: self = .minute
        case 1: self = .hour
        case 2: self = .day
        case 3: self = .week
        case 4: self = .month
        case 5: self = .year
        default: return nil
        }
    }
}

extension MisfirePolicy {
    var binaryTag: UInt8 {
        switch self {
        case .fireOnce: 0
        case .skip: 1
        case .fireAll: 2
        }
    }

    init?(binaryTag: UInt8) {
        switch binaryTag {
        case 0: self = .fireOnce
        case 1: self = .skip
        case 2: self = .fireAll
        default: return nil
        }
    }
}

extension LocalDateTime {
    /// Six ints, unchecked: the memberwise initializer does not check either.
    func writeBinary(to sink: inout some BinarySink) {
        sink.writeInt(year)
        sink.writeInt(month)
        sink.writeInt(day)
        sink.writeInt(hour)
        sink.writeInt(minute)
        sink.writeInt(second)
    }

    init(reading reader: inout ByteReader) throws(BinaryDecodingError) {
        self.init(
            year: try reader.readInt(), month: try reader.readInt(), day: try reader.readInt(),
            hour: try reader.readInt(), minute: try reader.readInt(), second: try reader.readInt())
    }
}

extension RecurrenceDateTime {
    func writeBinary(to sink: inout some BinarySink) {
        switch self {
        case .instant(let date):
            sink.writeByte(0)
            sink.writeInstant(date)
        case .local(let local):
            sink.writeByte(1)
            local.writeBinary(to: &sink)
        }
    }

    init(reading reader: inout ByteReader) throws(BinaryDecodingError) {
        let isLocal = try reader.readTag { tag in tag <= 1 ? tag == 1 : nil }
        self = isLocal ? .local(try LocalDateTime(reading: &reader)) : .instant(try reader.readInstant())
    }

    /// A `list<datetime>`; writes nothing for an empty list (its presence bit is clear).
    static func writeBinaryList(_ values: [RecurrenceDateTime], to sink: inout some BinarySink) {
        guard !values.isEmpty else { return }
        sink.writeCount(values.count)
        for value in values { value.writeBinary(to: &sink) }
    }

    static func readBinaryList(from reader: inout ByteReader) throws(BinaryDecodingError) -> [RecurrenceDateTime] {
        let count = try reader.readNonEmptyCount()
        var values: [RecurrenceDateTime] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try RecurrenceDateTime(reading: &reader)) }
        return values
    }
}
