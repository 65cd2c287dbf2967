import Foundation

/// Checking the parts of a recurrence and choosing how its instances are generated.
extension Recurrence {
    /// The most RDATE or EXDATE values one recurrence takes.
    public static let maximumDateCount = 1_000

    init(
        start: TriggerStart, repeatRule: RepeatRule?, recurrenceRule: RecurrenceRule?,
        recurrenceDates: [RecurrenceDateTime], exceptionDates: [RecurrenceDateTime], monthEnd: MonthEndPolicy
    ) throws(ValidationError) {
        let anchor: LocalDateTime
        let clock: WallClock
        switch start {
        case .instant(let date):
            let reference = date.timeIntervalSinceReferenceDate
            let wholeSeconds = reference.rounded(.down)
            guard RFC3339.isSupported(date) else {
                throw ValidationError(.invalidArgument, field: "trigger.at", "the start is outside years 0001–9999")
            }
            anchor = LocalDateTime(secondsSinceEpochAsIfUTC: Int(wholeSeconds) + CivilCalendar.unixToReferenceDate)
            clock = WallClock(zone: nil, fraction: reference - wholeSeconds)
            firstInstant = date
        case .wallClock(let local, let zoneIdentifier):
            if let problem = local.rangeViolation {
                throw ValidationError(.invalidArgument, field: "trigger.at", "\(local) does not exist: \(problem)")
            }
            clock = WallClock(zone: try ZoneRules.zone(named: zoneIdentifier), fraction: 0)
            anchor = local
            firstInstant = clock.instant(ofWall: local.secondsSinceEpochAsIfUTC)
            // 9999-12-31T23:00 in Los Angeles is 10000-01-01 in UTC, which no instant shows.
            guard RFC3339.isSupported(firstInstant) else {
                throw ValidationError(
                    .invalidArgument, field: "trigger.at",
                    "\(local) in \(zoneIdentifier) is outside years 0001–9999 in UTC")
            }
        }
        self.start = start
        self.rule = repeatRule
        self.recurrenceRule = recurrenceRule
        self.recurrenceDates = recurrenceDates
        self.exceptionDates = exceptionDates
        self.monthEnd = monthEnd

        if let recurrenceRule {
            try recurrenceRule.validate()
            try Self.checkReachable(recurrenceRule, from: anchor, monthEnd: monthEnd)
            // RFC 5545 §3.3.10 makes UNTIL the bound of the set; one before the start leaves
            // nothing after it, which is a mistake rather than a one-off reminder.
            if let until = recurrenceRule.until {
                let isBeforeStart: Bool
                switch until {
                case .instant(let date): isBeforeStart = date < firstInstant
                case .local(let local): isBeforeStart = local.secondsSinceEpochAsIfUTC < anchor.secondsSinceEpochAsIfUTC
                }
                if isBeforeStart {
                    throw RecurrenceRule.invalid("UNTIL \(until) is before the start \(anchor): the rule can never fire")
                }
            }
            series = Self.makeSeries(recurrenceRule, anchor: anchor, clock: clock, monthEnd: monthEnd)
            if case .calendar(let calendar) = series, !recurrenceRule.setPositions.isEmpty {
                let most = calendar.expansion.maximumCandidatesPerPeriod
                guard recurrenceRule.setPositions.contains(where: { abs($0) <= most }) else {
                    throw RecurrenceRule.invalid(
                        "BYSETPOS can never match: a \(recurrenceRule.frequency.rawValue) period of this rule holds at most \(most) instance(s)"
                    )
                }
            }
        } else {
            series = .single
        }
        let added = try Self.instants(of: recurrenceDates, field: "trigger.rdates", clock: clock)
        addedInstants = Array(Set(added)).sorted()
        excludedMilliseconds = Set(
            try Self.instants(of: exceptionDates, field: "trigger.exdates", clock: clock).map(Self.milliseconds))
        indexOrigin = min(firstInstant, addedInstants.first ?? firstInstant)
        indexing = addedInstants.isEmpty && !(recurrenceRule?.hasSelectors ?? false) ? .steps : .milliseconds
    }

    static func milliseconds(_ instant: Date) -> Int64 {
        Int64((instant.timeIntervalSinceReferenceDate * 1000).rounded())
    }

    private static func makeSeries(
        _ rule: RecurrenceRule, anchor: LocalDateTime, clock: WallClock, monthEnd: MonthEndPolicy
    ) -> Series {
        let firstInstant = clock.instant(ofWall: anchor.secondsSinceEpochAsIfUTC)
        if !rule.hasSelectors, rule.frequency == .minutely || rule.frequency == .hourly {
            let stepSeconds = rule.interval * (rule.frequency == .minutely ? 60 : 3600)
            var lastStep: Int?
            if let count = rule.count { lastStep = count - 1 }
            if let until = rule.until {
                let untilInstant: Date
                switch until {
                case .instant(let date): untilInstant = date
                case .local(let local): untilInstant = clock.instant(ofWall: local.secondsSinceEpochAsIfUTC)
                }
                let steps = (untilInstant.timeIntervalSince(firstInstant) / Double(stepSeconds)).rounded(.down)
                lastStep = Int(max(0, min(steps, 1e15)))
            }
            return .elapsed(ElapsedSeries(firstInstant: firstInstant, stepSeconds: stepSeconds, lastStep: lastStep))
        }
        let expansion = RuleExpansion(rule: rule, start: anchor, monthEnd: monthEnd)
        return .calendar(CalendarSeries(expansion: expansion, clock: clock, rule: rule))
    }

    /// Refuses rules whose BYxxx parts can never select anything, which would otherwise
    /// be searched for until year 9999.
    private static func checkReachable(_ rule: RecurrenceRule, from anchor: LocalDateTime, monthEnd: MonthEndPolicy)
        throws(ValidationError)
    {
        guard Self.stepsReachSelectedValues(rule, from: anchor) else {
            throw RecurrenceRule.invalid(
                "no instance can ever match: stepping \(rule.interval) period(s) at a time from \(anchor) never reaches the BYMONTH, BYDAY, BYHOUR or BYMINUTE values"
            )
        }
        let months = Set(rule.months)
        if !months.isEmpty, !rule.daysOfTheYear.isEmpty, months.isDisjoint(with: rule.monthsReachedByYearDays) {
            throw RecurrenceRule.invalid(
                "BYYEARDAY=\(rule.daysOfTheYear.map(String.init).joined(separator: ",")) never falls in BYMONTH=\(rule.months.map(String.init).joined(separator: ","))"
            )
        }
        if !months.isEmpty, !rule.weekNumbers.isEmpty, months.isDisjoint(with: rule.monthsReachedByWeekNumbers) {
            throw RecurrenceRule.invalid(
                "BYWEEKNO=\(rule.weekNumbers.map(String.init).joined(separator: ",")) never falls in BYMONTH=\(rule.months.map(String.init).joined(separator: ","))"
            )
        }
        if !rule.months.isEmpty, !rule.daysOfTheMonth.isEmpty, monthEnd == .skip {
            let longest = rule.months.map { CivilCalendar.daysInMonth($0, year: 2000) }.max() ?? 31
            guard rule.daysOfTheMonth.contains(where: { abs($0) <= longest }) else {
                throw RecurrenceRule.invalid(
                    "BYMONTHDAY=\(rule.daysOfTheMonth.map(String.init).joined(separator: ",")) never falls in BYMONTH=\(rule.months.map(String.init).joined(separator: ","))"
                )
            }
        }
    }

    /// Whether stepping INTERVAL periods from the start reaches a selected value of a
    /// cyclic field: steps reach the start's position in a cycle of `L` units plus multiples
    /// of gcd(INTERVAL, L) (the minute or hour of the week, the weekday, the month).
    private static func stepsReachSelectedValues(_ rule: RecurrenceRule, from anchor: LocalDateTime) -> Bool {
        let weekdays = Set(rule.weekdays.filter { $0.ordinal == nil }.map(\.weekday.rawValue))
        switch rule.frequency {
        case .minutely, .hourly:
            guard !rule.hours.isEmpty || !rule.minutes.isEmpty || !weekdays.isEmpty else { return true }
            let unitSeconds = rule.frequency == .minutely ? 60 : 3600
            let cycle = 7 * CivilCalendar.secondsPerDay / unitSeconds
            let startOfWeek = (anchor.weekday.rawValue - 1) * CivilCalendar.secondsPerDay
                + anchor.hour * 3600 + anchor.minute * 60
            return reachedPositions(start: startOfWeek / unitSeconds, interval: rule.interval, cycle: cycle).contains {
                let secondOfWeek = $0 * unitSeconds
                let secondOfDay = secondOfWeek % CivilCalendar.secondsPerDay
                let minute = rule.frequency == .minutely ? secondOfDay % 3600 / 60 : anchor.minute
                return (rule.hours.isEmpty || rule.hours.contains(secondOfDay / 3600))
                    && (rule.minutes.isEmpty || rule.frequency == .hourly || rule.minutes.contains(minute))
                    && (weekdays.isEmpty || weekdays.contains(secondOfWeek / CivilCalendar.secondsPerDay + 1))
            }
        case .daily:
            return weekdays.isEmpty
                || reachedPositions(start: anchor.weekday.rawValue - 1, interval: rule.interval, cycle: 7).contains {
                    weekdays.contains($0 + 1)
                }
        case .monthly:
            return rule.months.isEmpty
                || reachedPositions(start: anchor.month - 1, interval: rule.interval, cycle: 12).contains {
                    rule.months.contains($0 + 1)
                }
        case .weekly, .yearly:
            return true
        }
    }

    private static func reachedPositions(start: Int, interval: Int, cycle: Int) -> [Int] {
        let stride = greatestCommonDivisor(interval, cycle)
        return (0..<cycle / stride).map { (start + $0 * stride) % cycle }
    }

    private static func greatestCommonDivisor(_ a: Int, _ b: Int) -> Int {
        b == 0 ? a : greatestCommonDivisor(b, a % b)
    }

    private static func instants(of values: [RecurrenceDateTime], field: String, clock: WallClock)
        throws(ValidationError) -> [Date]
    {
        guard values.count <= maximumDateCount else {
            throw ValidationError(
                .invalidArgument, field: field, "at most \(maximumDateCount) dates are allowed, not \(values.count)")
        }
        var instants: [Date] = []
        for value in values {
            switch value {
            case .instant(let date):
                guard RFC3339.isSupported(date) else {
                    throw ValidationError(.invalidArgument, field: field, "\(value) is outside years 0001–9999")
                }
                instants.append(date)
            case .local(let local):
                if let problem = local.rangeViolation {
                    throw ValidationError(.invalidArgument, field: field, "\(local) does not exist: \(problem)")
                }
                let instant = clock.instant(ofWall: local.secondsSinceEpochAsIfUTC)
                guard RFC3339.isSupported(instant) else {
                    throw ValidationError(.invalidArgument, field: field, "\(local) is outside years 0001–9999 in UTC")
                }
                instants.append(instant)
            }
        }
        return instants
    }
}
