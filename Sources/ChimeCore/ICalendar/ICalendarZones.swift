import Foundation

/// How an iCalendar file's date-times become Chime times: which IANA zone each `TZID`
/// stands for, and the zone of floating times and all-day dates.
///
/// A `TZID` that is an IANA name (Google and Thunderbird exports) is used as is. A custom
/// `TZID` defined by a VTIMEZONE maps to the IANA zone its `X-LIC-LOCATION` names, or whose
/// name ends the `TZID` (`/mozilla.org/20070129_1/Europe/Berlin`); any other custom zone makes
/// the components using it not importable. Floating times and all-day dates (RFC 5545
/// §3.3.5 FORM #1, §3.3.4) read in `X-WR-TIMEZONE` when the calendar has one, else in the
/// zone the user gives (`--tz`, default UTC).
public struct ICalendarZones: Sendable {
    /// The IANA zone of floating times and dates.
    public var floatingZone: String
    /// IANA zones by custom TZID, from the calendar's VTIMEZONE components.
    var customZones: [String: String]

    /// Reads the zone definitions of `calendar`.
    public init(calendar: ICalendarComponent, defaultZone: String) {
        if let named = calendar.property("X-WR-TIMEZONE")?.text.trimmingCharacters(in: .whitespaces),
            (try? ZoneRules.zone(named: named)) != nil
        {
            floatingZone = named
        } else {
            floatingZone = defaultZone
        }
        var custom: [String: String] = [:]
        for definition in calendar.components(named: "VTIMEZONE") {
            guard let tzid = definition.property("TZID")?.text else { continue }
            let candidates = [definition.property("X-LIC-LOCATION")?.text, Self.ianaSuffix(of: tzid)]
            if let zone = candidates.compactMap({ $0 }).first(where: { (try? ZoneRules.zone(named: $0)) != nil }) {
                custom[tzid] = zone
            }
        }
        customZones = custom
    }

    /// The IANA zone `tzid` stands for.
    /// - Throws: `ImportProblem` when it names neither an IANA zone nor a VTIMEZONE that maps to one.
    func zone(forTZID tzid: String) throws(ImportProblem) -> String {
        let trimmed = tzid.trimmingCharacters(in: .whitespaces)
        if (try? ZoneRules.zone(named: trimmed)) != nil { return trimmed }
        if let zone = customZones[trimmed] { return zone }
        throw ImportProblem("time zone '\(tzid)' is neither an IANA zone nor a VTIMEZONE mapping to one")
    }

    /// A date or date-time value (RFC 5545 §3.3.4, §3.3.5) with its `TZID`.
    /// - Throws: `ImportProblem` for a malformed value or an unknown zone.
    func time(_ value: String, tzid: String?) throws(ImportProblem) -> ICalendarTime {
        let text = value.trimmingCharacters(in: .whitespaces)
        if text.count == 8, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) {
            let local = LocalDateTime(
                year: Int(text.prefix(4))!, month: Int(text.dropFirst(4).prefix(2))!, day: Int(text.suffix(2))!)
            guard local.isValid else { throw ImportProblem("'\(value)' is not a date") }
            return ICalendarTime(start: .wallClock(local, zoneIdentifier: floatingZone), isDate: true)
        }
        let parsed: RecurrenceDateTime
        do {
            parsed = try RecurrenceDateTime(parsingBasic: text)
        } catch {
            throw ImportProblem(error.message)
        }
        switch parsed {
        case .instant(let date):
            return ICalendarTime(start: .instant(date), isDate: false)
        case .local(let local):
            var zone = floatingZone
            if let tzid { zone = try self.zone(forTZID: tzid) }
            return ICalendarTime(start: .wallClock(local, zoneIdentifier: zone), isDate: false)
        }
    }

    /// Every value of a date property (`DTSTART`, `RDATE`, `EXDATE`, `RECURRENCE-ID`),
    /// comma-separated values included; a PERIOD (`start/end`) gives its start.
    func times(of property: ICalendarProperty) throws(ImportProblem) -> [ICalendarTime] {
        var times: [ICalendarTime] = []
        for value in property.value.split(separator: ",") {
            let start = value.split(separator: "/").first.map(String.init) ?? String(value)
            times.append(try time(start, tzid: property.parameter("TZID")))
        }
        return times
    }

    private static func ianaSuffix(of tzid: String) -> String? {
        let parts = tzid.split(separator: "/")
        guard parts.count >= 2 else { return nil }
        return parts.suffix(2).joined(separator: "/")
    }
}

/// A DATE or DATE-TIME value read from an iCalendar file.
struct ICalendarTime: Hashable, Sendable {
    /// The instant (UTC) or wall-clock time in an IANA zone.
    var start: TriggerStart
    /// Whether the value was a DATE (an all-day event, starting at local midnight).
    var isDate: Bool

    /// The instant the value names (gaps and overlaps as ``ZoneRules/resolve(_:in:)``).
    var instant: Date {
        switch start {
        case .instant(let date):
            return date
        case .wallClock(let local, let zone):
            // The zone was checked when the value was read.
            return ZoneRules.resolve(local, in: TimeZone(identifier: zone)!)
        }
    }

    /// The value moved by `seconds` on its own clock (wall clock for a floating value).
    func shifted(by seconds: Int) -> ICalendarTime {
        switch start {
        case .instant(let date):
            return ICalendarTime(start: .instant(date.addingTimeInterval(Double(seconds))), isDate: isDate)
        case .wallClock(let local, let zone):
            let moved = LocalDateTime(secondsSinceEpochAsIfUTC: local.secondsSinceEpochAsIfUTC + seconds)
            return ICalendarTime(start: .wallClock(moved, zoneIdentifier: zone), isDate: isDate)
        }
    }
}

/// Why one component of a calendar cannot be imported.
struct ImportProblem: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}
