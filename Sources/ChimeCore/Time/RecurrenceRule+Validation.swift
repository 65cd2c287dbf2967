/// The checks of RFC 5545 §3.3.10 on values and on which parts go with which `FREQ`.
extension RecurrenceRule {
    /// Checks every value's range and the combinations RFC 5545 §3.3.10 forbids.
    ///
    /// Refused: `INTERVAL` outside 1…``maximumInterval``; `COUNT` < 1 or above ``maximumCount``; `COUNT` with
    /// `UNTIL`; values outside `BYMONTH` 1–12, `BYWEEKNO` ±1–53, `BYYEARDAY` ±1–366,
    /// `BYMONTHDAY` ±1–31, `BYHOUR` 0–23, `BYMINUTE` 0–59, `BYSECOND` 0–59 (no leap second),
    /// `BYSETPOS` ±1–366, or zero where a sign is allowed; more than one `BYSECOND` value
    /// (instances under 60 s apart); `BYWEEKNO` unless YEARLY; `BYYEARDAY` with DAILY, WEEKLY
    /// or MONTHLY; `BYMONTHDAY` with WEEKLY; a `BYDAY` ordinal unless MONTHLY or YEARLY, with
    /// `BYWEEKNO`, or beyond ±5 when it counts within a month; `BYSETPOS` alone.
    /// - Throws: `ValidationError` `.invalidArgument` with field `trigger.rrule`.
    public func validate() throws(ValidationError) {
        guard interval >= 1 else { throw Self.invalid("INTERVAL must be at least 1, not \(interval)") }
        guard interval <= Self.maximumInterval else {
            throw Self.invalid("INTERVAL must be at most \(Self.maximumInterval), not \(interval)")
        }
        if let count {
            guard (1...Self.maximumCount).contains(count) else {
                throw Self.invalid("COUNT must be between 1 and \(Self.maximumCount), not \(count)")
            }
            guard until == nil else {
                throw Self.invalid("give COUNT or UNTIL, not both (RFC 5545 §3.3.10)")
            }
        }
        try Self.check(months, "BYMONTH", in: 1...12, signed: false)
        try Self.check(weekNumbers, "BYWEEKNO", in: 1...53, signed: true)
        try Self.check(daysOfTheYear, "BYYEARDAY", in: 1...366, signed: true)
        try Self.check(daysOfTheMonth, "BYMONTHDAY", in: 1...31, signed: true)
        try Self.check(hours, "BYHOUR", in: 0...23, signed: false)
        try Self.check(minutes, "BYMINUTE", in: 0...59, signed: false)
        try Self.check(seconds, "BYSECOND", in: 0...59, signed: false)
        try Self.check(setPositions, "BYSETPOS", in: 1...366, signed: true)
        if seconds.count > 1 {
            throw Self.invalid("BYSECOND takes one value: instances less than 60 s apart are not allowed")
        }
        if !weekNumbers.isEmpty && frequency != .yearly {
            throw Self.invalid("BYWEEKNO is only allowed with FREQ=YEARLY")
        }
        if !daysOfTheYear.isEmpty && [.daily, .weekly, .monthly].contains(frequency) {
            throw Self.invalid("BYYEARDAY is not allowed with FREQ=\(frequency.rawValue)")
        }
        if !daysOfTheMonth.isEmpty && frequency == .weekly {
            throw Self.invalid("BYMONTHDAY is not allowed with FREQ=WEEKLY")
        }
        try checkOrdinals()
        if !setPositions.isEmpty && !hasSelectorsOtherThanSetPositions {
            throw Self.invalid("BYSETPOS needs another BYxxx part to choose among, such as BYDAY")
        }
    }

    private var hasSelectorsOtherThanSetPositions: Bool {
        var withoutPositions = self
        withoutPositions.setPositions = []
        return withoutPositions.hasSelectors
    }

    private func checkOrdinals() throws(ValidationError) {
        for weekday in weekdays {
            guard let ordinal = weekday.ordinal else { continue }
            guard frequency == .monthly || frequency == .yearly else {
                throw Self.invalid("BYDAY=\(weekday) has an ordinal, which only MONTHLY and YEARLY rules allow")
            }
            guard weekNumbers.isEmpty else {
                throw Self.invalid("BYDAY=\(weekday) has an ordinal, which is not allowed with BYWEEKNO")
            }
            let countsWithinMonth = frequency == .monthly || !months.isEmpty
            let limit = countsWithinMonth ? 5 : 53
            guard ordinal != 0, abs(ordinal) <= limit else {
                let scope = countsWithinMonth ? "a month has at most 5 of each weekday" : "a year has at most 53"
                throw Self.invalid("BYDAY=\(weekday): the ordinal must be 1…\(limit) or -1…-\(limit) (\(scope))")
            }
        }
    }

    private static func check(_ values: [Int], _ part: String, in range: ClosedRange<Int>, signed: Bool)
        throws(ValidationError)
    {
        for value in values {
            // `magnitude`, not `abs`: a decoded `Int.min` must be refused, not trap.
            let magnitude = signed ? value.magnitude : UInt(bitPattern: value)
            guard magnitude >= UInt(range.lowerBound), magnitude <= UInt(range.upperBound) else {
                let allowed = signed
                    ? "\(range.lowerBound)…\(range.upperBound) or -\(range.lowerBound)…-\(range.upperBound)"
                    : "\(range.lowerBound)…\(range.upperBound)"
                throw invalid("\(part) value \(value) is out of range; use \(allowed)")
            }
        }
    }
}
