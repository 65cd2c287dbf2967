import Foundation

/// A wall-clock date and time with no zone: what a clock on the wall shows, such as
/// `2026-12-24T09:00:00`.
///
/// Fields follow the proleptic Gregorian calendar: `year` 0001–9999, `month` 1–12,
/// `day` 1–28…31, `hour` 0–23, `minute` 0–59, `second` 0–59 (no leap seconds). The
/// memberwise initializer does not check ranges; ``isValid`` does, and ``init(parsing:)``
/// and decoding only produce valid values. It turns into an instant only through a time
/// zone (``ZoneRules/resolve(_:in:)``). Encodes as the string `YYYY-MM-DDTHH:MM:SS`.
public struct LocalDateTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The year, 0001–9999.
    public var year: Int
    /// The month, 1–12.
    public var month: Int
    /// The day of the month, 1 to 28, 29, 30 or 31 depending on the month and year.
    public var day: Int
    /// The hour, 0–23.
    public var hour: Int
    /// The minute, 0–59.
    public var minute: Int
    /// The second, 0–59.
    public var second: Int

    /// Creates a wall-clock time from fields without checking them; see ``isValid``.
    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Parses `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS` (ISO 8601 extended format, the
    /// `T` may be lower case) and checks every field, including the days of the month in
    /// leap and common years.
    /// - Throws: `ValidationError` `.invalidArgument` when the text is malformed, carries a
    ///   UTC offset, or names a day or time that does not exist.
    public init(parsing text: String) throws(ValidationError) {
        var scanner = ASCIIScanner(text)
        guard let year = scanner.digits(4), scanner.consume(UInt8(ascii: "-")),
            let month = scanner.digits(2), scanner.consume(UInt8(ascii: "-")),
            let day = scanner.digits(2), scanner.consume(UInt8(ascii: "T"), UInt8(ascii: "t")),
            let hour = scanner.digits(2), scanner.consume(UInt8(ascii: ":")),
            let minute = scanner.digits(2)
        else {
            throw ValidationError(
                .invalidArgument, "'\(text)' is not a wall-clock date-time such as 2026-12-24T09:00:00")
        }
        var second = 0
        if scanner.consume(UInt8(ascii: ":")) {
            guard let parsed = scanner.digits(2) else {
                throw ValidationError(.invalidArgument, "'\(text)' has malformed seconds; expected two digits")
            }
            second = parsed
        }
        if let next = scanner.peek, Array("Zz+-".utf8).contains(next) {
            throw ValidationError(
                .invalidArgument,
                "'\(text)' carries a UTC offset; a wall-clock time has none (the time zone gives it)")
        }
        guard scanner.isAtEnd else {
            throw ValidationError(
                .invalidArgument, "'\(text)' is not a wall-clock date-time such as 2026-12-24T09:00:00")
        }
        self.init(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        if let problem = rangeViolation {
            throw ValidationError(.invalidArgument, "'\(text)' does not exist: \(problem)")
        }
    }

    /// Whether every field is in range and the day exists in its month (Feb 29 only in
    /// leap years).
    public var isValid: Bool { rangeViolation == nil }

    /// The text `YYYY-MM-DDTHH:MM:SS`, zero-padded, with seconds always present.
    public var description: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
    }

    public static func < (lhs: LocalDateTime, rhs: LocalDateTime) -> Bool {
        (lhs.year, lhs.month, lhs.day, lhs.hour, lhs.minute, lhs.second)
            < (rhs.year, rhs.month, rhs.day, rhs.hour, rhs.minute, rhs.second)
    }

    /// The first field out of range, as a phrase for an error message; `nil` when valid.
    var rangeViolation: String? {
        if !CivilCalendar.supportedYears.contains(year) { return "year \(year) is outside 0001–9999" }
        if !(1...12).contains(month) { return "month \(month) is outside 01–12" }
        let monthLength = CivilCalendar.daysInMonth(month, year: year)
        if !(1...monthLength).contains(day) {
            return "\(pad(year, 4))-\(pad(month, 2)) has \(monthLength) days, not \(day)"
        }
        if !(0...23).contains(hour) { return "hour \(hour) is outside 00–23" }
        if !(0...59).contains(minute) { return "minute \(minute) is outside 00–59" }
        if !(0...59).contains(second) { return "second \(second) is outside 00–59" }
        return nil
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

/// JSON: the string form (`description`), read with `init(parsing:)`.
extension LocalDateTime: TextCodable {}
