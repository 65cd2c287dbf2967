import Foundation

extension Reminder {
    /// The instants (UTC) this reminder fires at within `from...through`, in order, at most
    /// `limit` of them: each event occurrence minus the remind-before offset, plus its spread delay. What
    /// `chime preview FILE.ics` lists; needs no cluster.
    /// - Throws: `ValidationError` when the trigger is invalid.
    public func fireInstants(from start: Date, through end: Date, limit: Int = 10_000) throws(ValidationError) -> [Date] {
        let recurrence = try trigger.makeRecurrence()
        let offset = trigger.offset ?? 0
        // With spread, events up to a spread before the window may fire inside it.
        let instants = recurrence.occurrences(
            onOrAfter: trigger.earliestEvent(firingOnOrAfter: start), through: end.addingTimeInterval(offset),
            limit: limit + (trigger.spread == nil ? 0 : limit)
        ).map { fireInstant(eventInstant: $0.instant) }
        guard trigger.spread != nil else { return instants }
        return Array(instants.filter { $0 >= start && $0 <= end }.sorted().prefix(limit))
    }
}
