import Foundation

extension RecurrenceRule {
    /// The months (1–12) a day selected by BYYEARDAY can fall in, over leap and common years:
    /// day `n` counts from 1 January, `-n` from 31 December (RFC 5545 §3.3.10).
    var monthsReachedByYearDays: Set<Int> {
        var months = Set<Int>()
        for daysInYear in [365, 366] {
            for value in daysOfTheYear {
                let day = value > 0 ? value : daysInYear + 1 + value
                guard (1...daysInYear).contains(day) else { continue }
                months.insert(Self.month(ofDay: day, daysInYear: daysInYear))
            }
        }
        return months
    }

    /// The months (1–12) a day of a BYWEEKNO week can fall in, over all fourteen kinds of
    /// year (seven weekdays for 1 January, leap or not), the days of week 1 in the previous
    /// December and of the last week in the next January included. Week 1 is the first week,
    /// starting on WKST, with at least four days in the year (RFC 5545 §3.3.10, ISO 8601).
    var monthsReachedByWeekNumbers: Set<Int> {
        var months = Set<Int>()
        for daysInYear in [365, 366] {
            for januaryFirst in 1...7 {
                // Day numbers are 1-based within the year; < 1 is December before, > daysInYear January after.
                let firstWeekStart = (weekStart.rawValue - januaryFirst + 7) % 7 + 1
                let weekOneStart = firstWeekStart - 1 >= 4 ? firstWeekStart - 7 : firstWeekStart
                var weeks = 0
                while min(weekOneStart + 7 * weeks + 6, daysInYear) - max(weekOneStart + 7 * weeks, 1) + 1 >= 4 { weeks += 1 }
                for value in weekNumbers {
                    let week = value > 0 ? value : weeks + 1 + value
                    guard (1...weeks).contains(week) else { continue }
                    let start = weekOneStart + 7 * (week - 1)
                    for day in start...(start + 6) {
                        if day < 1 {
                            months.insert(12)
                        } else if day > daysInYear {
                            months.insert(1)
                        } else {
                            months.insert(Self.month(ofDay: day, daysInYear: daysInYear))
                        }
                    }
                }
            }
        }
        return months
    }

    /// The month of day `day` (1-based) of a year with `daysInYear` days.
    private static func month(ofDay day: Int, daysInYear: Int) -> Int {
        let year = daysInYear == 366 ? 2000 : 2001
        var remaining = day
        for month in 1...12 {
            let length = CivilCalendar.daysInMonth(month, year: year)
            if remaining <= length { return month }
            remaining -= length
        }
        return 12
    }
}
