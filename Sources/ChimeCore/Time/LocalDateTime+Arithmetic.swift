/// Field arithmetic in the proleptic Gregorian calendar, with no time zone involved.
extension LocalDateTime {
    /// The same day and time `months` calendar months later (earlier when negative);
    /// `nil` when that day does not exist in the target month, the year leaves 0000–9999,
    /// or `self` is not ``isValid``.
    ///
    /// Never clamps: Jan 31 + 1 month is `nil`, not Feb 28, so a monthly series on the
    /// 31st skips short months (RFC 5545 §3.3.10: "Recurrence rules may generate
    /// recurrence instances with an invalid date … such recurrence instances MUST be
    /// ignored"). Feb 29 + 12 months is `nil` unless the target year is a leap year.
    public func adding(months: Int) -> LocalDateTime? {
        guard isValid else { return nil }
        let (monthIndex, overflow) = (year * 12 + (month - 1)).addingReportingOverflow(months)
        guard !overflow else { return nil }
        var result = self
        result.year = CivilCalendar.floorDivide(monthIndex, 12)
        result.month = monthIndex - result.year * 12 + 1
        return result.isValid ? result : nil
    }

    /// The same time of day `days` days later (earlier when negative); `nil` only when the
    /// year leaves 0000–9999 or `self` is not ``isValid``.
    public func adding(days: Int) -> LocalDateTime? {
        guard isValid else { return nil }
        let start = CivilCalendar.daysSinceEpoch(year: year, month: month, day: day)
        let (target, overflow) = start.addingReportingOverflow(days)
        guard !overflow, abs(target) < 10_000 * 366 else { return nil }
        let date = CivilCalendar.date(daysSinceEpoch: target)
        let result = LocalDateTime(
            year: date.year, month: date.month, day: date.day, hour: hour, minute: minute, second: second)
        return result.isValid ? result : nil
    }

    /// Seconds from 1970-01-01T00:00:00 to this wall-clock time, counting every day as
    /// 86,400 s: the instant this wall-clock time names in UTC.
    var secondsSinceEpochAsIfUTC: Int {
        CivilCalendar.daysSinceEpoch(year: year, month: month, day: day) * CivilCalendar.secondsPerDay
            + hour * 3600 + minute * 60 + second
    }

    /// The wall-clock time `seconds` seconds after 1970-01-01T00:00:00 (UTC fields of that
    /// instant).
    init(secondsSinceEpochAsIfUTC seconds: Int) {
        let days = CivilCalendar.floorDivide(seconds, CivilCalendar.secondsPerDay)
        let secondOfDay = seconds - days * CivilCalendar.secondsPerDay
        let date = CivilCalendar.date(daysSinceEpoch: days)
        self.init(
            year: date.year, month: date.month, day: date.day,
            hour: secondOfDay / 3600, minute: secondOfDay % 3600 / 60, second: secondOfDay % 60)
    }
}
