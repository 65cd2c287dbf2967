import Foundation

extension ExclusionCalendar {
    /// A calendar of the events of an iCalendar file (RFC 5545): each VEVENT excludes its time.
    ///
    /// An all-day event (`DTSTART;VALUE=DATE`) excludes its days up to `DTEND` (exclusive; one
    /// day without it), at most 366; with `RRULE:FREQ=YEARLY` (and no other part but an
    /// `INTERVAL=1`) it excludes those month-days every year, with another rule its days over
    /// the ten years from its start (at most 10,000). A timed event excludes `DTSTART…DTEND`:
    /// an instant range for a UTC or `TZID` time, a wall-clock range for a floating one; its
    /// RRULE is expanded likewise. Events without an end (or a `DURATION`) are skipped.
    /// - Throws: `ValidationError` `.invalidArgument` (field `calendar.ics`) for text that is
    ///   not iCalendar, a `TZID` that is not an IANA zone, or too many dates or ranges.
    public init(ics text: String) throws(ValidationError) {
        let components = try ICalendarParser.parse(text)
        var calendar = ExclusionCalendar()
        var events: [ICalendarComponent] = []
        func collect(_ component: ICalendarComponent) {
            if component.name == "VEVENT" { events.append(component) }
            component.components.forEach(collect)
        }
        components.forEach(collect)
        for event in events {
            guard let start = event.property("DTSTART") else { continue }
            var rule: RecurrenceRule?
            if let property = event.property("RRULE") {
                do { rule = try RecurrenceRule(parsing: property.value) } catch {
                    throw ValidationError(.invalidArgument, field: "calendar.ics", "RRULE \(property.value): \(error.message)")
                }
            }
            if start.value.count == 8, let first = Self.parseBasicDay(start.value) {
                let end = event.property("DTEND").flatMap { Self.parseBasicDay($0.value) } ?? first + 1
                let length = min(max(1, end - first), 366)
                if let rule, rule.frequency == RecurrenceRule.Frequency.yearly, !rule.hasSelectors, rule.interval == 1, rule.count == nil, rule.until == nil {
                    for day in first..<first + length {
                        let date = CivilCalendar.date(daysSinceEpoch: day)
                        calendar.yearly.insert(date.month * 100 + date.day)
                    }
                } else {
                    for occurrence in try Self.expand(rule, from: first) {
                        for day in occurrence..<occurrence + length { calendar.days.insert(day) }
                    }
                }
            } else {
                guard let from = try Self.parseTime(start), let end = event.property("DTEND"), let to = try Self.parseTime(end) else {
                    continue
                }
                guard let rule else {
                    calendar.ranges.append(ExclusionRange(from: from, to: to))
                    continue
                }
                // Timed and repeating: the rule's occurrences over ten years, same length.
                let anchor: TriggerStart
                let length: Double
                switch (from, to) {
                case (.instant(let a), .instant(let b)):
                    anchor = .instant(a)
                    length = b.timeIntervalSince(a)
                case (.local(let a), .local(let b)):
                    anchor = .wallClock(a, zoneIdentifier: "UTC")
                    length = Double(b.secondsSinceEpochAsIfUTC - a.secondsSinceEpochAsIfUTC)
                default: continue
                }
                let recurrence = try Recurrence(start: anchor, recurrenceRule: rule)
                let until = recurrence.firstInstant.addingTimeInterval(10 * 366 * 86_400)
                for occurrence in recurrence.occurrences(onOrAfter: recurrence.firstInstant, through: until, limit: Self.maximumRanges) {
                    switch from {
                    case .instant:
                        calendar.ranges.append(ExclusionRange(
                            from: .instant(occurrence.instant), to: .instant(occurrence.instant.addingTimeInterval(length))))
                    case .local:
                        let seconds = Int(occurrence.instant.timeIntervalSince1970.rounded(.down))
                        calendar.ranges.append(ExclusionRange(
                            from: .local(LocalDateTime(secondsSinceEpochAsIfUTC: seconds)),
                            to: .local(LocalDateTime(secondsSinceEpochAsIfUTC: seconds + Int(length)))))
                    }
                }
            }
        }
        try calendar.validate()
        self = calendar
    }

    /// The days a rule starting on day `first` gives over ten years (just `first` without one).
    private static func expand(_ rule: RecurrenceRule?, from first: Int) throws(ValidationError) -> [Int] {
        guard let rule else { return [first] }
        let date = CivilCalendar.date(daysSinceEpoch: first)
        let recurrence = try Recurrence(
            start: .wallClock(LocalDateTime(year: date.year, month: date.month, day: date.day), zoneIdentifier: "UTC"), recurrenceRule: rule)
        let until = recurrence.firstInstant.addingTimeInterval(10 * 366 * 86_400)
        return recurrence.occurrences(onOrAfter: recurrence.firstInstant, through: until, limit: maximumDates).map {
            Int(($0.instant.timeIntervalSince1970 / 86_400).rounded(FloatingPointRoundingRule.down))
        }
    }

    static func parseBasicDay(_ text: String) -> Int? {
        guard text.count == 8, text.allSatisfy(\.isASCIIDigit) else { return nil }
        let digits = Array(text)
        return parseDay("\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))")
    }

    /// A DATE-TIME property: an instant (UTC `Z`, or local with a `TZID`), or a floating
    /// wall-clock time; `nil` for a value that is not a DATE-TIME.
    static func parseTime(_ property: ICalendarProperty) throws(ValidationError) -> RecurrenceDateTime? {
        var value = property.value
        let isUTC = value.hasSuffix("Z")
        if isUTC { value.removeLast() }
        guard value.count == 15, let day = parseBasicDay(String(value.prefix(8))), Array(value)[8] == "T",
            let hour = Int(value.dropFirst(9).prefix(2)), let minute = Int(value.dropFirst(11).prefix(2)),
            let second = Int(value.dropFirst(13).prefix(2))
        else { return nil }
        let date = CivilCalendar.date(daysSinceEpoch: day)
        let local = LocalDateTime(year: date.year, month: date.month, day: date.day, hour: hour, minute: minute, second: second)
        guard local.isValid else { return nil }
        if isUTC { return .instant(Date(timeIntervalSince1970: Double(local.secondsSinceEpochAsIfUTC))) }
        if let zoneName = property.parameter("TZID") {
            let zone: TimeZone
            do { zone = try ZoneRules.zone(named: zoneName) } catch {
                throw ValidationError(.invalidArgument, field: "calendar.ics", "TZID \(zoneName) is not an IANA zone")
            }
            return .instant(ZoneRules.resolve(local, in: zone))
        }
        return .local(local)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
