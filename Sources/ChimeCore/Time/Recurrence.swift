import Foundation

/// Where a trigger's occurrence sequence starts.
public enum TriggerStart: Hashable, Sendable {
    /// An absolute instant (UTC); calendar repeats then run on UTC fields.
    case instant(Date)
    /// A wall-clock time in an IANA zone (`Europe/Berlin`); repeats keep the local time.
    case wallClock(LocalDateTime, zoneIdentifier: String)
}

/// One occurrence of a trigger: its position in the sequence and when it fires.
public struct Occurrence: Hashable, Sendable, Codable {
    /// A number that grows with every occurrence of one recurrence (never reused, with
    /// holes), meaning one of two things (see ``Recurrence/indexing``):
    /// - for a plain repeat (a ``RepeatRule``, or an RRULE without BYxxx parts) and no
    ///   RDATE, the step: occurrence `k` is the start plus `k × INTERVAL` units, and steps
    ///   whose day does not exist or that repeat an instant are holes;
    /// - otherwise, the milliseconds from ``Recurrence/indexOrigin`` to this occurrence.
    public var index: Int
    /// When it fires (UTC).
    public var instant: Date

    /// Creates an occurrence.
    public init(index: Int, instant: Date) {
        self.index = index
        self.instant = instant
    }
}

/// The occurrence instants of a trigger, computed on demand: the recurrence set of RFC 5545
/// §3.8.5 built from a start (DTSTART), an optional RRULE (§3.3.10), RDATEs (§3.8.5.2) and
/// EXDATEs (§3.8.5.1).
///
/// Semantics:
/// - the start is always the first instance (§3.8.5.3), even when the rule would not
///   produce it, and `COUNT` counts it; RDATE instants are added, EXDATE instants removed,
///   and an instant produced twice fires once;
/// - DAILY and longer rules, and MINUTELY or HOURLY rules with a BYxxx part, are expanded
///   on the start's wall clock, then resolved with ``ZoneRules/resolve(_:in:)`` (a wall
///   time in a DST gap fires shifted by the gap's length, one in an overlap fires at its
///   first copy); an absolute start expands on its UTC fields, keeping sub-seconds;
/// - **deliberate difference from a pure wall-clock expansion** (RFC 5545, python-dateutil):
///   MINUTELY and HOURLY rules without BYxxx parts run on elapsed time, instance `k` firing
///   `k × INTERVAL` minutes or hours after the start, so their spacing holds across DST,
///   both copies of a repeated hour fire and nothing is lost in a gap;
/// - a wall-clock instance that does not fire after every earlier one (two wall times
///   resolving to one instant, or a gap time shifted past later ones) is dropped;
/// - a missing day (Feb 30, the 31st of a 30-day month) is skipped (§3.3.10), or moved to
///   the month's last day under ``MonthEndPolicy/clamp``;
/// - a UTC `UNTIL` is compared with each instant, a local one with each wall-clock time.
/// The sequence ends at 9999-12-31.
public struct Recurrence: Sendable {
    /// What ``Occurrence/index`` counts.
    public enum Indexing: Hashable, Sendable {
        /// Steps of a plain repeat: index `k` is the start plus `k × INTERVAL` units.
        case steps
        /// Milliseconds from ``Recurrence/indexOrigin``.
        case milliseconds
    }

    /// Where the sequence starts (DTSTART).
    public let start: TriggerStart
    /// The short-form repeat this recurrence was built from, if any.
    public let rule: RepeatRule?
    /// The RRULE in force: the given one, or the one a ``RepeatRule`` stands for.
    public let recurrenceRule: RecurrenceRule?
    /// Extra instances (RDATE).
    public let recurrenceDates: [RecurrenceDateTime]
    /// Removed instances (EXDATE).
    public let exceptionDates: [RecurrenceDateTime]
    /// What a rule does with a day its month lacks.
    public let monthEnd: MonthEndPolicy
    /// The start's instant (UTC), the first instance unless an EXDATE removes it.
    public let firstInstant: Date
    /// What ``Occurrence/index`` counts for this recurrence.
    public let indexing: Indexing
    /// The instant millisecond indices count from: the earlier of the start and the first
    /// RDATE.
    public let indexOrigin: Date

    enum Series: Sendable {
        case single
        case elapsed(ElapsedSeries)
        case calendar(CalendarSeries)
        /// Occurrences that are not an RFC 5545 rule's (the sun, another calendar scale, none).
        case custom(any OccurrenceSource)
    }

    let series: Series
    /// RDATE instants, ascending, without repeats.
    let addedInstants: [Date]
    /// EXDATE instants as whole milliseconds since the reference date.
    let excludedMilliseconds: Set<Int64>
    /// The exclusion calendars the lookups skip (`trigger.calendars`, in the recipient's zone);
    /// `nil` for none.
    public internal(set) var exclusion: OccurrenceExclusion?

    /// The last instant Chime schedules, 9999-12-31T23:59:59Z.
    static let lastSupportedInstant = Date(
        timeIntervalSinceReferenceDate: Double(253_402_300_799 - CivilCalendar.unixToReferenceDate))

    /// Builds the sequence of a start and a short-form repeat, which stands for the RRULE
    /// `FREQ=<unit>LY;INTERVAL=<interval>` (see ``RepeatRule/recurrenceRule``).
    /// - Throws: `ValidationError` `.unknownTimeZone` (field `trigger.timeZone`) for a zone
    ///   that is not IANA; `.invalidArgument` for a rule with interval < 1 (field
    ///   `trigger.repeat.interval`) or a start outside years 0000–9999 (field `trigger.at`).
    public init(start: TriggerStart, rule: RepeatRule?) throws(ValidationError) {
        try rule?.validate()
        try self.init(
            start: start, repeatRule: rule, recurrenceRule: rule?.recurrenceRule, recurrenceDates: [],
            exceptionDates: [], monthEnd: .skip)
    }

    /// Builds the recurrence set of RFC 5545 §3.8.5 from a start, an optional RRULE, RDATEs
    /// and EXDATEs.
    /// - Parameters:
    ///   - recurrenceDates: RDATE values; local ones are read in the start's zone (or as
    ///     UTC fields for an absolute start). At most 1,000.
    ///   - exceptionDates: EXDATE values, matched against instants to the millisecond. At
    ///     most 1,000.
    ///   - monthEnd: what the rule does with the 29th–31st in shorter months.
    /// - Throws: `ValidationError` `.unknownTimeZone` (field `trigger.timeZone`);
    ///   `.invalidArgument` with field `trigger.rrule` for a rule ``RecurrenceRule/validate()``
    ///   refuses or that can never match after the start (BYHOUR/BYMINUTE values a MINUTELY
    ///   or HOURLY interval never reaches, BYMONTHDAY days BYMONTH never has), field
    ///   `trigger.rdates` or `trigger.exdates` for too many or invalid dates, field
    ///   `trigger.at` for a start outside years 0000–9999.
    public init(
        start: TriggerStart, recurrenceRule: RecurrenceRule?, recurrenceDates: [RecurrenceDateTime] = [],
        exceptionDates: [RecurrenceDateTime] = [], monthEnd: MonthEndPolicy = .skip
    ) throws(ValidationError) {
        try self.init(
            start: start, repeatRule: nil, recurrenceRule: recurrenceRule, recurrenceDates: recurrenceDates,
            exceptionDates: exceptionDates, monthEnd: monthEnd)
    }

    /// The instant of the occurrence numbered `index` (UTC); `nil` when no occurrence has
    /// that index.
    public func occurrence(at index: Int) -> Date? {
        guard index >= 0, let probe = probeInstant(ofIndex: index) else { return nil }
        guard let found = occurrence(from: probe, inclusive: true), found.index == index else { return nil }
        return found.instant
    }

    /// The first occurrence with index ≥ `fromIndex` firing at or after `instant`; `nil`
    /// when the sequence has ended.
    ///
    /// Costs about one period of expansion however far `instant` is from the start: the
    /// period holding `instant` is computed, not walked to (elapsed-time rules compute the
    /// step directly).
    public func firstOccurrence(onOrAfter instant: Date, fromIndex: Int = 0) -> Occurrence? {
        guard instant <= Self.lastSupportedInstant else { return nil }
        var bound = instant
        if fromIndex > 0 {
            guard let lowest = lowerBound(ofIndex: fromIndex), lowest <= Self.lastSupportedInstant else { return nil }
            bound = max(bound, lowest)
        }
        var found = occurrence(from: bound, inclusive: true)
        while let candidate = found, candidate.index < fromIndex {
            found = occurrence(from: candidate.instant, inclusive: false)
        }
        return found
    }

    /// The occurrence after `occurrence`, or `nil` when the sequence has ended.
    public func nextOccurrence(after occurrence: Occurrence) -> Occurrence? {
        self.occurrence(from: occurrence.instant, inclusive: false)
    }

    /// Up to `limit` occurrences firing at or after `instant` and, when given, at or before
    /// `end`, in order (the listing of `chime preview`). With `end`, the search for a sparse
    /// rule stops a couple of days past it instead of running on towards year 9999.
    ///
    /// Walks the rule once, so listing `n` occurrences costs about one lookup plus the
    /// periods they span, not `n` lookups.
    public func occurrences(onOrAfter instant: Date, through end: Date? = nil, limit: Int) -> [Occurrence] {
        guard limit > 0 else { return [] }
        if exclusion != nil {
            // Exclusions can remove any number of rule instances: step, skipping them.
            var found: [Occurrence] = []
            var next = occurrence(from: instant, inclusive: true, notAfter: end)
            while let candidate = next, found.count < limit, end.map({ candidate.instant <= $0 }) ?? true {
                found.append(candidate)
                next = occurrence(from: candidate.instant, inclusive: false, notAfter: end)
            }
            return found
        }
        // Enough rule instances even if every EXDATE removes one of them.
        let wanted = limit + excludedMilliseconds.count
        var fromRule: [(step: Int?, instant: Date)] = []
        switch series {
        case .single:
            if firstInstant >= instant { fromRule.append((0, firstInstant)) }
        case .elapsed(let elapsed):
            var next = elapsed.first(from: instant, inclusive: true)
            while let (step, candidate) = next, fromRule.count < wanted, end.map({ candidate <= $0 }) ?? true {
                fromRule.append((step, candidate))
                next = elapsed.first(from: candidate, inclusive: false)
            }
        case .calendar(let calendar):
            calendar.visitInstances(from: instant, inclusive: true, notAfter: end) { period, candidate in
                fromRule.append((period, candidate))
                return fromRule.count < wanted
            }
        case .custom(let source):
            var next = source.first(from: instant, inclusive: true)
            while let (step, candidate) = next, fromRule.count < wanted, end.map({ candidate <= $0 }) ?? true {
                fromRule.append((step, candidate))
                next = source.first(from: candidate, inclusive: false)
            }
        }
        let added = addedInstants.drop { $0 < instant }.prefix(wanted).map { (step: Int?.none, instant: $0) }
        var merged = (fromRule + added).sorted { $0.instant < $1.instant }
        merged = zip(merged.indices, merged).filter { index, candidate in
            index == 0 || merged[index - 1].instant != candidate.instant
        }.map(\.1)
        return merged.lazy
            .filter { !self.excludedMilliseconds.contains(Self.milliseconds($0.instant)) }
            .filter { candidate in self.exclusion.map { $0.exclusion(at: candidate.instant) == nil } ?? true }
            .filter { candidate in end.map { candidate.instant <= $0 } ?? true }
            .filter { $0.instant <= Self.lastSupportedInstant }
            .prefix(limit)
            .map { self.makeOccurrence(step: $0.step, instant: $0.instant) }
    }
}
