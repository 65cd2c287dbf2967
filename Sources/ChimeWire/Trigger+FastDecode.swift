import ChimeCore

extension Trigger {
    /// Reads a trigger object as `Trigger.init(from:)` decodes it, with ChimeCore's own
    /// parsers (`RFC3339`, `LocalDateTime`, `RecurrenceRule`, `RecurrenceDateTime`,
    /// `RepeatUnit`, `DurationParser`); a value they refuse is Unsupported.
    init(fastJSON reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) {
        var at: String?
        var timeZone: String??
        var repeatRule: RepeatRule??
        var recurrenceRule: RecurrenceRule??
        var recurrenceDates: [RecurrenceDateTime]??
        var exceptionDates: [RecurrenceDateTime]??
        var monthEnd: MonthEndPolicy??
        var offset: Double?
        var misfire: MisfirePolicy??
        var misfireThreshold: Double??
        var spread: Double?
        var object = try reader.beginObject()
        while let key = try reader.nextKey(in: &object) {
            switch key {
            case "at": try at.setOnce(reader.readString())
            case "timeZone": try timeZone.setOnce(reader.readStringOrNull())
            case "repeat": try repeatRule.setOnce(Self.readRepeat(&reader))
            case "rrule":
                try recurrenceRule.setOnce(Self.parsedIfPresent(reader.readStringOrNull(), RecurrenceRule.init(parsing:)))
            case "rdates": try recurrenceDates.setOnce(Self.readDateTimes(&reader))
            case "exdates": try exceptionDates.setOnce(Self.readDateTimes(&reader))
            case "monthEnd": try monthEnd.setOnce(Self.readEnumeration(&reader))
            // `before: null` throws in `init(from:)`: the key is there, but no seconds.
            case "before": try offset.setOnce(reader.readSeconds())
            case "spread": try spread.setOnce(reader.readSeconds())
            case "misfire": try misfire.setOnce(Self.readEnumeration(&reader))
            case "misfireThreshold":
                let threshold = try reader.consumeNull() ? nil : reader.readDouble()
                if let threshold, !(threshold >= 0) { throw FastJSONReader.Unsupported() }
                try misfireThreshold.setOnce(threshold)
            default: throw FastJSONReader.Unsupported()
            }
        }
        guard let at else { throw FastJSONReader.Unsupported() }
        let start: TriggerStart
        if let zone = timeZone ?? nil {
            start = .wallClock(try Self.parsed(at, LocalDateTime.init(parsing:)), zoneIdentifier: zone)
        } else {
            start = .instant(try Self.parsed(at, RFC3339.parseInstant))
        }
        self.init(
            start: start, repeatRule: repeatRule ?? nil, recurrenceRule: recurrenceRule ?? nil,
            recurrenceDates: (recurrenceDates ?? nil) ?? [], exceptionDates: (exceptionDates ?? nil) ?? [],
            monthEnd: (monthEnd ?? nil) ?? .skip, offset: offset, misfire: misfire ?? nil,
            misfireThreshold: misfireThreshold ?? nil, spread: spread)
    }

    /// `"day"` (interval 1), `{"unit": "week", "interval": 2}` (interval optional) or `null`.
    private static func readRepeat(_ reader: inout FastJSONReader) throws(FastJSONReader.Unsupported)
        -> RepeatRule?
    {
        switch try reader.nextValueKind() {
        case .null:
            _ = try reader.consumeNull()
            return nil
        case .string:
            return RepeatRule(unit: try parsed(reader.readString(), RepeatUnit.init(parsing:)), interval: 1)
        case .object:
            var unit: RepeatUnit?
            var interval: Int??
            var object = try reader.beginObject()
            while let key = try reader.nextKey(in: &object) {
                switch key {
                case "unit": try unit.setOnce(parsed(reader.readString(), RepeatUnit.init(parsing:)))
                case "interval": try interval.setOnce(reader.consumeNull() ? nil : reader.readInt())
                default: throw FastJSONReader.Unsupported()
                }
            }
            guard let unit else { throw FastJSONReader.Unsupported() }
            return RepeatRule(unit: unit, interval: (interval ?? nil) ?? 1)
        default:
            throw FastJSONReader.Unsupported()
        }
    }

    /// An array of `RecurrenceDateTime` strings, or `null`.
    private static func readDateTimes(_ reader: inout FastJSONReader) throws(FastJSONReader.Unsupported)
        -> [RecurrenceDateTime]?
    {
        if try reader.consumeNull() { return nil }
        var dates: [RecurrenceDateTime] = []
        var array = try reader.beginArray()
        while try reader.nextElement(in: &array) {
            dates.append(try parsed(reader.readString(), RecurrenceDateTime.init(parsing:)))
        }
        return dates
    }

    /// A string-backed enumeration by raw value, or `null`; an unknown name is Unsupported.
    private static func readEnumeration<Value: RawRepresentable<String>>(_ reader: inout FastJSONReader)
        throws(FastJSONReader.Unsupported) -> Value?
    {
        guard let name = try reader.readStringOrNull() else { return nil }
        guard let value = Value(rawValue: name) else { throw FastJSONReader.Unsupported() }
        return value
    }

    /// `parse(text)`, with its ValidationError turned into Unsupported (the slow path then
    /// words the error).
    private static func parsed<Value>(_ text: String, _ parse: (String) throws(ValidationError) -> Value)
        throws(FastJSONReader.Unsupported) -> Value
    {
        do {
            return try parse(text)
        } catch {
            throw FastJSONReader.Unsupported()
        }
    }

    /// `parsed(_:_:)` of a string that may be `null`.
    private static func parsedIfPresent<Value>(_ text: String?, _ parse: (String) throws(ValidationError) -> Value)
        throws(FastJSONReader.Unsupported) -> Value?
    {
        guard let text else { return nil }
        return try parsed(text, parse)
    }
}
