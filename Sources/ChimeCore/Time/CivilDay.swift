/// The calendar facts of one day that RFC 5545 §3.3.10 rule parts test: its month, day of
/// the month and of the year, weekday and the lengths of its month and year.
struct CivilDay {
    /// Days since 1970-01-01.
    var number: Int
    var year: Int
    var month: Int
    var dayOfMonth: Int
    /// 1 (January 1st) … 365 or 366.
    var dayOfYear: Int
    /// ISO weekday, Monday 1 … Sunday 7.
    var weekday: Int
    var monthLength: Int
    var yearLength: Int

    init(number: Int) {
        let date = CivilCalendar.date(daysSinceEpoch: number)
        self.number = number
        year = date.year
        month = date.month
        dayOfMonth = date.day
        weekday = Weekday(daysSinceEpoch: number).rawValue
        monthLength = CivilCalendar.daysInMonth(date.month, year: date.year)
        yearLength = CivilCalendar.isLeapYear(date.year) ? 366 : 365
        dayOfYear = number - CivilCalendar.daysSinceEpoch(year: date.year, month: 1, day: 1) + 1
    }

    /// The first day of `month` in `year`.
    init(firstOf month: Int, year: Int) {
        self.init(number: CivilCalendar.daysSinceEpoch(year: year, month: month, day: 1))
    }

    /// The next day, computed from this one without a calendar conversion.
    var successor: CivilDay {
        guard dayOfMonth < monthLength else {
            return month == 12 ? CivilDay(firstOf: 1, year: year + 1) : nextMonthStart
        }
        var next = self
        next.number += 1
        next.dayOfMonth += 1
        next.dayOfYear += 1
        next.weekday = weekday == 7 ? 1 : weekday + 1
        return next
    }

    private var nextMonthStart: CivilDay {
        var next = self
        next.number += 1
        next.month += 1
        next.dayOfMonth = 1
        next.dayOfYear += 1
        next.weekday = weekday == 7 ? 1 : weekday + 1
        next.monthLength = CivilCalendar.daysInMonth(next.month, year: year)
        return next
    }
}

extension CivilCalendar {
    /// The last day Chime schedules on, 9999-12-31, in days since 1970-01-01.
    static let lastSupportedDay = daysSinceEpoch(year: 9999, month: 12, day: 31)

    /// The first day of week 1 of `year` for weeks starting on ISO weekday `weekStart`:
    /// week 1 is the first week with at least four days in the year (RFC 5545 §3.3.10
    /// BYWEEKNO, ISO 8601 when weeks start on Monday).
    static func firstDayOfWeekOne(year: Int, weekStart: Int) -> Int {
        let januaryFirst = daysSinceEpoch(year: year, month: 1, day: 1)
        let daysIntoWeek = (Weekday(daysSinceEpoch: januaryFirst).rawValue - weekStart + 7) % 7
        return daysIntoWeek <= 3 ? januaryFirst - daysIntoWeek : januaryFirst - daysIntoWeek + 7
    }

    static func ceilingDivide(_ dividend: Int, _ divisor: Int) -> Int {
        -floorDivide(-dividend, divisor)
    }
}
