import Foundation

/// Finding occurrences: the rule's next instance merged with the RDATEs, minus the EXDATEs
/// (RFC 5545 §3.8.5).
extension Recurrence {
    /// The first occurrence at or after (`inclusive`) or after `instant`; a `notAfter`
    /// instant bounds the search (an occurrence after it may still be returned).
    func occurrence(from instant: Date, inclusive: Bool, notAfter: Date? = nil) -> Occurrence? {
        var bound = instant
        var isInclusive = inclusive
        var skipped = 0
        while true {
            let fromRule = ruleInstance(from: bound, inclusive: isInclusive, notAfter: notAfter)
            let fromDates = addedInstant(from: bound, inclusive: isInclusive)
            let chosen: (step: Int?, instant: Date)
            switch (fromRule, fromDates) {
            case (nil, nil): return nil
            case (let instance?, nil): chosen = instance
            case (nil, let added?): chosen = (nil, added)
            case (let instance?, let added?): chosen = added < instance.instant ? (nil, added) : instance
            }
            // A wall-clock rule can land past 9999-12-31 in UTC (23:30 on the last day in
            // Los Angeles): nothing later is representable, so the series ends there.
            guard chosen.instant <= Self.lastSupportedInstant else { return nil }
            guard !excludedMilliseconds.contains(Self.milliseconds(chosen.instant)) else {
                bound = chosen.instant
                isInclusive = false
                continue
            }
            // An excluded occurrence: the search goes on after its excluded period.
            if let exclusion, let excluded = exclusion.exclusion(at: chosen.instant) {
                skipped += 1
                guard skipped < Self.maximumExcludedSkips else { return nil }
                bound = excluded.until
                isInclusive = true
                continue
            }
            return makeOccurrence(step: chosen.step, instant: chosen.instant)
        }
    }

    /// The occurrence at `instant`, numbered as ``indexing`` says (`step` is the rule's).
    func makeOccurrence(step: Int?, instant: Date) -> Occurrence {
        switch indexing {
        case .steps:
            return Occurrence(index: step ?? 0, instant: instant)
        case .milliseconds:
            return Occurrence(index: Int(Self.milliseconds(instant) - Self.milliseconds(indexOrigin)), instant: instant)
        }
    }

    /// An instant at or before every occurrence with index ≥ `index`; `nil` past the end.
    func lowerBound(ofIndex index: Int) -> Date? {
        switch (indexing, series) {
        case (.milliseconds, _):
            return indexOrigin.addingTimeInterval(Double(index) / 1000)
        case (.steps, .single):
            return nil
        case (.steps, .elapsed(let elapsed)):
            let (seconds, overflow) = index.multipliedReportingOverflow(by: elapsed.stepSeconds)
            return overflow ? nil : firstInstant.addingTimeInterval(Double(seconds))
        case (.steps, .calendar(let calendar)):
            // A period's candidates can resolve up to a gap's length before its first second.
            guard let first = calendar.expansion.firstSecond(ofPeriod: index) else { return nil }
            return calendar.clock.instant(ofWall: first).addingTimeInterval(-26 * 3600)
        case (.steps, .custom(let source)):
            return source.lowerBound(ofIndex: index)
        }
    }

    /// Where occurrence `index` would fire if it exists.
    func probeInstant(ofIndex index: Int) -> Date? {
        switch (indexing, series) {
        case (.milliseconds, _), (.steps, .single), (.steps, .elapsed):
            return lowerBound(ofIndex: index) ?? (index == 0 ? firstInstant : nil)
        case (.steps, .calendar(let calendar)):
            return calendar.candidateInstant(ofPeriod: index)
        case (.steps, .custom(let source)):
            return source.probe(ofIndex: index)
        }
    }

    private func ruleInstance(from instant: Date, inclusive: Bool, notAfter: Date?) -> (step: Int?, instant: Date)? {
        switch series {
        case .single:
            return (inclusive ? firstInstant >= instant : firstInstant > instant) ? (0, firstInstant) : nil
        case .elapsed(let elapsed):
            return elapsed.first(from: instant, inclusive: inclusive).map { ($0.step, $0.instant) }
        case .calendar(let calendar):
            return calendar.first(from: instant, inclusive: inclusive, notAfter: notAfter).map { ($0.period, $0.instant) }
        case .custom(let source):
            return source.first(from: instant, inclusive: inclusive).map { ($0.step, $0.instant) }
        }
    }

    private func addedInstant(from instant: Date, inclusive: Bool) -> Date? {
        var low = 0
        var high = addedInstants.count
        while low < high {
            let middle = (low + high) / 2
            let isBefore = inclusive ? addedInstants[middle] < instant : addedInstants[middle] <= instant
            if isBefore { low = middle + 1 } else { high = middle }
        }
        return low < addedInstants.count ? addedInstants[low] : nil
    }
}
