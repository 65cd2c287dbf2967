/// A validated rule bound to its start: the RFC 5545 §3.3.10 defaults taken from `DTSTART`
/// applied, and the candidate instances of each period listed as wall-clock seconds
/// (``LocalDateTime`` seconds counted as if UTC).
///
/// Periods are numbered from the one holding the start: period `p` is the start's year,
/// month, week (from ``RecurrenceRule/weekStart``), day, hour or minute advanced by
/// `p × INTERVAL`. Within a period the BYxxx parts expand or limit as RFC 5545's table
/// says; like python-dateutil this is done by testing each day of the period against every
/// day-level part, then pairing the days with the times of day and applying `BYSETPOS`.
/// The start itself is not filtered here (see ``Recurrence``).
struct RuleExpansion: Sendable {
    enum PeriodResult {
        /// The period lies past 9999-12-31.
        case end
        /// The candidates were appended; the next period that can hold any is this one.
        case next(Int)
    }

    let frequency: RecurrenceRule.Frequency
    let interval: Int
    /// The start, in wall-clock seconds.
    let startSeconds: Int
    /// The unit number of period 0: a year, `year × 12 + month − 1`, a week counted from
    /// `weekAnchorDay`, a day, an hour or a minute since 1970-01-01.
    let originUnit: Int
    /// The first day of the week holding the start.
    let weekAnchorDay: Int
    let days: DaySelector
    /// The hours an HOURLY or MINUTELY rule is limited to (bit `h`); 0 for any.
    let hourMask: UInt64
    /// The minutes a MINUTELY rule is limited to (bit `m`); 0 for any.
    let minuteMask: UInt64
    /// Sorted offsets in seconds that each selected day (DAILY and longer), hour (HOURLY)
    /// or minute (MINUTELY) expands to.
    let offsets: [Int]
    let setPositions: [Int]

    init(rule: RecurrenceRule, start: LocalDateTime, monthEnd: MonthEndPolicy) {
        frequency = rule.frequency
        interval = rule.interval
        startSeconds = start.secondsSinceEpochAsIfUTC
        let startDay = CivilCalendar.floorDivide(startSeconds, CivilCalendar.secondsPerDay)
        let startWeekday = Weekday(daysSinceEpoch: startDay)
        weekAnchorDay = startDay - (startWeekday.rawValue - rule.weekStart.rawValue + 7) % 7
        days = DaySelector(rule: rule, start: start, monthEnd: monthEnd)

        // RFC 5545 §3.3.10: parts finer than FREQ expand, and default to the start's value.
        let hours = Self.sortedUnique(rule.hours.isEmpty ? [start.hour] : rule.hours)
        let minutes = Self.sortedUnique(rule.minutes.isEmpty ? [start.minute] : rule.minutes)
        let seconds = Self.sortedUnique(rule.seconds.isEmpty ? [start.second] : rule.seconds)
        switch rule.frequency {
        case .minutely:
            originUnit = CivilCalendar.floorDivide(startSeconds, 60)
            hourMask = Self.mask(rule.hours)
            minuteMask = Self.mask(rule.minutes)
            offsets = seconds
        case .hourly:
            originUnit = CivilCalendar.floorDivide(startSeconds, 3600)
            hourMask = Self.mask(rule.hours)
            minuteMask = 0
            offsets = minutes.flatMap { minute in seconds.map { minute * 60 + $0 } }
        case .daily, .weekly, .monthly, .yearly:
            switch rule.frequency {
            case .daily: originUnit = startDay
            case .weekly: originUnit = 0
            case .monthly: originUnit = start.year * 12 + start.month - 1
            default: originUnit = start.year
            }
            hourMask = 0
            minuteMask = 0
            offsets = hours.flatMap { hour in
                minutes.flatMap { minute in seconds.map { hour * 3600 + minute * 60 + $0 } }
            }
        }
        setPositions = rule.setPositions
    }

    /// The most candidates one period can hold, before `BYSETPOS`.
    var maximumCandidatesPerPeriod: Int {
        let days: Int
        switch frequency {
        case .minutely, .hourly, .daily: days = 1
        case .weekly: days = self.days.weekdayMask.nonzeroBitCount
        case .monthly: days = 31
        case .yearly: days = 366
        }
        return days * offsets.count
    }

    /// The period holding wall-clock second `seconds`, or 0 when that is before the start.
    func period(containing seconds: Int) -> Int {
        max(0, CivilCalendar.floorDivide(unit(containing: seconds) - originUnit, interval))
    }

    /// The first wall-clock second of period `period`.
    func firstSecond(ofPeriod period: Int) -> Int? {
        let (step, overflow) = period.multipliedReportingOverflow(by: interval)
        guard !overflow, step < 1 << 40 else { return nil }
        let unit = originUnit + step
        switch frequency {
        case .minutely: return unit * 60
        case .hourly: return unit * 3600
        case .daily: return unit * CivilCalendar.secondsPerDay
        case .weekly: return (weekAnchorDay + 7 * unit) * CivilCalendar.secondsPerDay
        case .monthly:
            let year = CivilCalendar.floorDivide(unit, 12)
            return CivilCalendar.daysSinceEpoch(year: year, month: unit - year * 12 + 1, day: 1)
                * CivilCalendar.secondsPerDay
        case .yearly:
            return CivilCalendar.daysSinceEpoch(year: unit, month: 1, day: 1) * CivilCalendar.secondsPerDay
        }
    }

    /// Appends the candidates of period `period` to `candidates`, ascending.
    func appendCandidates(ofPeriod period: Int, to candidates: inout [Int]) -> PeriodResult {
        guard let firstSecond = firstSecond(ofPeriod: period) else { return .end }
        let firstDay = CivilCalendar.floorDivide(firstSecond, CivilCalendar.secondsPerDay)
        guard firstDay <= CivilCalendar.lastSupportedDay else { return .end }
        switch frequency {
        case .minutely, .hourly:
            let day = CivilDay(number: firstDay)
            guard days.matches(day) else {
                let resume = days.matchesMonth(day.month) ? firstDay + 1 : firstDay - day.dayOfMonth + day.monthLength + 1
                return .next(firstPeriod(startingAtOrAfter: resume * CivilCalendar.secondsPerDay, after: period))
            }
            let hour = (firstSecond - firstDay * CivilCalendar.secondsPerDay) / 3600
            guard hourMask == 0 || hourMask & (1 << hour) != 0 else {
                let nextHour = (firstSecond / 3600 + 1) * 3600
                return .next(firstPeriod(startingAtOrAfter: nextHour, after: period))
            }
            if frequency == .minutely {
                let minute = firstSecond % 3600 / 60
                guard minuteMask == 0 || minuteMask & (1 << minute) != 0 else { return .next(period + 1) }
            }
            appendSelected(days: [firstDay], base: firstSecond - firstDay * CivilCalendar.secondsPerDay, to: &candidates)
        case .daily:
            let day = CivilDay(number: firstDay)
            guard days.matches(day) else {
                guard !days.matchesMonth(day.month) else { return .next(period + 1) }
                let resume = firstDay - day.dayOfMonth + day.monthLength + 1
                return .next(firstPeriod(startingAtOrAfter: resume * CivilCalendar.secondsPerDay, after: period))
            }
            appendSelected(days: [firstDay], base: 0, to: &candidates)
        case .weekly:
            var day = CivilDay(number: firstDay)
            var selected: [Int] = []
            for _ in 0..<7 {
                if days.matches(day) { selected.append(day.number) }
                day = day.successor
            }
            appendSelected(days: selected, base: 0, to: &candidates)
        case .monthly:
            let first = CivilDay(number: firstDay)
            let selected = days.matchesMonth(first.month) ? days.select(monthStartingAt: first) : []
            appendSelected(days: selected, base: 0, to: &candidates)
        case .yearly:
            appendSelected(days: days.select(year: CivilDay(number: firstDay).year), base: 0, to: &candidates)
        }
        return .next(period + 1)
    }

    /// Pairs `selectedDays` with the offsets (each from `base` seconds into the day) and
    /// keeps the `BYSETPOS` positions of that list, if any.
    private func appendSelected(days selectedDays: [Int], base: Int, to candidates: inout [Int]) {
        let total = selectedDays.count * offsets.count
        guard total > 0 else { return }
        func candidate(at position: Int) -> Int {
            let (dayIndex, offsetIndex) = position.quotientAndRemainder(dividingBy: offsets.count)
            return selectedDays[dayIndex] * CivilCalendar.secondsPerDay + base + offsets[offsetIndex]
        }
        guard !setPositions.isEmpty else {
            for position in 0..<total { candidates.append(candidate(at: position)) }
            return
        }
        let positions = setPositions.compactMap { setPosition -> Int? in
            let position = setPosition > 0 ? setPosition - 1 : total + setPosition
            return (0..<total).contains(position) ? position : nil
        }
        candidates.append(contentsOf: Self.sortedUnique(positions).map(candidate(at:)))
    }

    /// The first period after `period` that starts at or after wall-clock second `seconds`.
    private func firstPeriod(startingAtOrAfter seconds: Int, after period: Int) -> Int {
        let unitSeconds = frequency == .minutely ? 60 : frequency == .hourly ? 3600 : CivilCalendar.secondsPerDay
        let unit = CivilCalendar.ceilingDivide(seconds, unitSeconds)
        return max(period + 1, CivilCalendar.ceilingDivide(unit - originUnit, interval))
    }

    private func unit(containing seconds: Int) -> Int {
        let day = CivilCalendar.floorDivide(seconds, CivilCalendar.secondsPerDay)
        switch frequency {
        case .minutely: return CivilCalendar.floorDivide(seconds, 60)
        case .hourly: return CivilCalendar.floorDivide(seconds, 3600)
        case .daily: return day
        case .weekly: return CivilCalendar.floorDivide(day - weekAnchorDay, 7)
        case .monthly:
            let date = CivilCalendar.date(daysSinceEpoch: day)
            return date.year * 12 + date.month - 1
        case .yearly: return CivilCalendar.date(daysSinceEpoch: day).year
        }
    }

    static func sortedUnique(_ values: [Int]) -> [Int] {
        Array(Set(values)).sorted()
    }

    /// A bit set of small non-negative values (bit `v` for value `v`).
    static func mask(_ values: [Int]) -> UInt64 {
        values.reduce(0) { $0 | 1 << UInt64($1) }
    }
}
