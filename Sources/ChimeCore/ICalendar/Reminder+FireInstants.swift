import Foundation

extension Reminder {
    /// The instants (UTC) this reminder fires at within `from...through`, in order, at most
    /// `limit` of them: each event occurrence minus the remind-before offset. What
    /// `chime preview FILE.ics` lists; needs no cluster.
    /// - Throws: `ValidationError` when the trigger is invalid.
    public func fireInstants(from start: Date, through end: Date, limit: Int = 10_000) throws(ValidationError) -> [Date] {
        let recurrence = try trigger.makeRecurrence()
        let offset = trigger.offset ?? 0
        return recurrence.occurrences(
            onOrAfter: start.addingTimeInterval(offset), through: end.addingTimeInterval(offset), limit: limit
        ).map { trigger.fireInstant(eventInstant: $0.instant) }
    }
}
