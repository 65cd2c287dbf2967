import Foundation

/// A named calendar of excluded days and ranges (Quartz's `HolidayCalendar`,
/// `WeeklyCalendar` and `DailyCalendar` in one): holidays, weekends, maintenance windows.
/// Shared by any number of reminders (`trigger.calendars`), evaluated in each reminder's
/// recipient's zone — a calendar has no zone of its own, so "25 December" is the 25th
/// wherever the recipient is.
///
/// JSON: `{"dates": ["2026-12-25"], "yearly": ["12-25", "01-01"], "weekdays": ["SA", "SU"],
/// "ranges": [{"from": "2026-12-24T18:00:00", "to": "2026-12-27T00:00:00"},
/// {"from": "2026-11-01T02:00:00Z", "to": "2026-11-01T04:00:00Z"}], "description": "…"}`:
/// whole local days, the same month-day every year, weekdays every week, and ranges — a
/// wall-clock range (no offset) in the recipient's zone, or an instant range (`Z` or an
/// offset) everywhere; `to` exclusive. At most 10,000 dates and 1,000 ranges. Created from
/// lists, or from an `.ics` file (``init(ics:)``).
public struct ExclusionCalendar: Hashable, Sendable {
    /// Excluded days, as days since 1970-01-01 of their local date.
    public var days: Set<Int>
    /// Excluded month-days every year (`month × 100 + day`).
    public var yearly: Set<Int>
    /// Excluded weekdays.
    public var weekdays: Set<Weekday>
    /// Excluded ranges, `from` inclusive, `to` exclusive.
    public var ranges: [ExclusionRange]
    /// What the calendar is for.
    public var description: String?

    /// The most dates a calendar holds.
    public static let maximumDates = 10_000
    /// The most ranges a calendar holds.
    public static let maximumRanges = 1_000

    /// Creates a calendar.
    public init(days: Set<Int> = [], yearly: Set<Int> = [], weekdays: Set<Weekday> = [], ranges: [ExclusionRange] = [], description: String? = nil) {
        self.days = days
        self.yearly = yearly
        self.weekdays = weekdays
        self.ranges = ranges
        self.description = description
    }

    /// Checks the sizes and the ranges.
    /// - Throws: `ValidationError` `.invalidArgument` (field `calendar.<part>`).
    public func validate() throws(ValidationError) {
        guard days.count <= Self.maximumDates else {
            throw ValidationError(.invalidArgument, field: "calendar.dates", "a calendar holds at most \(Self.maximumDates) dates")
        }
        guard ranges.count <= Self.maximumRanges else {
            throw ValidationError(.invalidArgument, field: "calendar.ranges", "a calendar holds at most \(Self.maximumRanges) ranges")
        }
        for (index, range) in ranges.enumerated() where !range.isOrdered {
            throw ValidationError(.invalidArgument, field: "calendar.ranges[\(index)]", "from must be before to, both instants or both wall-clock times")
        }
        for value in yearly where !(1...12).contains(value / 100) || !(1...CivilCalendar.daysInMonth(value / 100, year: 2000)).contains(value % 100) {
            throw ValidationError(.invalidArgument, field: "calendar.yearly", "\(value / 100)-\(value % 100) is not a month-day")
        }
    }

    /// If `instant` is excluded in `zone`: why (a short text) and the first instant after the
    /// excluded period (the next local midnight, or the range's end).
    public func exclusion(at instant: Date, in zone: TimeZone) -> (reason: String, until: Date)? {
        let local = ZoneRules.localDateTime(at: instant, in: zone)
        let day = CivilCalendar.daysSinceEpoch(year: local.year, month: local.month, day: local.day)
        var reason: String?
        if days.contains(day) {
            reason = "date \(Self.dayText(day))"
        } else if yearly.contains(local.month * 100 + local.day) {
            reason = String(format: "yearly %02d-%02d", local.month, local.day)
        } else if weekdays.contains(local.weekday) {
            reason = "weekday \(local.weekday.code)"
        }
        if let reason {
            let next = CivilCalendar.date(daysSinceEpoch: day + 1)
            let midnight = ZoneRules.resolve(LocalDateTime(year: next.year, month: next.month, day: next.day), in: zone)
            return (reason, max(midnight, instant.addingTimeInterval(0.001)))
        }
        let wall = local.secondsSinceEpochAsIfUTC
        for range in ranges {
            switch (range.from, range.to) {
            case (.instant(let from), .instant(let to)) where from <= instant && instant < to:
                return ("range \(range)", to)
            case (.local(let from), .local(let to)) where from.secondsSinceEpochAsIfUTC <= wall && wall < to.secondsSinceEpochAsIfUTC:
                return ("range \(range)", max(ZoneRules.resolve(to, in: zone), instant.addingTimeInterval(0.001)))
            default: continue
            }
        }
        return nil
    }

    static func dayText(_ day: Int) -> String {
        let date = CivilCalendar.date(daysSinceEpoch: day)
        return String(format: "%04d-%02d-%02d", date.year, date.month, date.day)
    }
}

/// An excluded range: both ends instants, or both wall-clock times read in the recipient's zone.
public struct ExclusionRange: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The start, inclusive.
    public var from: RecurrenceDateTime
    /// The end, exclusive.
    public var to: RecurrenceDateTime

    /// Creates a range.
    public init(from: RecurrenceDateTime, to: RecurrenceDateTime) {
        self.from = from
        self.to = to
    }

    var isOrdered: Bool {
        switch (from, to) {
        case (.instant(let a), .instant(let b)): a < b
        case (.local(let a), .local(let b)): a.isValid && b.isValid && a.secondsSinceEpochAsIfUTC < b.secondsSinceEpochAsIfUTC
        default: false
        }
    }

    /// `from/to` as RFC 3339 or wall-clock text.
    public var description: String { "\(from.text)/\(to.text)" }
}

extension RecurrenceDateTime {
    /// The text form: RFC 3339 UTC for an instant, `YYYY-MM-DDTHH:MM:SS` for a wall-clock time.
    var text: String {
        switch self {
        case .instant(let date): RFC3339.format(date)
        case .local(let local): local.description
        }
    }
}

extension ExclusionCalendar: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case dates, yearly, weekdays, ranges, description
    }

    /// Decodes the JSON shape on the type.
    /// - Throws: `DecodingError` for a malformed date, month-day or weekday, or an unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var days: Set<Int> = []
        for text in try container.decodeIfPresent([String].self, forKey: .dates) ?? [] {
            guard let day = Self.parseDay(text) else {
                throw DecodingError.dataCorruptedError(forKey: .dates, in: container, debugDescription: "\(text) is not a date such as 2026-12-25")
            }
            days.insert(day)
        }
        var yearly: Set<Int> = []
        for text in try container.decodeIfPresent([String].self, forKey: .yearly) ?? [] {
            let parts = text.split(separator: "-")
            guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let month = Int(parts[0]), let day = Int(parts[1]),
                (1...12).contains(month), (1...CivilCalendar.daysInMonth(month, year: 2000)).contains(day)
            else {
                throw DecodingError.dataCorruptedError(forKey: .yearly, in: container, debugDescription: "\(text) is not a month-day such as 12-25")
            }
            yearly.insert(month * 100 + day)
        }
        var weekdays: Set<Weekday> = []
        for code in try container.decodeIfPresent([String].self, forKey: .weekdays) ?? [] {
            guard let weekday = Weekday(code: code) else {
                throw DecodingError.dataCorruptedError(forKey: .weekdays, in: container, debugDescription: "\(code) is not a weekday MO … SU")
            }
            weekdays.insert(weekday)
        }
        self.init(
            days: days, yearly: yearly, weekdays: weekdays,
            ranges: try container.decodeIfPresent([ExclusionRange].self, forKey: .ranges) ?? [],
            description: try container.decodeIfPresent(String.self, forKey: .description))
    }

    /// Encodes the JSON shape on the type, sorted, empty parts left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !days.isEmpty { try container.encode(days.sorted().map(Self.dayText), forKey: .dates) }
        if !yearly.isEmpty { try container.encode(yearly.sorted().map { String(format: "%02d-%02d", $0 / 100, $0 % 100) }, forKey: .yearly) }
        if !weekdays.isEmpty { try container.encode(weekdays.sorted { $0.rawValue < $1.rawValue }.map(\.code), forKey: .weekdays) }
        if !ranges.isEmpty { try container.encode(ranges, forKey: .ranges) }
        try container.encodeIfPresent(description, forKey: .description)
    }

    static func parseDay(_ text: String) -> Int? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...CivilCalendar.daysInMonth(month, year: year)).contains(day)
        else { return nil }
        return CivilCalendar.daysSinceEpoch(year: year, month: month, day: day)
    }
}

/// The calendars a reminder excludes, with the zone they are evaluated in: what a
/// `Recurrence` skips.
public struct OccurrenceExclusion: Sendable {
    /// The calendars, by name.
    public var calendars: [(name: String, calendar: ExclusionCalendar)]
    /// The recipient's zone.
    public var zone: TimeZone

    /// Creates the exclusion.
    public init(calendars: [(name: String, calendar: ExclusionCalendar)], zone: TimeZone) {
        self.calendars = calendars
        self.zone = zone
    }

    /// If `instant` is excluded: the calendar and reason, and the first instant after it.
    public func exclusion(at instant: Date) -> (calendar: String, reason: String, until: Date)? {
        for (name, calendar) in calendars {
            if let found = calendar.exclusion(at: instant, in: zone) { return (name, found.reason, found.until) }
        }
        return nil
    }
}
