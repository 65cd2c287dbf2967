import Foundation

/// A sequence of occurrences that is not an RFC 5545 rule: the sun's daily moments
/// (``SolarTrigger``), a rule in another calendar scale (RFC 7529 `RSCALE`), or none at all
/// (a region trigger, which fires on crossings). Indexing is by step.
protocol OccurrenceSource: Sendable {
    /// The first occurrence at or after (`inclusive`) or after `instant`, with its step.
    func first(from instant: Date, inclusive: Bool) -> (step: Int, instant: Date)?
    /// An instant at or before every occurrence with step ≥ `index`; `nil` past the end.
    func lowerBound(ofIndex index: Int) -> Date?
    /// Where occurrence `index` would be if it exists.
    func probe(ofIndex index: Int) -> Date?
}

/// No occurrence ever: what a region trigger's time sequence is.
struct NoOccurrences: OccurrenceSource {
    func first(from instant: Date, inclusive: Bool) -> (step: Int, instant: Date)? { nil }
    func lowerBound(ofIndex index: Int) -> Date? { nil }
    func probe(ofIndex index: Int) -> Date? { nil }
}

extension Recurrence {
    /// A recurrence whose occurrences come from `source`, starting at `start`.
    init(source: any OccurrenceSource, start: TriggerStart, firstInstant: Date) {
        self.start = start
        rule = nil
        recurrenceRule = nil
        recurrenceDates = []
        exceptionDates = []
        monthEnd = .skip
        self.firstInstant = firstInstant
        indexing = .steps
        indexOrigin = firstInstant
        series = .custom(source)
        addedInstants = []
        excludedMilliseconds = []
    }

    /// A recurrence with no occurrence (a region trigger's, or a sun trigger's before its
    /// recipient reports a place).
    public static func none(start: TriggerStart) -> Recurrence {
        let instant: Date
        switch start {
        case .instant(let date): instant = date
        case .wallClock: instant = Date(timeIntervalSinceReferenceDate: 0)
        }
        return Recurrence(source: NoOccurrences(), start: start, firstInstant: instant)
    }

    /// The daily occurrences of `sun` at `place` from `start`.
    public static func solar(_ sun: SolarTrigger, at place: GeoPoint, start: TriggerStart) -> Recurrence {
        let instant: Date
        switch start {
        case .instant(let date): instant = date
        case .wallClock(let local, let zone):
            instant = (try? ZoneRules.zone(named: zone)).map { ZoneRules.resolve(local, in: $0) } ?? Date(timeIntervalSinceReferenceDate: 0)
        }
        return Recurrence(source: SolarSeries(trigger: sun, place: place, notBefore: instant), start: start, firstInstant: instant)
    }

    /// This recurrence skipping what `exclusion` excludes.
    public func excluding(_ exclusion: OccurrenceExclusion?) -> Recurrence {
        var copy = self
        copy.exclusion = exclusion
        return copy
    }

    /// The most excluded periods one lookup skips before it gives up (about 270 years of
    /// excluded days).
    static let maximumExcludedSkips = 100_000
}
