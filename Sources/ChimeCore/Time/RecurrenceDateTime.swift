import Foundation

/// A DATE-TIME value of a recurrence (RFC 5545 §3.3.5): an instant (FORM #2, UTC) or a
/// wall-clock time (FORM #1, local) read in the recurrence's time zone.
///
/// Used for `UNTIL` (RFC 5545 §3.3.10), `RDATE` (§3.8.5.2) and `EXDATE` (§3.8.5.1). A local
/// value turns into an instant through ``ZoneRules/resolve(_:in:)`` in the start's zone
/// (gap: shifted by the gap's length; overlap: the first copy), or on UTC fields when the
/// start is an absolute instant. JSON: the string `2026-12-24T08:00:00Z` (RFC 3339, any
/// offset) for an instant, `2026-12-24T09:00:00` for a local time.
public enum RecurrenceDateTime: Hashable, Sendable, CustomStringConvertible {
    /// An absolute instant (UTC).
    case instant(Date)
    /// A wall-clock time in the recurrence's zone.
    case local(LocalDateTime)

    /// Parses the JSON form: RFC 3339 with `Z` or an offset gives ``instant(_:)``,
    /// `YYYY-MM-DDTHH:MM[:SS]` without one gives ``local(_:)``.
    /// - Throws: `ValidationError` `.invalidArgument` for malformed text or a day or time
    ///   that does not exist.
    public init(parsing text: String) throws(ValidationError) {
        let timePart = text.utf8.drop { $0 != UInt8(ascii: "T") && $0 != UInt8(ascii: "t") }
        let hasOffset = timePart.contains {
            $0 == UInt8(ascii: "Z") || $0 == UInt8(ascii: "z") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
        }
        self = hasOffset ? .instant(try RFC3339.parseInstant(text)) : .local(try LocalDateTime(parsing: text))
    }

    /// Parses the iCalendar basic form of RFC 5545 §3.3.5 and §3.3.4: `19970902T090000Z`
    /// (UTC), `19970902T090000` (local) or the DATE `19970902`, which stands for the whole
    /// day and so reads as its last second, `19970902T235959` local.
    /// - Throws: `ValidationError` `.invalidArgument` when the text has another shape or
    ///   names a day or time that does not exist.
    public init(parsingBasic text: String) throws(ValidationError) {
        var scanner = ASCIIScanner(text)
        let malformed = ValidationError(
            .invalidArgument, "'\(text)' is not an iCalendar date-time such as 20261224T080000Z or 20261224")
        guard let year = scanner.digits(4), let month = scanner.digits(2), let day = scanner.digits(2) else {
            throw malformed
        }
        var local = LocalDateTime(year: year, month: month, day: day, hour: 23, minute: 59, second: 59)
        var isUTC = false
        if scanner.consume(UInt8(ascii: "T"), UInt8(ascii: "t")) {
            guard let hour = scanner.digits(2), let minute = scanner.digits(2), let second = scanner.digits(2) else {
                throw malformed
            }
            (local.hour, local.minute, local.second) = (hour, minute, second)
            isUTC = scanner.consume(UInt8(ascii: "Z"), UInt8(ascii: "z"))
        }
        guard scanner.isAtEnd else { throw malformed }
        if let problem = local.rangeViolation {
            throw ValidationError(.invalidArgument, "'\(text)' does not exist: \(problem)")
        }
        self = isUTC ? .instant(Self.instant(ofUTCFields: local)) : .local(local)
    }

    /// The JSON form: RFC 3339 UTC with milliseconds, or `YYYY-MM-DDTHH:MM:SS`.
    public var description: String {
        switch self {
        case .instant(let date): RFC3339.format(date)
        case .local(let local): local.description
        }
    }

    /// The iCalendar basic form, `19970902T090000Z` or `19970902T090000` (whole seconds;
    /// a fraction is dropped).
    public var basicDescription: String {
        switch self {
        case .instant(let date):
            let unixSeconds = Int(date.timeIntervalSinceReferenceDate.rounded(.down)) + CivilCalendar.unixToReferenceDate
            return Self.basic(LocalDateTime(secondsSinceEpochAsIfUTC: unixSeconds)) + "Z"
        case .local(let local):
            return Self.basic(local)
        }
    }

    static func instant(ofUTCFields local: LocalDateTime) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(local.secondsSinceEpochAsIfUTC - CivilCalendar.unixToReferenceDate))
    }

    private static func basic(_ local: LocalDateTime) -> String {
        local.description.filter { $0 != "-" && $0 != ":" }
    }
}

/// JSON: the string form (`description`), read with `init(parsing:)`.
extension RecurrenceDateTime: TextCodable {}
