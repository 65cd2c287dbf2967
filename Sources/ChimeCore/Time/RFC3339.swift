import Foundation

/// Instants as RFC 3339 text (RFC 3339 §5.6 `date-time`), the wire and CLI form of every
/// absolute time in Chime.
///
/// Parsing accepts `2026-12-24T08:00:00Z`, `2026-12-24T08:00:00.123+01:00` and, as an
/// extension for people typing times, `2026-12-24T08:00Z` without seconds; `T` and `Z` may
/// be lower case (RFC 3339 §5.6, note on case). Formatting always writes UTC with exactly
/// three fractional digits, `2026-12-24T08:00:00.000Z`.
public enum RFC3339 {
    /// Parses an RFC 3339 date-time with a UTC offset into an instant.
    ///
    /// Shape: `YYYY-MM-DD` `T` `HH:MM[:SS[.fraction]]` then `Z` or `±HH:MM`. Fraction digits
    /// beyond nanoseconds are truncated. `-00:00` ("offset unknown", RFC 3339 §4.3) is
    /// treated as UTC. A leap second (`:60`, RFC 3339 §5.7) is refused: POSIX time has none,
    /// and no reminder means one. The instant, offset applied, must lie in
    /// ``supportedInstants`` (years 0001–9999 in UTC).
    /// - Throws: `ValidationError` `.invalidArgument` when the text is malformed, names a
    ///   day or time that does not exist (year 0000, second 60 included), has no offset (the
    ///   message then points to `--tz` for wall-clock times), or lands outside 0001–9999 UTC.
    public static func parseInstant(_ text: String) throws(ValidationError) -> Date {
        var scanner = ASCIIScanner(text)
        // Built only when thrown: ingest parses a million of these.
        var malformed: ValidationError {
            ValidationError(.invalidArgument, "'\(text)' is not an RFC 3339 date-time such as 2026-12-24T08:00:00Z")
        }
        guard let year = scanner.digits(4), scanner.consume(UInt8(ascii: "-")),
            let month = scanner.digits(2), scanner.consume(UInt8(ascii: "-")),
            let day = scanner.digits(2)
        else { throw malformed }
        guard scanner.consume(UInt8(ascii: "T"), UInt8(ascii: "t")) else {
            if scanner.isAtEnd {
                throw ValidationError(
                    .invalidArgument, "'\(text)' has no time of day; write it as \(text)T08:00:00Z or with an offset")
            }
            throw malformed
        }
        guard let hour = scanner.digits(2), scanner.consume(UInt8(ascii: ":")),
            let minute = scanner.digits(2)
        else { throw malformed }
        var second = 0
        var nanoseconds = 0
        if scanner.consume(UInt8(ascii: ":")) {
            guard let parsed = scanner.digits(2) else { throw malformed }
            second = parsed
            if scanner.consume(UInt8(ascii: ".")) {
                let fraction = scanner.consumeRun(while: \.isASCIIDigit)
                guard !fraction.isEmpty else { throw malformed }
                for (place, digit) in fraction.prefix(9).enumerated() {
                    nanoseconds += Int(digit - UInt8(ascii: "0")) * powersOfTen[8 - place]
                }
            }
        }
        let offsetSeconds: Int
        if scanner.isAtEnd {
            throw ValidationError(
                .invalidArgument,
                "'\(text)' has no UTC offset; add Z or an offset such as +01:00, or give it as a wall-clock time with --tz <IANA zone> (for example --tz Europe/Berlin)"
            )
        } else if scanner.consume(UInt8(ascii: "Z"), UInt8(ascii: "z")) {
            offsetSeconds = 0
        } else if let sign = scanner.peek, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            _ = scanner.consume(sign)
            guard let offsetHour = scanner.digits(2), scanner.consume(UInt8(ascii: ":")),
                let offsetMinute = scanner.digits(2)
            else { throw malformed }
            guard offsetHour <= 23, offsetMinute <= 59 else {
                throw ValidationError(.invalidArgument, "'\(text)' has an offset outside -23:59…+23:59")
            }
            offsetSeconds = (sign == UInt8(ascii: "-") ? -1 : 1) * (offsetHour * 3600 + offsetMinute * 60)
        } else {
            throw malformed
        }
        guard scanner.isAtEnd else { throw malformed }

        let wallClock = LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        if let problem = wallClock.rangeViolation {
            let hint = second == 60 ? " (leap seconds are not supported)" : ""
            throw ValidationError(.invalidArgument, "'\(text)' does not exist: \(problem)\(hint)")
        }
        let unixSeconds = wallClock.secondsSinceEpochAsIfUTC - offsetSeconds
        // Whole seconds relative to the reference date first, so the fraction is rounded once.
        let instant = Date(
            timeIntervalSinceReferenceDate: Double(unixSeconds - CivilCalendar.unixToReferenceDate)
                + Double(nanoseconds) / 1e9)
        guard isSupported(instant) else {
            throw ValidationError(.invalidArgument, "'\(text)' is outside years 0001–9999 once its offset is applied")
        }
        return instant
    }

    /// Whether `date` is one of ``supportedInstants``. Use this rather than `contains`:
    /// `Date`'s `<=` is `!(>)`, so a range "contains" NaN.
    public static func isSupported(_ date: Date) -> Bool {
        date.timeIntervalSinceReferenceDate.isFinite && supportedInstants.contains(date)
    }

    /// The instants Chime accepts from outside: 0001-01-01T00:00:00.000Z through
    /// 9999-12-31T23:59:59.999Z, the ones ``format(_:)`` shows exactly. Check membership
    /// with ``isSupported(_:)``, which also refuses NaN.
    public static let supportedInstants: ClosedRange<Date> =
        Date(timeIntervalSinceReferenceDate: Double(-62_135_596_800 - CivilCalendar.unixToReferenceDate))
        ... Date(timeIntervalSinceReferenceDate: maximumReferenceMilliseconds / 1000)

    /// Formats an instant as `YYYY-MM-DDTHH:MM:SS.mmmZ`, always UTC, always three fractional
    /// digits.
    ///
    /// Milliseconds are truncated toward −∞ (floor), except that an instant within half a
    /// microsecond below a millisecond boundary (two units in the last place of the Double,
    /// if coarser) counts as on it: binary floating point stores `.123` as `.12299999…`,
    /// and that must not print as `.122`. Fields are computed arithmetically from the epoch seconds
    /// (Hinnant's `civil_from_days`), with no formatter or calendar, so the call costs well
    /// under a microsecond. Instants outside years 0000–9999, which four-digit years cannot
    /// show, are clamped to the nearest representable millisecond.
    public static func format(_ date: Date) -> String {
        format(unixMilliseconds: unixMilliseconds(of: date))
    }

    /// The millisecond `format(_:)` shows for `date`, in milliseconds since
    /// 1970-01-01T00:00:00Z: floor, with the same snap-up tolerance and the same clamp to
    /// years 0000–9999 (NaN counts as 2001-01-01T00:00:00Z).
    public static func unixMilliseconds(of date: Date) -> Int64 {
        let reference = date.timeIntervalSinceReferenceDate.isNaN ? 0 : date.timeIntervalSinceReferenceDate
        // A millisecond like .123 is often stored a hair below it; snap up what lies within
        // half a microsecond, or two ulps where Double is coarser (after about year 2250).
        let tolerance = reference.isFinite ? max(5e-7, 2 * reference.ulp) : 0
        let referenceMilliseconds = min(
            max(((reference + tolerance) * 1000).rounded(.down), minimumReferenceMilliseconds),
            maximumReferenceMilliseconds)
        return Int64(referenceMilliseconds) + Int64(CivilCalendar.unixToReferenceDate) * 1000
    }

    /// Formats milliseconds since 1970-01-01T00:00:00Z as `YYYY-MM-DDTHH:MM:SS.mmmZ`;
    /// values outside years 0000–9999 are clamped into them.
    public static func format(unixMilliseconds: Int64) -> String {
        let clamped = min(max(unixMilliseconds, minimumUnixMilliseconds), maximumUnixMilliseconds)
        let unixMilliseconds = Int(clamped)
        let unixSeconds = CivilCalendar.floorDivide(unixMilliseconds, 1000)
        let millisecond = unixMilliseconds - unixSeconds * 1000
        let fields = LocalDateTime(secondsSinceEpochAsIfUTC: unixSeconds)

        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int, width: Int, at offset: Int) {
                var remaining = value
                for position in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[position] = UInt8(ascii: "0") + UInt8(remaining % 10)
                    remaining /= 10
                }
            }
            put(fields.year, width: 4, at: 0)
            buffer[4] = UInt8(ascii: "-")
            put(fields.month, width: 2, at: 5)
            buffer[7] = UInt8(ascii: "-")
            put(fields.day, width: 2, at: 8)
            buffer[10] = UInt8(ascii: "T")
            put(fields.hour, width: 2, at: 11)
            buffer[13] = UInt8(ascii: ":")
            put(fields.minute, width: 2, at: 14)
            buffer[16] = UInt8(ascii: ":")
            put(fields.second, width: 2, at: 17)
            buffer[19] = UInt8(ascii: ".")
            put(millisecond, width: 3, at: 20)
            buffer[23] = UInt8(ascii: "Z")
            return 24
        }
    }

    private static let powersOfTen = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]
    /// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z in milliseconds since 2001.
    private static let minimumReferenceMilliseconds =
        Double((-62_167_219_200 - CivilCalendar.unixToReferenceDate) * 1000)
    private static let maximumReferenceMilliseconds =
        Double((253_402_300_799 - CivilCalendar.unixToReferenceDate) * 1000 + 999)
    /// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z in Unix milliseconds.
    static let minimumUnixMilliseconds: Int64 = -62_167_219_200 * 1000
    static let maximumUnixMilliseconds: Int64 = 253_402_300_799 * 1000 + 999
}
