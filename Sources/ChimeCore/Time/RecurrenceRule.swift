/// An RFC 5545 §3.3.10 recurrence rule (RECUR value, the text of an `RRULE`), such as
/// `FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;UNTIL=20261231T235959Z;WKST=SU`.
///
/// Each property is one rule part. Empty lists mean the part is absent; the defaults RFC
/// 5545 takes from `DTSTART` (the start's month, day, weekday and time of day) are applied
/// when the rule is expanded, not stored here. Build one with ``init(parsing:)`` or the
/// memberwise initializer followed by ``validate()``; ``description`` writes the text back.
///
/// Chime refuses `FREQ=SECONDLY` and more than one `BYSECOND` value: reminders never repeat
/// less than 60 s apart. See ``Recurrence`` for how a rule becomes instants.
public struct RecurrenceRule: Hashable, Sendable {
    /// The `FREQ` rule part: the length of one period of the rule (RFC 5545 §3.3.10).
    public enum Frequency: String, CaseIterable, Hashable, Sendable {
        /// Periods of one minute.
        case minutely = "MINUTELY"
        /// Periods of one hour.
        case hourly = "HOURLY"
        /// Periods of one day.
        case daily = "DAILY"
        /// Periods of one week, starting on the rule's ``RecurrenceRule/weekStart``.
        case weekly = "WEEKLY"
        /// Periods of one calendar month.
        case monthly = "MONTHLY"
        /// Periods of one calendar year.
        case yearly = "YEARLY"
    }

    /// One `BYDAY` value (RFC 5545 §3.3.10 `weekdaynum`): a weekday, optionally with an
    /// ordinal such as `2MO` (the second Monday) or `-1FR` (the last Friday).
    public struct WeekdayNumber: Hashable, Sendable, CustomStringConvertible {
        /// The day of the week.
        public var weekday: Weekday
        /// Which one within the month or year: 1…53 from the start, −1…−53 from the end;
        /// `nil` for every such weekday.
        public var ordinal: Int?

        /// Creates a `BYDAY` value; `ordinal` `nil` means every `weekday`.
        public init(_ weekday: Weekday, ordinal: Int? = nil) {
            self.weekday = weekday
            self.ordinal = ordinal
        }

        /// The RFC 5545 text, such as `MO`, `2MO` or `-1FR`.
        public var description: String {
            (ordinal.map(String.init) ?? "") + weekday.code
        }
    }

    /// `FREQ`: the period the rule repeats by.
    public var frequency: Frequency
    /// `INTERVAL`: how many periods one step spans (every 2nd week is 2); at least 1.
    public var interval: Int
    /// `COUNT`: how many instances the rule has, the start included; `nil` when unbounded.
    public var count: Int?
    /// `UNTIL`: the last instant (inclusive) the rule may produce; an instant, or a local time
    /// compared with the wall-clock time of each instance. `nil` when unbounded.
    public var until: RecurrenceDateTime?
    /// `BYMONTH`: months 1–12.
    public var months: [Int]
    /// `BYWEEKNO`: week numbers 1…53 or −1…−53 (YEARLY only), weeks starting on ``weekStart``,
    /// week 1 being the first with at least four days in the year (ISO 8601 when WKST=MO).
    public var weekNumbers: [Int]
    /// `BYYEARDAY`: days of the year 1…366 or −1…−366 (−1 is December 31st).
    public var daysOfTheYear: [Int]
    /// `BYMONTHDAY`: days of the month 1…31 or −1…−31 (−1 is the last day).
    public var daysOfTheMonth: [Int]
    /// `BYDAY`: weekdays, with ordinals only for MONTHLY and YEARLY rules.
    public var weekdays: [WeekdayNumber]
    /// `BYHOUR`: hours 0–23.
    public var hours: [Int]
    /// `BYMINUTE`: minutes 0–59.
    public var minutes: [Int]
    /// `BYSECOND`: at most one second 0–59.
    public var seconds: [Int]
    /// `BYSETPOS`: positions 1…366 or −1…−366 within the instances of each period.
    public var setPositions: [Int]
    /// `WKST`: the first day of the week, Monday by default.
    public var weekStart: Weekday

    /// Creates a rule without checking it; see ``validate()``.
    public init(
        frequency: Frequency, interval: Int = 1, count: Int? = nil, until: RecurrenceDateTime? = nil,
        months: [Int] = [], weekNumbers: [Int] = [], daysOfTheYear: [Int] = [], daysOfTheMonth: [Int] = [],
        weekdays: [WeekdayNumber] = [], hours: [Int] = [], minutes: [Int] = [], seconds: [Int] = [],
        setPositions: [Int] = [], weekStart: Weekday = .monday
    ) {
        self.frequency = frequency
        self.interval = interval
        self.count = count
        self.until = until
        self.months = months
        self.weekNumbers = weekNumbers
        self.daysOfTheYear = daysOfTheYear
        self.daysOfTheMonth = daysOfTheMonth
        self.weekdays = weekdays
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
        self.setPositions = setPositions
        self.weekStart = weekStart
    }

    /// The largest `COUNT` Chime accepts: the instances of a counted rule are walked once
    /// when the recurrence is built, so this bounds that work.
    public static let maximumCount = 100_000
    /// The largest `INTERVAL` (and `repeat.interval`): nine digits, as the RRULE text takes.
    /// Every minute × this is about 1,900 years, and steps in seconds stay far inside `Int`.
    public static let maximumInterval = 999_999_999

    /// Whether the rule has any BYxxx part: without one, each period holds exactly one
    /// candidate instance, taken from the start (RFC 5545 §3.3.10).
    public var hasSelectors: Bool {
        !(months.isEmpty && weekNumbers.isEmpty && daysOfTheYear.isEmpty && daysOfTheMonth.isEmpty
            && weekdays.isEmpty && hours.isEmpty && minutes.isEmpty && seconds.isEmpty && setPositions.isEmpty)
    }
}
