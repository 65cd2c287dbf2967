import Foundation

/// How wall-clock seconds become instants for one recurrence: through an IANA zone, or on
/// UTC fields carrying the start's sub-second fraction.
struct WallClock: Sendable {
    let zone: TimeZone?
    /// The sub-second part of an instant start, carried by every calendar step.
    let fraction: Double

    func instant(ofWall seconds: Int) -> Date {
        guard let zone else {
            return Date(timeIntervalSinceReferenceDate: Double(seconds - CivilCalendar.unixToReferenceDate) + fraction)
        }
        let unixSeconds = ZoneRules.resolve(wallSeconds: seconds, in: zone)
        return Date(timeIntervalSinceReferenceDate: Double(unixSeconds - CivilCalendar.unixToReferenceDate))
    }

    /// The wall-clock second showing at `instant`, rounded down.
    func wallSeconds(at instant: Date) -> Int {
        let unixSeconds = Int(instant.timeIntervalSinceReferenceDate.rounded(.down)) + CivilCalendar.unixToReferenceDate
        guard let zone else { return unixSeconds }
        return unixSeconds + ZoneRules.offset(of: zone, atUnixSeconds: unixSeconds)
    }

    /// How far before the wall-clock time at `instant` a wall-clock time can lie that
    /// resolves at or after `instant`: the length of a gap (spring forward) in the 26 hours
    /// before it, else 0. Gap times are shifted forward by the gap's length (RFC 5545 §3.3.5).
    func gapMargin(before instant: Date) -> Int {
        guard let zone else { return 0 }
        let unixSeconds = Int(instant.timeIntervalSinceReferenceDate.rounded(.down)) + CivilCalendar.unixToReferenceDate
        let now = ZoneRules.offset(of: zone, atUnixSeconds: unixSeconds)
        let earlier = ZoneRules.offset(of: zone, atUnixSeconds: unixSeconds - 26 * 3600)
        return max(0, now - earlier)
    }
}

/// The instances of an RRULE on elapsed time: a MINUTELY or HOURLY rule with no BYxxx
/// part, instance `k` firing `k × INTERVAL × 60` (or 3600) seconds after the start.
struct ElapsedSeries: Sendable {
    let firstInstant: Date
    let stepSeconds: Int
    /// The last step `COUNT` or `UNTIL` allows; `nil` when unbounded.
    let lastStep: Int?

    /// The first step firing at or after (`inclusive`) or after `instant`.
    func first(from instant: Date, inclusive: Bool) -> (step: Int, instant: Date)? {
        let elapsed = instant.timeIntervalSince(firstInstant)
        let estimate = max(0, (elapsed / Double(stepSeconds)).rounded(.up))
        guard estimate < 1e15 else { return nil }
        var step = Int(estimate)
        while true {
            let (seconds, overflow) = step.multipliedReportingOverflow(by: stepSeconds)
            guard !overflow else { return nil }
            let candidate = firstInstant.addingTimeInterval(Double(seconds))
            if inclusive ? candidate < instant : candidate <= instant {
                step += 1
                continue
            }
            if let lastStep, step > lastStep { return nil }
            return candidate > Recurrence.lastSupportedInstant ? nil : (step, candidate)
        }
    }
}

/// The instances of an RRULE on wall-clock time: candidates from ``RuleExpansion``, the start
/// always first, bounded by `COUNT` or `UNTIL`, resolved in the zone, and an instance
/// dropped when it does not fire after every earlier one (two wall-clock times that
/// resolve to one instant fire once).
struct CalendarSeries: Sendable {
    let expansion: RuleExpansion
    let clock: WallClock
    let firstInstant: Date
    /// The last wall-clock second an instance may have (`COUNT`, or a local `UNTIL`).
    private(set) var lastWall: Int?
    /// A UTC `UNTIL`: instances firing after it are left out.
    let untilInstant: Date?
    /// Past this wall-clock second every candidate fires after `untilInstant`.
    let untilStopWall: Int

    init(expansion: RuleExpansion, clock: WallClock, rule: RecurrenceRule) {
        self.expansion = expansion
        self.clock = clock
        firstInstant = clock.instant(ofWall: expansion.startSeconds)
        switch rule.until {
        case .instant(let until):
            untilInstant = until
            untilStopWall = clock.wallSeconds(at: until) + 2 * CivilCalendar.secondsPerDay
        case .local(let local):
            untilInstant = nil
            untilStopWall = .max
            lastWall = local.secondsSinceEpochAsIfUTC
        case nil:
            untilInstant = nil
            untilStopWall = .max
        }
        if let count = rule.count {
            // RFC 5545 §3.3.10: COUNT counts the rule's instances, the start being the first.
            var seen = 0
            var last: Int?
            forEachCandidate(fromWall: expansion.startSeconds) { _, wall in
                seen += 1
                last = wall
                return seen < count
            }
            lastWall = seen == count ? last : nil
        }
    }

    /// Calls `body` with the period and wall-clock second of each candidate at or after
    /// `fromWall`, in order, the start inserted into period 0; stops when `body` returns
    /// `false` or the periods pass 9999-12-31.
    func forEachCandidate(fromWall: Int, _ body: (_ period: Int, _ wall: Int) -> Bool) {
        let startSeconds = expansion.startSeconds
        let lowest = max(fromWall, startSeconds)
        var period = expansion.period(containing: lowest)
        var candidates: [Int] = []
        while true {
            candidates.removeAll(keepingCapacity: true)
            guard case .next(let next) = expansion.appendCandidates(ofPeriod: period, to: &candidates) else { return }
            if period == 0 && !candidates.contains(startSeconds) {
                candidates.append(startSeconds)
                candidates.sort()
            }
            for wall in candidates where wall >= lowest {
                guard body(period, wall) else { return }
            }
            period = next
        }
    }

    /// The first instance firing at or after (`inclusive`) or after `instant`, with its
    /// period; `nil` also when there is none by `notAfter` (which then bounds the search).
    func first(from instant: Date, inclusive: Bool, notAfter: Date? = nil) -> (period: Int, instant: Date)? {
        var found: (period: Int, instant: Date)?
        visitInstances(from: instant, inclusive: inclusive, notAfter: notAfter) { period, candidate in
            found = (period, candidate)
            return false
        }
        return found
    }

    /// Calls `visit` with each instance firing at or after (`inclusive`) or after `instant`,
    /// in order, until it returns `false`, the rule ends, or the candidates pass `notAfter`
    /// by more than any gap can shift them.
    func visitInstances(
        from instant: Date, inclusive: Bool, notAfter: Date?, _ visit: (_ period: Int, _ instant: Date) -> Bool
    ) {
        let startSeconds = expansion.startSeconds
        // Wall-clock times more than a day past `notAfter`'s resolve after it.
        let stopWall = notAfter.map { clock.wallSeconds(at: $0) + 2 * CivilCalendar.secondsPerDay } ?? .max
        let fromWall =
            instant <= firstInstant ? startSeconds : clock.wallSeconds(at: instant) - clock.gapMargin(before: instant)
        var latest: Date?
        forEachCandidate(fromWall: fromWall) { period, wall in
            let isStart = wall == startSeconds
            if wall > stopWall { return false }
            if !isStart, let lastWall, wall > lastWall { return false }
            let candidate = clock.instant(ofWall: wall)
            if !isStart, let untilInstant, candidate > untilInstant { return wall <= untilStopWall }
            if let latest, candidate <= latest { return true }
            latest = candidate
            guard inclusive ? candidate >= instant : candidate > instant else { return true }
            return visit(period, candidate)
        }
    }

    /// The instant of the first candidate of period `period` (for rules with one candidate
    /// per period), before bounds and de-duplication.
    func candidateInstant(ofPeriod period: Int) -> Date? {
        var candidates: [Int] = []
        guard case .next = expansion.appendCandidates(ofPeriod: period, to: &candidates) else { return nil }
        if period == 0 { return firstInstant }
        return candidates.first.map(clock.instant(ofWall:))
    }
}
