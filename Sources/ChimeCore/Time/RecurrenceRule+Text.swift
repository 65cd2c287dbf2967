/// The RFC 5545 §3.3.10 text form of a rule: `NAME=VALUE` parts joined by `;`.
extension RecurrenceRule: CustomStringConvertible {
    /// Parses and validates RFC 5545 §3.3.10 RECUR text such as
    /// `FREQ=MONTHLY;BYDAY=-1FR;COUNT=12`.
    ///
    /// Names and values are case-insensitive; parts may come in any order; a leading
    /// `RRULE:` and empty parts are ignored, as are `X-` extension parts. `UNTIL` takes
    /// `19970902T090000Z` (UTC), `19970902T090000` (local, in the start's zone) or the DATE
    /// `19970902` (through the end of that local day).
    /// - Throws: `ValidationError` `.invalidArgument` with field `trigger.rrule` naming the
    ///   part at fault: a missing or unknown `FREQ` (`SECONDLY` is refused), an unknown or
    ///   repeated part, a malformed number or weekday, a value out of range, or a
    ///   combination RFC 5545 forbids (see ``validate()``).
    public init(parsing text: String) throws(ValidationError) {
        var body = Substring(text.uppercased())
        if body.hasPrefix("RRULE:") { body = body.dropFirst(6) }
        var values: [String: Substring] = [:]
        for part in body.split(separator: ";", omittingEmptySubsequences: true) {
            guard let equals = part.firstIndex(of: "=") else {
                throw Self.invalid("'\(part)' is not a NAME=VALUE rule part")
            }
            let name = String(part[..<equals])
            let value = part[part.index(after: equals)...]
            if name.hasPrefix("X-") { continue }
            guard Self.partNames.contains(name) else {
                throw Self.invalid("unknown rule part '\(name)'; RFC 5545 defines \(Self.partNames.joined(separator: ", "))")
            }
            guard values[name] == nil else { throw Self.invalid("\(name) is given twice") }
            guard !value.isEmpty else { throw Self.invalid("\(name) has no value") }
            values[name] = value
        }
        guard let frequencyText = values["FREQ"] else {
            throw Self.invalid("FREQ is required, such as FREQ=DAILY or FREQ=WEEKLY;BYDAY=MO")
        }
        guard let frequency = Frequency(rawValue: String(frequencyText)) else {
            if frequencyText == "SECONDLY" {
                throw Self.invalid("FREQ=SECONDLY is not supported: repeats shorter than 60 s are not allowed")
            }
            throw Self.invalid("FREQ=\(frequencyText) is not one of MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, YEARLY")
        }
        self.init(frequency: frequency)
        if let text = values["INTERVAL"] { interval = try Self.integer(text, part: "INTERVAL") }
        if let text = values["COUNT"] { count = try Self.integer(text, part: "COUNT") }
        if let text = values["UNTIL"] {
            do {
                until = try RecurrenceDateTime(parsingBasic: String(text))
            } catch {
                throw Self.invalid("UNTIL: \(error.message)")
            }
        }
        months = try Self.integers(values["BYMONTH"], part: "BYMONTH")
        weekNumbers = try Self.integers(values["BYWEEKNO"], part: "BYWEEKNO")
        daysOfTheYear = try Self.integers(values["BYYEARDAY"], part: "BYYEARDAY")
        daysOfTheMonth = try Self.integers(values["BYMONTHDAY"], part: "BYMONTHDAY")
        hours = try Self.integers(values["BYHOUR"], part: "BYHOUR")
        minutes = try Self.integers(values["BYMINUTE"], part: "BYMINUTE")
        seconds = try Self.integers(values["BYSECOND"], part: "BYSECOND")
        setPositions = try Self.integers(values["BYSETPOS"], part: "BYSETPOS")
        if let text = values["BYDAY"] {
            weekdays = try text.split(separator: ",", omittingEmptySubsequences: false).map(Self.weekdayNumber)
        }
        if let text = values["WKST"] {
            guard let day = Weekday(code: text) else {
                throw Self.invalid("WKST=\(text) is not a weekday; use MO, TU, WE, TH, FR, SA or SU")
            }
            weekStart = day
        }
        try validate()
    }

    /// The RFC 5545 text, parts in a fixed order (`FREQ`, `INTERVAL`, `COUNT`, `UNTIL`, then
    /// the BYxxx parts from the largest unit down, `BYSETPOS` and `WKST`); `INTERVAL=1` and
    /// `WKST=MO` are left out. ``init(parsing:)`` reads it back to an equal rule.
    public var description: String {
        var parts = ["FREQ=\(frequency.rawValue)"]
        if interval != 1 { parts.append("INTERVAL=\(interval)") }
        if let count { parts.append("COUNT=\(count)") }
        if let until { parts.append("UNTIL=\(until.basicDescription)") }
        func append(_ name: String, _ values: [some CustomStringConvertible]) {
            if !values.isEmpty { parts.append(name + "=" + values.map(\.description).joined(separator: ",")) }
        }
        append("BYMONTH", months)
        append("BYWEEKNO", weekNumbers)
        append("BYYEARDAY", daysOfTheYear)
        append("BYMONTHDAY", daysOfTheMonth)
        append("BYDAY", weekdays)
        append("BYHOUR", hours)
        append("BYMINUTE", minutes)
        append("BYSECOND", seconds)
        append("BYSETPOS", setPositions)
        if weekStart != .monday { parts.append("WKST=\(weekStart.code)") }
        return parts.joined(separator: ";")
    }

    static func invalid(_ message: String) -> ValidationError {
        ValidationError(.invalidArgument, field: "trigger.rrule", message)
    }

    private static let partNames = [
        "FREQ", "UNTIL", "COUNT", "INTERVAL", "BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY",
        "BYYEARDAY", "BYWEEKNO", "BYMONTH", "BYSETPOS", "WKST",
    ]

    /// A signed decimal integer, as RFC 5545 §3.3.8 writes it (`+` allowed, no spaces).
    private static func integer(_ text: Substring, part: String) throws(ValidationError) -> Int {
        var digits = text
        var sign = 1
        if let first = digits.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 9, digits.utf8.allSatisfy(\.isASCIIDigit), let value = Int(digits) else {
            throw invalid("\(part) value '\(text)' is not a whole number")
        }
        return sign * value
    }

    private static func integers(_ text: Substring?, part: String) throws(ValidationError) -> [Int] {
        guard let text else { return [] }
        var result: [Int] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            result.append(try integer(item, part: part))
        }
        return result
    }

    private static func weekdayNumber(_ text: Substring) throws(ValidationError) -> WeekdayNumber {
        guard text.count >= 2, let weekday = Weekday(code: text.suffix(2)) else {
            throw invalid("BYDAY value '\(text)' is not a weekday such as MO, 2MO or -1FR")
        }
        let ordinalText = text.dropLast(2)
        guard !ordinalText.isEmpty else { return WeekdayNumber(weekday) }
        let ordinal: Int
        do {
            ordinal = try integer(ordinalText, part: "BYDAY")
        } catch {
            throw invalid("BYDAY value '\(text)' has a malformed ordinal; write 2MO or -1FR")
        }
        return WeekdayNumber(weekday, ordinal: ordinal)
    }
}
