import Foundation

/// How an iCalendar file's date-times become Chime times: which IANA zone each `TZID`
/// stands for, and the zone of floating times and all-day dates.
///
/// A `TZID` is, in this order: an IANA name (Google and Thunderbird exports), used as is; a
/// Windows zone name (`W. Europe Standard Time`, Outlook), mapped through CLDR's
/// windowsZones table (``CalendarImportOptions/windowsZoneNames``); a custom `TZID` defined by a VTIMEZONE, mapped
/// to the IANA zone its `X-LIC-LOCATION` names, whose name ends the `TZID`
/// (`/mozilla.org/20070129_1/Europe/Berlin`), or that its Windows name maps to; else the
/// VTIMEZONE's own rules (a fixed offset, or yearly STANDARD/DAYLIGHT transitions,
/// ``VTimeZoneRules``), carried by the IANA zone that agrees with them for the years
/// around the import, or used directly for one-shot times when none does. Any other
/// `TZID` makes the components using it not importable. Floating times and all-day dates
/// (RFC 5545 §3.3.5 FORM #1, §3.3.4) read in `X-WR-TIMEZONE` when the calendar has one,
/// else in the zone the user gives (`--tz`, default UTC).
public struct ICalendarZones: Sendable {
    /// The IANA zone of floating times and dates.
    public var floatingZone: String
    /// IANA zones by custom TZID, from the calendar's VTIMEZONE components.
    var customZones: [String: String]
    /// Rules of VTIMEZONEs no IANA zone agrees with, by TZID.
    var ruleZones: [String: VTimeZoneRules]
    /// One sentence per TZID that was not an IANA name, saying how it was read.
    public var notes: [String]
    /// Maps Windows zone names (``CalendarImportOptions/windowsZoneNames``); `nil`: none known.
    let windowsZoneNames: (@Sendable (String) -> String?)?

    /// Reads the zone definitions of `calendar`; `referenceYear` is the year around which
    /// a VTIMEZONE's rules are compared with IANA zones (the import's year); `windowsZoneNames`
    /// maps Windows zone names (`nil`: they are unknown).
    public init(
        calendar: ICalendarComponent, defaultZone: String, referenceYear: Int = 2026,
        windowsZoneNames: (@Sendable (String) -> String?)? = nil
    ) {
        self.windowsZoneNames = windowsZoneNames
        if let named = calendar.property("X-WR-TIMEZONE")?.text.trimmingCharacters(in: .whitespaces),
            (try? ZoneRules.zone(named: named)) != nil
        {
            floatingZone = named
        } else {
            floatingZone = defaultZone
        }
        var custom: [String: String] = [:]
        var rules: [String: VTimeZoneRules] = [:]
        var notes: [String] = []
        for definition in calendar.components(named: "VTIMEZONE") {
            guard let tzid = definition.property("TZID")?.text.trimmingCharacters(in: .whitespaces), !tzid.isEmpty,
                !Self.isIANA(tzid)
            else { continue }
            let named = [definition.property("X-LIC-LOCATION")?.text, Self.ianaSuffix(of: tzid)]
            if let zone = named.compactMap({ $0 }).first(where: Self.isIANA) {
                custom[tzid] = zone
            } else if let zone = Self.windowsZone(named: tzid, in: windowsZoneNames) {
                custom[tzid] = zone
                notes.append("time zone '\(tzid)' read as \(zone) (Windows name, CLDR windowsZones)")
            } else if let ownRules = VTimeZoneRules(definition) {
                if let zone = ownRules.ianaEquivalent(around: referenceYear) {
                    custom[tzid] = zone
                    notes.append("time zone '\(tzid)' read as \(zone), whose offsets equal its VTIMEZONE rules")
                } else {
                    rules[tzid] = ownRules
                    notes.append("time zone '\(tzid)' read by its own VTIMEZONE rules (no IANA zone agrees with them)")
                }
            }
        }
        // TZIDs used without a VTIMEZONE (Outlook sometimes leaves it out): Windows names.
        for tzid in Self.tzids(in: calendar) where custom[tzid] == nil && rules[tzid] == nil && !Self.isIANA(tzid) {
            if let zone = Self.windowsZone(named: tzid, in: windowsZoneNames) {
                custom[tzid] = zone
                notes.append("time zone '\(tzid)' read as \(zone) (Windows name, CLDR windowsZones)")
            }
        }
        customZones = custom
        ruleZones = rules
        self.notes = notes
    }

    /// Every `TZID` parameter value in `component` and below, in file order, once each.
    private static func tzids(in component: ICalendarComponent) -> [String] {
        var seen = Set<String>()
        var ordered: [String] = []
        func visit(_ component: ICalendarComponent) {
            for property in component.properties {
                for value in property.parameters["TZID"] ?? [] {
                    let tzid = value.trimmingCharacters(in: .whitespaces)
                    if !tzid.isEmpty, seen.insert(tzid).inserted { ordered.append(tzid) }
                }
            }
            component.components.forEach(visit)
        }
        visit(component)
        return ordered
    }

    private static func isIANA(_ name: String) -> Bool { (try? ZoneRules.zone(named: name)) != nil }

    /// The IANA zone the Windows zone name `name` maps to through `lookup`, when it is one
    /// Chime accepts.
    private static func windowsZone(named name: String, in lookup: (@Sendable (String) -> String?)?) -> String? {
        lookup?(name).flatMap { isIANA($0) ? $0 : nil }
    }

    /// The IANA zone `tzid` stands for.
    /// - Throws: `ImportProblem` when it names neither an IANA zone, a Windows zone, nor a
    ///   VTIMEZONE that maps to one.
    func zone(forTZID tzid: String) throws(ImportProblem) -> String {
        let trimmed = tzid.trimmingCharacters(in: .whitespaces)
        if Self.isIANA(trimmed) { return trimmed }
        if let zone = customZones[trimmed] { return zone }
        if let zone = Self.windowsZone(named: trimmed, in: windowsZoneNames) { return zone }
        throw ImportProblem("time zone '\(tzid)' is neither an IANA zone, a Windows zone name, nor a VTIMEZONE Chime can read")
    }

    /// A date or date-time value (RFC 5545 §3.3.4, §3.3.5) with its `TZID`.
    /// - Throws: `ImportProblem` for a malformed value or an unknown zone.
    func time(_ value: String, tzid: String?) throws(ImportProblem) -> ICalendarTime {
        let text = value.trimmingCharacters(in: .whitespaces)
        if text.count == 8, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) {
            guard let year = Int(text.prefix(4)), let month = Int(text.dropFirst(4).prefix(2)), let day = Int(text.suffix(2))
            else { throw ImportProblem("'\(value)' is not a date") }
            let local = LocalDateTime(year: year, month: month, day: day)
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
            if let tzid {
                if let rules = ruleZones[tzid.trimmingCharacters(in: .whitespaces)] {
                    return ICalendarTime(start: .instant(rules.resolve(local)), isDate: false, isByOwnRules: true)
                }
                zone = try self.zone(forTZID: tzid)
            }
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
    /// Whether a VTIMEZONE's own rules made the instant (no IANA zone carries its wall clock).
    var isByOwnRules = false

    /// The instant the value names (gaps and overlaps as ``ZoneRules/resolve(_:in:)``).
    var instant: Date {
        switch start {
        case .instant(let date):
            return date
        case .wallClock(let local, let zone):
            // The zone was checked when the value was read; UTC only if that ever changes.
            return ZoneRules.resolve(local, in: TimeZone(identifier: zone) ?? TimeZone(secondsFromGMT: 0) ?? .current)
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
