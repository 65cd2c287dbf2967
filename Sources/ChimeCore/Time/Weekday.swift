/// A day of the week, numbered as ISO 8601 does (Monday 1 … Sunday 7), with the
/// two-letter codes of RFC 5545 §3.3.10 (`MO` … `SU`).
public enum Weekday: Int, CaseIterable, Hashable, Sendable {
    case monday = 1, tuesday, wednesday, thursday, friday, saturday, sunday

    /// The RFC 5545 §3.3.10 code: `MO`, `TU`, `WE`, `TH`, `FR`, `SA` or `SU`.
    public var code: String {
        switch self {
        case .monday: "MO"
        case .tuesday: "TU"
        case .wednesday: "WE"
        case .thursday: "TH"
        case .friday: "FR"
        case .saturday: "SA"
        case .sunday: "SU"
        }
    }

    /// The weekday with RFC 5545 code `code` (upper case), or `nil` for any other text.
    public init?(code: some StringProtocol) {
        guard let match = Weekday.allCases.first(where: { $0.code == code }) else { return nil }
        self = match
    }

    /// The weekday of the date `days` days after 1970-01-01 (a Thursday).
    init(daysSinceEpoch days: Int) {
        // 1970-01-01 is weekday 4; shift so the remainder is 0 on a Monday.
        let mondayBased = ((days + 3) % 7 + 7) % 7
        self = Weekday(rawValue: mondayBased + 1)!
    }
}

extension LocalDateTime {
    /// The day of the week of this date (proleptic Gregorian).
    public var weekday: Weekday {
        Weekday(daysSinceEpoch: CivilCalendar.daysSinceEpoch(year: year, month: month, day: day))
    }
}
