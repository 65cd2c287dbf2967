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
            guard wholeSeconds.isFinite, abs(wholeSeconds) < 4e11 else {
                throw ValidationError(.invalidArgument, field: "trigger.at", "the start is outside years 0000–9999")
            }
            anchor = LocalDateTime(secondsSinceEpochAsIfUTC: Int(wholeSeconds) + CivilCalendar.unixToReferenceDate)
            guard anchor.isValid else {
                throw ValidationError(.invalidArgument, field: "trigger.at", "the start is outside years 0000–9999")
            }
            clock = WallClock(zone: nil, fraction: reference - wholeSeconds)
            firstInstant = date
        case .wallClock(let local, let zoneIdentifier):
            if let problem = local.rangeViolation {
                throw ValidationError(.invalidArgument, field: "trigger.at", "\(local) does not exist: \(problem)")
            }
            clock = WallClock(zone: try ZoneRules.zone(named: zoneIdentifier), fraction: 0)
            anchor = local
            firstInstant = clock.instant(ofWall: local.secondsSinceEpochAsIfUTC)
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
            series = Self.makeSeries(recurrenceRule, anchor: anchor, clock: clock, monthEnd: monthEnd)
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
        if rule.frequency == .hourly || rule.frequency == .minutely, !rule.hours.isEmpty || !rule.minutes.isEmpty {
            // Steps of INTERVAL units reach the start's minute (or hour) of the day plus
            // multiples of gcd(INTERVAL, units per day).
            let unitsPerDay = rule.frequency == .hourly ? 24 : 1440
            let stride = greatestCommonDivisor(rule.interval, unitsPerDay)
            let startUnit = rule.frequency == .hourly ? anchor.hour : anchor.hour * 60 + anchor.minute
            let reachable = (0..<unitsPerDay / stride).map { (startUnit + $0 * stride) % unitsPerDay }
            let matches = reachable.contains { unit in
                let (hour, minute) = rule.frequency == .hourly ? (unit, anchor.minute) : (unit / 60, unit % 60)
                return (rule.hours.isEmpty || rule.hours.contains(hour))
                    && (rule.frequency == .hourly || rule.minutes.isEmpty || rule.minutes.contains(minute))
            }
            guard matches else {
                throw RecurrenceRule.invalid(
                    "the BYHOUR/BYMINUTE values are never reached stepping \(rule.interval) \(rule.frequency == .hourly ? "hour" : "minute")(s) from \(anchor)"
                )
            }
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
                guard date.timeIntervalSinceReferenceDate.isFinite, date <= lastSupportedInstant else {
                    throw ValidationError(.invalidArgument, field: field, "\(value) is outside years 0000–9999")
                }
                instants.append(date)
            case .local(let local):
                if let problem = local.rangeViolation {
                    throw ValidationError(.invalidArgument, field: field, "\(local) does not exist: \(problem)")
                }
                instants.append(clock.instant(ofWall: local.secondsSinceEpochAsIfUTC))
            }
        }
        return instants
    }
}
