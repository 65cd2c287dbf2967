import Foundation

/// IANA time zones: which identifiers Chime accepts, and how a wall-clock time becomes an
/// instant in one.
public enum ZoneRules {
    /// Looks up a zone by its IANA time zone database identifier (`Europe/Berlin`,
    /// `America/Argentina/Buenos_Aires`, `UTC`, `Etc/UTC`, `Etc/GMT-14`, legacy links such as
    /// `US/Eastern` or `EST5EDT`).
    ///
    /// Stricter than `TimeZone(identifier:)`, which on Linux also accepts ICU's abbreviations
    /// and Java-era ids (`PST`, `IST`, `JST`, `BST`, `AET`), custom offsets (`GMT+1`,
    /// `UTC+01:00`), `SystemV/…` ids dropped from tzdata in 2020b, and even an identifier
    /// followed by a NUL byte. Identifiers are case-sensitive, as in tzdata; `Factory` is
    /// refused. The returned zone's `identifier` may be Foundation's spelling (`UTC` comes
    /// back as `GMT`), so store the caller's string, not this one.
    /// - Throws: `ValidationError` `.unknownTimeZone` with field `trigger.timeZone`.
    public static func zone(named identifier: String) throws(ValidationError) -> TimeZone {
        guard isIANAShaped(identifier), let zone = TimeZone(identifier: identifier) else {
            var message = "'\(identifier)' is not an IANA time zone such as Europe/Berlin or UTC"
            if let suggestion = TimeZone.knownTimeZoneIdentifiers.first(where: {
                $0.caseInsensitiveCompare(identifier) == .orderedSame
            }) {
                message += "; did you mean \(suggestion)?"
            }
            throw ValidationError(.unknownTimeZone, field: "trigger.timeZone", message)
        }
        return zone
    }

    /// The instant a wall-clock time names in `zone`, following RFC 5545 §3.3.5 ("FORM #2:
    /// DATE WITH LOCAL TIME"):
    /// - a time that exists once maps to that instant;
    /// - a time inside a gap (spring forward) is shifted forward by the gap's length: it is
    ///   read with the offset in force before the transition, so 02:30 in Europe/Berlin on
    ///   2026-03-29 (02:00→03:00) gives 01:30Z, which is 03:30 CEST, and 09:00 on
    ///   2011-12-30 in Pacific/Apia (a skipped day) gives 09:00 on 2011-12-31;
    /// - a time inside an overlap (fall back) maps to its first occurrence, the earlier of
    ///   its two instants: 02:30 in Europe/Berlin on 2026-10-25 gives 00:30Z (CEST).
    ///
    /// Works from `TimeZone.secondsFromGMT(for:)` a day either side of the wall-clock time,
    /// so it assumes at most one offset change within that window (true of every zone since
    /// 1900). Seconds of the result are whole; the result is UTC.
    /// - Precondition: `local.isValid`.
    public static func resolve(_ local: LocalDateTime, in zone: TimeZone) -> Date {
        precondition(local.isValid, "resolving an invalid wall-clock time \(local)")
        let unixSeconds = resolve(wallSeconds: local.secondsSinceEpochAsIfUTC, in: zone)
        return Date(timeIntervalSinceReferenceDate: Double(unixSeconds - CivilCalendar.unixToReferenceDate))
    }

    /// ``resolve(_:in:)`` on wall-clock seconds (a ``LocalDateTime`` counted as if UTC),
    /// returning seconds since 1970-01-01T00:00:00Z.
    static func resolve(wallSeconds: Int, in zone: TimeZone) -> Int {
        let offsetBefore = offset(of: zone, atUnixSeconds: wallSeconds - CivilCalendar.secondsPerDay)
        let offsetAfter = offset(of: zone, atUnixSeconds: wallSeconds + CivilCalendar.secondsPerDay)
        if offsetBefore == offsetAfter, offset(of: zone, atUnixSeconds: wallSeconds - offsetBefore) == offsetBefore {
            return wallSeconds - offsetBefore
        }
        let offsetAtNaiveInstant = offset(of: zone, atUnixSeconds: wallSeconds - offsetBefore)
        var earliest: Int?
        for candidateOffset in [offsetBefore, offsetAfter, offsetAtNaiveInstant] {
            let instant = wallSeconds - candidateOffset
            if offset(of: zone, atUnixSeconds: instant) == candidateOffset {
                earliest = min(earliest ?? instant, instant)
            }
        }
        // No instant shows this wall-clock time: it is in a gap, read it with the old offset.
        return earliest ?? wallSeconds - offsetBefore
    }

    /// The wall-clock time `zone` shows at `instant`, to the whole second (fractions are
    /// truncated toward −∞).
    public static func localDateTime(at instant: Date, in zone: TimeZone) -> LocalDateTime {
        let unixSeconds = Int(instant.timeIntervalSinceReferenceDate.rounded(.down)) + CivilCalendar.unixToReferenceDate
        return LocalDateTime(secondsSinceEpochAsIfUTC: unixSeconds + offset(of: zone, atUnixSeconds: unixSeconds))
    }

    /// The wall-clock time of `instant` in `zone` followed by the UTC offset in force then
    /// (RFC 3339 §5.6 `time-offset`): `2026-10-25T02:00:00+02:00`, then an hour later
    /// `2026-10-25T02:00:00+01:00`, so both copies of a repeated hour stay distinct.
    public static func localTextWithOffset(at instant: Date, in zone: TimeZone) -> String {
        let unixSeconds = Int(instant.timeIntervalSinceReferenceDate.rounded(.down)) + CivilCalendar.unixToReferenceDate
        let seconds = offset(of: zone, atUnixSeconds: unixSeconds)
        let local = LocalDateTime(secondsSinceEpochAsIfUTC: unixSeconds + seconds)
        let magnitude = abs(seconds)
        let hours = magnitude / 3600
        let minutes = magnitude % 3600 / 60
        let sign = seconds < 0 ? "-" : "+"
        return "\(local)\(sign)\(hours < 10 ? "0" : "")\(hours):\(minutes < 10 ? "0" : "")\(minutes)"
    }

    static func offset(of zone: TimeZone, atUnixSeconds seconds: Int) -> Int {
        zone.secondsFromGMT(
            for: Date(timeIntervalSinceReferenceDate: Double(seconds - CivilCalendar.unixToReferenceDate)))
    }

    /// Whether `identifier` is spelled like a tzdata name: an `Area/Location[/Sub]` under one
    /// of tzdata's areas, or one of its few top-level names. This is what separates real
    /// zones from the extra ids ICU accepts.
    private static func isIANAShaped(_ identifier: String) -> Bool {
        let components = identifier.split(separator: "/", omittingEmptySubsequences: false)
        guard let area = components.first else { return false }
        if components.count == 1 { return topLevelNames.contains(identifier) }
        return areas.contains(String(area))
            && components.dropFirst().allSatisfy { component in
                !component.isEmpty
                    && component.utf8.allSatisfy {
                        $0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "_")
                            || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+")
                    }
            }
    }

    /// tzdata 2025b's areas, including those of the `backward` file (`US/Eastern`).
    private static let areas: Set<String> = [
        "Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Brazil",
        "Canada", "Chile", "Etc", "Europe", "Indian", "Mexico", "Pacific", "US",
    ]

    /// tzdata 2025b's zones and links without an area, minus `Factory`.
    private static let topLevelNames: Set<String> = [
        "CET", "CST6CDT", "Cuba", "EET", "EST", "EST5EDT", "Egypt", "Eire", "GB", "GB-Eire", "GMT",
        "GMT+0", "GMT-0", "GMT0", "Greenwich", "HST", "Hongkong", "Iceland", "Iran", "Israel",
        "Jamaica", "Japan", "Kwajalein", "Libya", "MET", "MST", "MST7MDT", "NZ", "NZ-CHAT",
        "Navajo", "PRC", "PST8PDT", "Poland", "Portugal", "ROC", "ROK", "Singapore", "Turkey",
        "UCT", "UTC", "Universal", "W-SU", "WET", "Zulu",
    ]
}
