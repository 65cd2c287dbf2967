import Foundation

/// Where a trigger's occurrence sequence starts.
public enum TriggerStart: Hashable, Sendable {
    /// An absolute instant (UTC); calendar repeats then run on UTC fields.
    case instant(Date)
    /// A wall-clock time in an IANA zone (`Europe/Berlin`); repeats keep the local time.
    case wallClock(LocalDateTime, zoneIdentifier: String)
}

/// One occurrence of a trigger: its position in the sequence and when it fires.
public struct Occurrence: Hashable, Sendable {
    /// The step number from the start: occurrence `k` is the start plus `k × interval`
    /// units. Indices whose day does not exist are skipped, so indices can have holes.
    public var index: Int
    /// When it fires (UTC).
    public var instant: Date

    /// Creates an occurrence.
    public init(index: Int, instant: Date) {
        self.index = index
        self.instant = instant
    }
}

/// The occurrence instants of a trigger, computed on demand from the start and the rule.
///
/// Semantics, after RFC 5545 §3.3.10 (RRULE) and §3.3.5 (local times):
/// - no rule: one occurrence, index 0;
/// - `minute`/`hour`: index k fires k × interval × 60 s (or 3600 s) of elapsed time after
///   the first instant, for both start kinds, so spacing holds across DST and both copies of
///   a repeated hour fire;
/// - `day`/`week`/`month`/`year` from an `.instant`: k × interval units are added to the
///   instant's UTC fields (sub-seconds kept);
/// - `day`/`week`/`month`/`year` from a `.wallClock`: k × interval units are added to the
///   original local date-time — never step by step, so Jan 31 monthly gives Mar 31, May 31
///   and skips months without a 31st — then resolved in the zone with
///   ``ZoneRules/resolve(_:in:)`` (a daily 09:00 stays 09:00 local across DST; 02:30 on a
///   spring-forward day fires at 03:30);
/// - an index whose local date does not exist (Feb 29 in a common year) is skipped, and an
///   index resolving to the same instant as the index before it is skipped, so nothing
///   fires twice at one instant.
/// The sequence ends at 9999-12-31.
public struct Recurrence: Sendable {
    /// Where the sequence starts.
    public let start: TriggerStart
    /// How it repeats; `nil` for a one-shot.
    public let rule: RepeatRule?
    /// Occurrence 0 (UTC).
    public let firstInstant: Date

    /// The zone calendar steps resolve in; `nil` for UTC field arithmetic.
    private let zone: TimeZone?
    /// The fields calendar steps add to: the wall-clock start, or the UTC fields of an instant.
    private let anchor: LocalDateTime
    /// The sub-second part of an instant start, carried by calendar steps.
    private let anchorFraction: Double

    /// Builds the sequence, checking the rule, the wall-clock time and the zone.
    /// - Throws: `ValidationError` `.unknownTimeZone` (field `trigger.timeZone`) for a zone
    ///   that is not IANA; `.invalidArgument` for a rule with interval < 1 (field
    ///   `trigger.repeat.interval`) or a start outside years 0000–9999 (field `trigger.at`).
    public init(start: TriggerStart, rule: RepeatRule?) throws(ValidationError) {
        try rule?.validate()
        self.start = start
        self.rule = rule
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
            anchorFraction = reference - wholeSeconds
            zone = nil
            firstInstant = date
        case .wallClock(let local, let zoneIdentifier):
            if let problem = local.rangeViolation {
                throw ValidationError(.invalidArgument, field: "trigger.at", "\(local) does not exist: \(problem)")
            }
            let zone = try ZoneRules.zone(named: zoneIdentifier)
            self.zone = zone
            anchor = local
            anchorFraction = 0
            firstInstant = ZoneRules.resolve(local, in: zone)
        }
    }

    /// The instant of occurrence `index` (UTC); `nil` when the index is negative, past the
    /// end, its day does not exist, or it repeats the previous index's instant.
    public func occurrence(at index: Int) -> Date? {
        guard index >= 0, case .instant(let instant) = slot(at: index), !isRepeat(instant, at: index) else {
            return nil
        }
        return instant
    }

    /// The first occurrence with index ≥ `fromIndex` firing at or after `instant`; `nil`
    /// when the sequence has ended.
    ///
    /// Costs O(1) resolutions however far `instant` is from the start: the index is
    /// estimated from the elapsed time and the unit's nominal length, then corrected by a
    /// few steps either way.
    public func firstOccurrence(onOrAfter instant: Date, fromIndex: Int = 0) -> Occurrence? {
        let lowestIndex = max(fromIndex, 0)
        guard instant <= Self.lastSupportedInstant else { return nil }
        var index = max(lowestIndex, estimatedIndex(near: instant))
        // Walk back over an overshoot; instants never decrease with the index.
        var earlier = index - 1
        walkingBack: while earlier >= lowestIndex {
            switch slot(at: earlier) {
            case .instant(let candidate) where candidate < instant:
                break walkingBack
            case .instant, .end:
                index = earlier
            case .skipped:
                break
            }
            earlier -= 1
        }
        return scanForward(from: index) { $0 >= instant }
    }

    /// The occurrence after `occurrence`, or `nil` when the sequence has ended.
    public func nextOccurrence(after occurrence: Occurrence) -> Occurrence? {
        scanForward(from: occurrence.index + 1) { $0 > occurrence.instant }
    }

    private enum Slot {
        case instant(Date)
        /// The local date of this index does not exist (Jan 31 + 1 month).
        case skipped
        /// Past 9999-12-31 or past the one occurrence of a one-shot.
        case end
    }

    private static let lastSupportedInstant = Date(
        timeIntervalSinceReferenceDate: Double(253_402_300_799 - CivilCalendar.unixToReferenceDate))

    private func scanForward(from firstIndex: Int, where isWanted: (Date) -> Bool) -> Occurrence? {
        var index = firstIndex
        while true {
            switch slot(at: index) {
            case .end:
                return nil
            case .instant(let instant) where isWanted(instant) && !isRepeat(instant, at: index):
                return Occurrence(index: index, instant: instant)
            case .instant, .skipped:
                index += 1
            }
        }
    }

    /// Whether index `index - 1` already fires at `instant` (a zone skipping a whole day
    /// maps two local days to one instant).
    private func isRepeat(_ instant: Date, at index: Int) -> Bool {
        guard zone != nil, index > 0, case .instant(let previous) = slot(at: index - 1) else { return false }
        return previous >= instant
    }

    /// An index at or below the first one firing at or after `instant`, give or take the
    /// few steps that month lengths and zone offsets shift it.
    private func estimatedIndex(near instant: Date) -> Int {
        guard let rule else { return 0 }
        let elapsed = instant.timeIntervalSince(firstInstant)
        let steps = (elapsed / (Double(rule.interval) * rule.unit.nominalSeconds)).rounded(.down) - 2
        return steps > 0 ? Int(min(steps, 1e15)) : 0
    }

    private func slot(at index: Int) -> Slot {
        guard let rule else { return index == 0 ? .instant(firstInstant) : .end }
        let (unitCount, overflow) = index.multipliedReportingOverflow(by: rule.interval)
        guard !overflow else { return .end }
        switch rule.unit {
        case .minute, .hour:
            let (seconds, overflow) = unitCount.multipliedReportingOverflow(by: Int(rule.unit.nominalSeconds))
            let instant = firstInstant.addingTimeInterval(Double(seconds))
            return overflow || instant > Self.lastSupportedInstant ? .end : .instant(instant)
        case .day, .week:
            let (days, overflow) = unitCount.multipliedReportingOverflow(by: rule.unit == .week ? 7 : 1)
            guard !overflow, let local = anchor.adding(days: days) else { return .end }
            return .instant(instant(of: local))
        case .month, .year:
            let (months, overflow) = unitCount.multipliedReportingOverflow(by: rule.unit == .year ? 12 : 1)
            guard !overflow, months <= 12 * 10_000 else { return .end }
            let targetYear = anchor.year + CivilCalendar.floorDivide(anchor.month - 1 + months, 12)
            guard targetYear <= CivilCalendar.supportedYears.upperBound else { return .end }
            guard let local = anchor.adding(months: months) else { return .skipped }
            return .instant(instant(of: local))
        }
    }

    private func instant(of local: LocalDateTime) -> Date {
        if let zone { return ZoneRules.resolve(local, in: zone) }
        let unixSeconds = local.secondsSinceEpochAsIfUTC
        return Date(
            timeIntervalSinceReferenceDate: Double(unixSeconds - CivilCalendar.unixToReferenceDate) + anchorFraction)
    }
}
