import Foundation

/// The rules of a VTIMEZONE (RFC 5545 §3.6.5) whose TZID names no IANA zone: a fixed
/// offset, or a standard offset plus one daylight period between two yearly transitions
/// (`RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU`, as Outlook and older exporters write them).
///
/// When several STANDARD (or DAYLIGHT) sub-components give the history of a zone, the one
/// with the latest DTSTART is the rule in force. Anything else (a rule picking days
/// another way, more than one daylight period a year) is not understood and the TZID
/// stays unknown. ``ianaEquivalent(around:)`` then finds the IANA zone that agrees with the
/// rules, so imported reminders keep following a wall clock.
struct VTimeZoneRules: Hashable, Sendable {
    /// One yearly transition: the `ordinal` `weekday` of `month` (−1: the last), at the local
    /// `secondsIntoDay` read in the offset in force before it.
    struct Transition: Hashable, Sendable {
        var month: Int
        var weekday: Weekday
        var ordinal: Int
        var secondsIntoDay: Int
        var offsetBefore: Int

        /// The transition's instant in `year`, as Unix seconds.
        func unixSeconds(in year: Int) -> Int {
            let days = CivilCalendar.daysInMonth(month, year: year)
            let firstDay = CivilCalendar.daysSinceEpoch(year: year, month: month, day: 1)
            let firstWeekday = Weekday(daysSinceEpoch: firstDay).rawValue
            let firstMatch = 1 + (weekday.rawValue - firstWeekday + 7) % 7
            var day = firstMatch + 7 * (ordinal - 1)
            if ordinal < 0 {
                let lastMatch = firstMatch + 7 * ((days - firstMatch) / 7)
                day = lastMatch + 7 * (ordinal + 1)
            }
            day = min(max(day, 1), days)
            let localSeconds = (firstDay + day - 1) * CivilCalendar.secondsPerDay + secondsIntoDay
            return localSeconds - offsetBefore
        }
    }

    /// The daylight period: its offset and the transitions into and out of it.
    struct Daylight: Hashable, Sendable {
        var offset: Int
        var start: Transition
        var end: Transition
    }

    /// Seconds east of UTC outside daylight time.
    var standardOffset: Int
    /// The daylight period, if the zone has one.
    var daylight: Daylight?

    /// Reads the rules of `definition`; `nil` when they are not of a shape described above.
    init?(_ definition: ICalendarComponent) {
        func latest(_ name: String) -> ICalendarComponent? {
            definition.components(named: name).max { Self.start(of: $0) < Self.start(of: $1) }
        }
        guard let standard = latest("STANDARD") ?? latest("DAYLIGHT"),
            let standardOffset = Self.offset(standard.property("TZOFFSETTO"))
        else { return nil }
        self.standardOffset = standardOffset
        guard let daylight = latest("DAYLIGHT"), daylight != standard else {
            daylight = nil
            return
        }
        guard let daylightOffset = Self.offset(daylight.property("TZOFFSETTO")),
            let start = Self.transition(daylight, offsetBefore: standardOffset),
            let end = Self.transition(standard, offsetBefore: daylightOffset)
        else { return nil }
        self.daylight = Daylight(offset: daylightOffset, start: start, end: end)
    }

    /// Builds rules directly (tests).
    init(standardOffset: Int, daylight: Daylight?) {
        self.standardOffset = standardOffset
        self.daylight = daylight
    }

    /// The offset in force at `unixSeconds`.
    func offset(atUnixSeconds seconds: Int) -> Int {
        guard let daylight else { return standardOffset }
        let year = LocalDateTime(secondsSinceEpochAsIfUTC: seconds + standardOffset).year
        let start = daylight.start.unixSeconds(in: year)
        let end = daylight.end.unixSeconds(in: year)
        let isDaylight = start < end ? (seconds >= start && seconds < end) : (seconds >= start || seconds < end)
        return isDaylight ? daylight.offset : standardOffset
    }

    /// The instant of the wall-clock time `local` under these rules; in a gap the offset
    /// before the transition applies, in an overlap the first occurrence (as
    /// ``ZoneRules/resolve(_:in:)`` does for IANA zones).
    func resolve(_ local: LocalDateTime) -> Date {
        let wall = local.secondsSinceEpochAsIfUTC
        let before = offset(atUnixSeconds: wall - CivilCalendar.secondsPerDay)
        let candidate = wall - before
        let unix = offset(atUnixSeconds: candidate) == before ? candidate : wall - offset(atUnixSeconds: wall - before)
        return Date(timeIntervalSince1970: Double(unix))
    }

    /// The IANA zone whose offsets equal these rules' every 6 hours and at every hour of
    /// each transition day from `year − 1` through `year + 5`; `nil` when none does.
    /// Canonical zones (`Area/City`) are preferred over links, then the alphabetical first.
    func ianaEquivalent(around year: Int) -> String? {
        var samples: [Int] = []
        for sampledYear in (year - 1)...(year + 5) {
            let first = CivilCalendar.daysSinceEpoch(year: sampledYear, month: 1, day: 1) * CivilCalendar.secondsPerDay
            let last = CivilCalendar.daysSinceEpoch(year: sampledYear + 1, month: 1, day: 1) * CivilCalendar.secondsPerDay
            samples += stride(from: first, to: last, by: 6 * 3600)
            if let daylight {
                for transition in [daylight.start, daylight.end] {
                    let at = transition.unixSeconds(in: sampledYear)
                    samples += stride(from: at - 12 * 3600, through: at + 12 * 3600, by: 1800)
                }
            }
        }
        let probes = [samples[0], samples[samples.count / 3], samples[2 * samples.count / 3]]
        let candidates = TimeZone.knownTimeZoneIdentifiers.sorted { lhs, rhs in
            let lhsCanonical = lhs.contains("/") && !lhs.hasPrefix("Etc/")
            let rhsCanonical = rhs.contains("/") && !rhs.hasPrefix("Etc/")
            return lhsCanonical != rhsCanonical ? lhsCanonical : lhs < rhs
        }
        for identifier in candidates {
            guard let zone = try? ZoneRules.zone(named: identifier) else { continue }
            func agrees(_ seconds: Int) -> Bool {
                ZoneRules.offset(of: zone, atUnixSeconds: seconds) == offset(atUnixSeconds: seconds)
            }
            if probes.allSatisfy(agrees), samples.allSatisfy(agrees) { return identifier }
        }
        return nil
    }

    private static func start(of component: ICalendarComponent) -> String {
        component.property("DTSTART")?.value.trimmingCharacters(in: .whitespaces) ?? ""
    }

    /// `+0100`, `-0530`, `+013000` as seconds east of UTC.
    static func offset(_ property: ICalendarProperty?) -> Int? {
        guard let text = property?.value.trimmingCharacters(in: .whitespaces), let sign = text.first,
            sign == "+" || sign == "-"
        else { return nil }
        let digits = Array(text.dropFirst())
        guard digits.count == 4 || digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return nil
        }
        let numbers = stride(from: 0, to: digits.count, by: 2).compactMap { Int(String(digits[$0...($0 + 1)])) }
        guard numbers.count == digits.count / 2, numbers[0] < 24, numbers[1] < 60, numbers.count < 3 || numbers[2] < 60 else {
            return nil
        }
        let seconds = numbers[0] * 3600 + numbers[1] * 60 + (numbers.count == 3 ? numbers[2] : 0)
        return sign == "-" ? -seconds : seconds
    }

    /// The yearly transition a STANDARD or DAYLIGHT sub-component describes.
    private static func transition(_ component: ICalendarComponent, offsetBefore: Int) -> Transition? {
        guard let ruleText = component.property("RRULE")?.value.trimmingCharacters(in: .whitespaces),
            let rule = try? RecurrenceRule(parsing: ruleText), rule.frequency == .yearly,
            rule.months.count == 1, (1...12).contains(rule.months[0]), rule.weekdays.count == 1, let ordinal = rule.weekdays[0].ordinal,
            ordinal != 0, abs(ordinal) <= 5, rule.daysOfTheMonth.isEmpty,
            let startText = component.property("DTSTART")?.value.trimmingCharacters(in: .whitespaces),
            case .local(let start)? = try? RecurrenceDateTime(parsingBasic: startText)
        else { return nil }
        let before = offset(component.property("TZOFFSETFROM")) ?? offsetBefore
        return Transition(
            month: rule.months[0], weekday: rule.weekdays[0].weekday, ordinal: ordinal,
            secondsIntoDay: start.hour * 3600 + start.minute * 60 + start.second, offsetBefore: before)
    }
}
