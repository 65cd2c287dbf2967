/// Proleptic-Gregorian day arithmetic on plain integers, with no time zone and no Foundation.
///
/// The day-count conversions are Howard Hinnant's `days_from_civil` and `civil_from_days`
/// ("chrono-Compatible Low-Level Date Algorithms", 2013), valid for negative years too.
enum CivilCalendar {
    static let secondsPerDay = 86_400
    /// Seconds from 1970-01-01T00:00:00Z to 2001-01-01T00:00:00Z, Foundation's reference date.
    static let unixToReferenceDate = 978_307_200
    /// Years 0001–9999: four digits, and no year 0000, which RFC 3339 allows but no calendar
    /// user means (a lateness of 6.4e13 ms in `ctl stats` came from one).
    static let supportedYears = 1...9999

    static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given date (negative before it).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        // Count years from March so the leap day is the last day of the counted year.
        let marchYear = month <= 2 ? year - 1 : year
        let era = floorDivide(marchYear, 400)
        let yearOfEra = marchYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` days after 1970-01-01.
    static func date(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    static func floorDivide(_ dividend: Int, _ divisor: Int) -> Int {
        let quotient = dividend / divisor
        return (dividend % divisor != 0 && (dividend < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
