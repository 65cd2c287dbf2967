/// The day-level parts of a rule (`BYMONTH`, `BYWEEKNO`, `BYYEARDAY`, `BYMONTHDAY`, `BYDAY`)
/// with the RFC 5545 §3.3.10 defaults from the start, as a test on single days.
///
/// A day is selected when it passes every part present; `BYDAY` passes when any of its
/// values does (a plain weekday, or an ordinal one counted within the month for MONTHLY
/// rules and YEARLY rules with `BYMONTH`, within the year otherwise). This intersection is
/// what RFC 5545's expand/limit table yields for each FREQ.
struct DaySelector: Sendable {
    struct OrdinalWeekday: Sendable {
        var ordinal: Int
        var weekday: Int
    }

    /// Bit `m` for each selected month; 0 for any month.
    let monthMask: UInt64
    let weekNumbers: [Int]
    let daysOfTheYear: [Int]
    let daysOfTheMonth: [Int]
    let clampsMonthEnd: Bool
    /// Bit `w` for each plain `BYDAY` weekday (ISO numbering).
    let weekdayMask: UInt64
    let ordinalWeekdays: [OrdinalWeekday]
    let ordinalsCountWithinMonth: Bool
    let weekStart: Int

    init(rule: RecurrenceRule, start: LocalDateTime, monthEnd: MonthEndPolicy) {
        var months = rule.months
        var monthDays = rule.daysOfTheMonth
        var weekdays = rule.weekdays
        if rule.weekNumbers.isEmpty && rule.daysOfTheYear.isEmpty && monthDays.isEmpty && weekdays.isEmpty {
            // RFC 5545 §3.3.10: "Information, not contained in the rule, necessary to
            // determine the various recurrence instance start time and dates are derived
            // from the Start Time ("DTSTART") component attribute."
            switch rule.frequency {
            case .yearly:
                if months.isEmpty { months = [start.month] }
                monthDays = [start.day]
            case .monthly:
                monthDays = [start.day]
            case .weekly:
                weekdays = [RecurrenceRule.WeekdayNumber(start.weekday)]
            case .daily, .hourly, .minutely:
                break
            }
        }
        monthMask = RuleExpansion.mask(months)
        weekNumbers = rule.weekNumbers
        daysOfTheYear = rule.daysOfTheYear
        daysOfTheMonth = monthDays
        clampsMonthEnd = monthEnd == .clamp
        weekdayMask = RuleExpansion.mask(weekdays.filter { $0.ordinal == nil }.map(\.weekday.rawValue))
        ordinalWeekdays = weekdays.compactMap { value in
            value.ordinal.map { OrdinalWeekday(ordinal: $0, weekday: value.weekday.rawValue) }
        }
        ordinalsCountWithinMonth = rule.frequency == .monthly || !rule.months.isEmpty
        weekStart = rule.weekStart.rawValue
    }

    func matchesMonth(_ month: Int) -> Bool {
        monthMask == 0 || monthMask & (1 << UInt64(month)) != 0
    }

    func matches(_ day: CivilDay) -> Bool {
        guard matchesMonth(day.month) else { return false }
        if !daysOfTheMonth.isEmpty && !matchesDayOfMonth(day) { return false }
        if !daysOfTheYear.isEmpty && !matchesDayOfYear(day) { return false }
        if (weekdayMask != 0 || !ordinalWeekdays.isEmpty) && !matchesWeekday(day) { return false }
        if !weekNumbers.isEmpty && !matchesWeekNumber(day) { return false }
        return true
    }

    /// The selected days (days since 1970-01-01) of the month starting on `first`.
    func select(monthStartingAt first: CivilDay) -> [Int] {
        if !daysOfTheMonth.isEmpty {
            // Only the listed days (and the last, for clamping) can match: test just those.
            let length = first.monthLength
            var positions = daysOfTheMonth.map { $0 > 0 ? $0 : length + $0 + 1 }.filter { (1...length).contains($0) }
            if clampsMonthEnd && daysOfTheMonth.contains(where: { $0 > length }) { positions.append(length) }
            return Set(positions).sorted().compactMap { position in
                let day = CivilDay(number: first.number + position - 1)
                return matches(day) ? day.number : nil
            }
        }
        var selected: [Int] = []
        var day = first
        while true {
            if matches(day) { selected.append(day.number) }
            guard day.dayOfMonth < day.monthLength else { return selected }
            day = day.successor
        }
    }

    /// The selected days of `year`, visiting only the months `BYMONTH` allows.
    func select(year: Int) -> [Int] {
        if !daysOfTheYear.isEmpty {
            // Only the listed days of the year can match: test just those.
            let januaryFirst = CivilCalendar.daysSinceEpoch(year: year, month: 1, day: 1)
            let length = CivilCalendar.isLeapYear(year) ? 366 : 365
            let positions = daysOfTheYear.map { $0 > 0 ? $0 : length + $0 + 1 }.filter { (1...length).contains($0) }
            return Set(positions).sorted().compactMap { position in
                let day = CivilDay(number: januaryFirst + position - 1)
                return matches(day) ? day.number : nil
            }
        }
        var selected: [Int] = []
        for month in 1...12 where matchesMonth(month) {
            selected += select(monthStartingAt: CivilDay(firstOf: month, year: year))
        }
        return selected
    }

    private func matchesDayOfMonth(_ day: CivilDay) -> Bool {
        daysOfTheMonth.contains { value in
            if value < 0 { return day.monthLength + value + 1 == day.dayOfMonth }
            return value == day.dayOfMonth
                || (clampsMonthEnd && value > day.monthLength && day.dayOfMonth == day.monthLength)
        }
    }

    private func matchesDayOfYear(_ day: CivilDay) -> Bool {
        daysOfTheYear.contains { value in
            value > 0 ? value == day.dayOfYear : day.yearLength + value + 1 == day.dayOfYear
        }
    }

    private func matchesWeekday(_ day: CivilDay) -> Bool {
        if weekdayMask & (1 << UInt64(day.weekday)) != 0 { return true }
        let (position, length) =
            ordinalsCountWithinMonth ? (day.dayOfMonth, day.monthLength) : (day.dayOfYear, day.yearLength)
        let fromStart = (position - 1) / 7 + 1
        let fromEnd = -((length - position) / 7 + 1)
        return ordinalWeekdays.contains { $0.weekday == day.weekday && ($0.ordinal == fromStart || $0.ordinal == fromEnd) }
    }

    /// Whether the day's week, numbered within its own week-numbering year (which may be
    /// the year before or after its calendar year), is one of `BYWEEKNO`.
    private func matchesWeekNumber(_ day: CivilDay) -> Bool {
        var weekYear = day.year
        var weekOne = CivilCalendar.firstDayOfWeekOne(year: weekYear, weekStart: weekStart)
        var nextWeekOne = CivilCalendar.firstDayOfWeekOne(year: weekYear + 1, weekStart: weekStart)
        if day.number < weekOne {
            weekYear -= 1
            nextWeekOne = weekOne
            weekOne = CivilCalendar.firstDayOfWeekOne(year: weekYear, weekStart: weekStart)
        } else if day.number >= nextWeekOne {
            weekYear += 1
            weekOne = nextWeekOne
            nextWeekOne = CivilCalendar.firstDayOfWeekOne(year: weekYear + 1, weekStart: weekStart)
        }
        let week = (day.number - weekOne) / 7 + 1
        let weeksInYear = (nextWeekOne - weekOne) / 7
        return weekNumbers.contains { $0 == week || $0 == week - weeksInYear - 1 }
    }
}
