import Foundation

/// Remind-before (`--before 5m|10m|15m|30m|1h|2h|1d`, any duration): each firing comes a
/// fixed number of seconds before its event. The trigger's `at` and `repeat` describe
/// events; repeats step event instants, and a firing's instant is derived from its event's,
/// so both are kept and listed.
extension Trigger {
    /// The longest remind-before offset accepted, in seconds (366 days).
    public static let maximumOffset: Double = 366 * 86_400

    /// Parses the command line's `--before DURATION` into seconds (`5m` → 300, `1d` → 86,400).
    /// - Throws: `ValidationError` `.invalidArgument` (field `trigger.before`) for a
    ///   malformed or out-of-range duration.
    public static func parseOffset(_ text: String) throws(ValidationError) -> Double {
        let seconds: Double
        do {
            seconds = try DurationParser.parseSeconds(text)
        } catch {
            throw ValidationError(error.code, field: "trigger.before", error.message)
        }
        try validate(offset: seconds)
        return seconds
    }

    /// When the firing for the event at `eventInstant` fires: `eventInstant − offset` (UTC).
    public func fireInstant(eventInstant: Date) -> Date {
        eventInstant.addingTimeInterval(-(offset ?? 0))
    }

    /// The event a firing at `fireInstant` reminds of: `fireInstant + offset` (UTC).
    public func eventInstant(fireInstant: Date) -> Date {
        fireInstant.addingTimeInterval(offset ?? 0)
    }

    /// The first event (index ≥ `fromIndex`) of `recurrence` whose firing is at or after
    /// `instant`; its fire instant is `fireInstant(eventInstant: occurrence.instant)`.
    /// `nil` when the sequence has ended.
    public func firstEvent(firingOnOrAfter instant: Date, in recurrence: Recurrence, fromIndex: Int = 0)
        -> Occurrence?
    {
        recurrence.firstOccurrence(onOrAfter: eventInstant(fireInstant: instant), fromIndex: fromIndex)
    }

    /// Checks that the offset, when present, is 0…366 days.
    /// - Throws: `ValidationError` `.invalidArgument` with field `trigger.before`.
    public func validateOffset() throws(ValidationError) {
        if let offset { try Self.validate(offset: offset) }
    }

    private static func validate(offset: Double) throws(ValidationError) {
        guard offset.isFinite, offset >= 0, offset <= maximumOffset else {
            throw ValidationError(
                .invalidArgument, field: "trigger.before",
                "remind-before must be 0 s to 366 days before the event, not \(DurationParser.format(seconds: offset))")
        }
    }
}
