import Foundation

/// When a VALARM fires, relative to its component (RFC 5545 §3.8.6.3).
enum AlarmTiming: Hashable, Sendable {
    /// Signed seconds from the start (or, with `toEnd`, from the end): `-PT15M` is −900.
    case relative(seconds: Double, toEnd: Bool)
    /// An absolute instant (`TRIGGER;VALUE=DATE-TIME:20260101T090000Z`).
    case absolute(Date)

    /// The most repetitions of one alarm Chime imports.
    static let maximumRepetitions = 100

    /// The alarm's first timing followed by one per `REPEAT`, `DURATION` apart (§3.8.6.2).
    static func parse(_ valarm: ICalendarComponent, zones: ICalendarZones) throws(ImportProblem) -> [AlarmTiming] {
        guard let trigger = valarm.property("TRIGGER") else { throw ImportProblem("a VALARM has no TRIGGER") }
        let value = trigger.value.trimmingCharacters(in: .whitespaces)
        let first: AlarmTiming
        if trigger.parameter("VALUE")?.uppercased() == "DATE-TIME" || !value.uppercased().contains("P") {
            first = .absolute(try zones.time(value, tzid: trigger.parameter("TZID")).instant)
        } else {
            do {
                first = .relative(
                    seconds: try ICalendarDuration.parseSeconds(value),
                    toEnd: trigger.parameter("RELATED")?.uppercased() == "END")
            } catch {
                throw ImportProblem("TRIGGER: \(error.message)")
            }
        }
        let repetitions = valarm.property("REPEAT").flatMap { Int($0.value.trimmingCharacters(in: .whitespaces)) } ?? 0
        guard repetitions > 0, let spacing = valarm.property("DURATION") else { return [first] }
        guard repetitions <= maximumRepetitions else {
            throw ImportProblem("a VALARM repeats \(repetitions) times; at most \(maximumRepetitions) are imported")
        }
        let step: Double
        do {
            step = try ICalendarDuration.parseSeconds(spacing.value)
        } catch {
            throw ImportProblem("VALARM DURATION: \(error.message)")
        }
        return [first] + (1...repetitions).map { repetition in
            let moved = Double(repetition) * step
            switch first {
            case .relative(let seconds, let toEnd): return .relative(seconds: seconds + moved, toEnd: toEnd)
            case .absolute(let date): return .absolute(date.addingTimeInterval(moved))
            }
        }
    }
}

/// The timing of one VEVENT or VTODO: start, length and recurrence set.
struct EventTiming {
    /// DTSTART (for a VTODO without one, DUE).
    var start: ICalendarTime
    /// Seconds from start to DTEND, DUE or start + DURATION (a day for a date without end).
    var durationSeconds: Double
    var rule: RecurrenceRule?
    var addedInstants: [Date]
    var excludedInstants: [Date]

    /// - Parameters:
    ///   - isOverride: a RECURRENCE-ID instance, whose own RRULE, RDATE and EXDATE are ignored.
    ///   - excluded: instants replaced by overrides.
    init(_ component: ICalendarComponent, zones: ICalendarZones, isOverride: Bool, excluded: [Date]) throws(ImportProblem) {
        guard let startProperty = component.property("DTSTART") ?? component.property("DUE") else {
            throw ImportProblem("\(component.name) has no DTSTART\(component.name == "VTODO" ? " or DUE" : "")")
        }
        guard let start = try zones.times(of: startProperty).first else { throw ImportProblem("empty DTSTART") }
        self.start = start
        let startInstant = start.instant
        if let end = component.property("DTEND") ?? component.property("DUE"), end.name != startProperty.name,
            let endTime = try zones.times(of: end).first
        {
            durationSeconds = endTime.instant.timeIntervalSince(startInstant)
        } else if let duration = component.property("DURATION") {
            do {
                durationSeconds = try ICalendarDuration.parseSeconds(duration.value)
            } catch {
                throw ImportProblem("DURATION: \(error.message)")
            }
        } else {
            durationSeconds = start.isDate ? 86_400 : 0
        }
        excludedInstants = excluded
        addedInstants = []
        guard !isOverride else { return }
        if start.isByOwnRules, !component.properties(named: "RRULE").isEmpty || !component.properties(named: "RDATE").isEmpty {
            throw ImportProblem(
                "a repeating event in a time zone known only by its VTIMEZONE rules (no IANA zone agrees with them) is not supported")
        }
        // An empty RRULE (some exporters write `RRULE:` for "no repeat") means no rule.
        let rules = component.properties(named: "RRULE").filter { !$0.value.trimmingCharacters(in: .whitespaces).isEmpty }
        guard rules.count <= 1 else { throw ImportProblem("more than one RRULE (deprecated by RFC 5545) is not supported") }
        if let text = rules.first?.value {
            do {
                rule = try RecurrenceRule(parsing: text.trimmingCharacters(in: .whitespaces))
            } catch {
                throw ImportProblem("RRULE: \(error.message)")
            }
        }
        for property in component.properties(named: "RDATE") {
            addedInstants += try zones.times(of: property).map(\.instant)
        }
        var excludedDays: [ICalendarTime] = []
        for property in component.properties(named: "EXDATE") {
            for time in try zones.times(of: property) {
                if time.isDate && !start.isDate {
                    excludedDays.append(time)
                } else {
                    excludedInstants.append(time.instant)
                }
            }
        }
        excludedInstants += try occurrences(onDays: excludedDays)
    }

    /// The instants of this series that fall on the DATE values `days` (`EXDATE;VALUE=DATE`
    /// on timed events): RFC 5545 §3.8.5.1 matches a DATE against the occurrences' dates, so each
    /// day, from local midnight to the next, in the start's zone (a UTC or floating start: the
    /// zone the date was read in, `X-WR-TIMEZONE` or the import's default), excludes them all.
    private func occurrences(onDays days: [ICalendarTime]) throws(ImportProblem) -> [Date] {
        guard !days.isEmpty else { return [] }
        let recurrence: Recurrence
        do {
            recurrence = try Trigger(
                start: start.start, recurrenceRule: rule, recurrenceDates: addedInstants.map { .instant($0) },
                exceptionDates: excludedInstants.map { .instant($0) }
            ).makeRecurrence()
        } catch {
            throw ImportProblem(error.message)
        }
        var instants: [Date] = []
        for day in days {
            guard case .wallClock(let midnight, let dateZone) = day.start else { continue }
            var zoneIdentifier = dateZone
            if case .wallClock(_, let startZone) = start.start { zoneIdentifier = startZone }
            guard let zone = TimeZone(identifier: zoneIdentifier) else { continue }
            let nextMidnight = LocalDateTime(
                secondsSinceEpochAsIfUTC: midnight.secondsSinceEpochAsIfUTC + CivilCalendar.secondsPerDay)
            let from = ZoneRules.resolve(midnight, in: zone)
            let before = ZoneRules.resolve(nextMidnight, in: zone).addingTimeInterval(-0.001)
            instants += recurrence.occurrences(onOrAfter: from, through: before, limit: Self.maximumOccurrencesPerDay)
                .map(\.instant)
        }
        return instants
    }

    /// The most occurrences one excluded DATE removes (an `FREQ=SECONDLY` series has 86,400 a day).
    static let maximumOccurrencesPerDay = 1_440

    /// The Chime trigger firing at this alarm of every occurrence.
    func trigger(for timing: AlarmTiming) throws(ImportProblem) -> Trigger {
        let delta: Double
        switch timing {
        case .absolute(let date):
            return Trigger(start: .instant(date))
        case .relative(let seconds, let toEnd):
            delta = seconds + (toEnd ? durationSeconds : 0)
        }
        if delta <= 0 {
            return Trigger(
                start: start.start, recurrenceRule: rule, recurrenceDates: addedInstants.map { .instant($0) },
                exceptionDates: excludedInstants.map { .instant($0) }, offset: delta == 0 ? nil : -delta)
        }
        // Chime reminds only before an event, so an alarm after the start moves the series' start.
        let shift = Int(delta.rounded())
        let moved = start.shifted(by: shift)
        var movedRule = rule
        if var shiftedRule = rule {
            let pinsTime = !(shiftedRule.hours.isEmpty && shiftedRule.minutes.isEmpty && shiftedRule.seconds.isEmpty
                && shiftedRule.setPositions.isEmpty)
            let pinsDay = !(shiftedRule.weekdays.isEmpty && shiftedRule.daysOfTheMonth.isEmpty
                && shiftedRule.daysOfTheYear.isEmpty && shiftedRule.weekNumbers.isEmpty && shiftedRule.months.isEmpty)
            if pinsTime || (pinsDay && Self.day(of: moved) != Self.day(of: start)) {
                throw ImportProblem("an alarm after the start of an event whose RRULE picks days or times is not supported")
            }
            switch shiftedRule.until {
            case .instant(let date)?: shiftedRule.until = .instant(date.addingTimeInterval(Double(shift)))
            case .local(let local)?:
                shiftedRule.until = .local(LocalDateTime(secondsSinceEpochAsIfUTC: local.secondsSinceEpochAsIfUTC + shift))
            case nil: break
            }
            movedRule = shiftedRule
        }
        return Trigger(
            start: moved.start, recurrenceRule: movedRule,
            recurrenceDates: addedInstants.map { .instant($0.addingTimeInterval(Double(shift))) },
            exceptionDates: excludedInstants.map { .instant($0.addingTimeInterval(Double(shift))) })
    }

    private static func day(of time: ICalendarTime) -> LocalDateTime {
        var local: LocalDateTime
        switch time.start {
        case .instant(let date): local = LocalDateTime(secondsSinceEpochAsIfUTC: Int(date.timeIntervalSince1970.rounded(.down)))
        case .wallClock(let wall, _): local = wall
        }
        (local.hour, local.minute, local.second) = (0, 0, 0)
        return local
    }
}
