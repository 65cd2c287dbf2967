import Foundation

/// Triggers that are not a clock rule: the sun's daily moment, a region's crossings, and the
/// exclusion calendars any trigger may name.
extension Trigger {
    /// The start a sun or region trigger without `at` has: 2001-01-01T00:00:00Z.
    public static let unstarted = Date(timeIntervalSinceReferenceDate: 0)
    /// The most calendars one trigger names.
    public static let maximumCalendars = 8
    /// The longest calendar name, in bytes.
    public static let maximumCalendarNameBytes = 64

    /// Whether the trigger fires on region crossings rather than at times.
    public var isRegion: Bool { region != nil }

    /// Whether the trigger's place is its recipient's last reported one (a sun trigger
    /// without latitude and longitude).
    public var followsRecipientPlace: Bool { sun != nil && sun?.place == nil }

    /// Checks the sun, the region and the calendar names, and that neither the sun nor a
    /// region is combined with a rule or dates (they are the occurrences).
    /// - Throws: `ValidationError` `.invalidArgument` naming the field.
    func validateBeyondTheClock() throws(ValidationError) {
        if calendars.count > Self.maximumCalendars {
            throw ValidationError(.invalidArgument, field: "trigger.calendars", "name at most \(Self.maximumCalendars) calendars")
        }
        for (index, name) in calendars.enumerated() {
            try Self.validateCalendarName(name, field: "trigger.calendars[\(index)]")
        }
        if Set(calendars).count != calendars.count {
            throw ValidationError(.invalidArgument, field: "trigger.calendars", "a calendar is named twice")
        }
        guard sun != nil || region != nil else { return }
        if sun != nil && region != nil {
            throw ValidationError(.invalidArgument, field: "trigger.region", "give sun or region, not both")
        }
        let field = sun != nil ? "trigger.sun" : "trigger.region"
        if repeatRule != nil || recurrenceRule != nil || !recurrenceDates.isEmpty || !exceptionDates.isEmpty {
            throw ValidationError(.invalidArgument, field: field, "\(sun != nil ? "sun" : "region") triggers take no repeat, rrule, rdates or exdates")
        }
        try sun?.validate()
        try region?.validate()
        if region != nil && spread != nil {
            throw ValidationError(.invalidArgument, field: "trigger.spread", "a region trigger fires on a crossing: spread applies to times")
        }
    }

    /// Checks a calendar name: 1–64 bytes of letters, digits, `-`, `_` and `.`.
    /// - Throws: `ValidationError` `.invalidArgument` with `field`.
    public static func validateCalendarName(_ name: String, field: String) throws(ValidationError) {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
        }
        guard !name.isEmpty, name.utf8.count <= maximumCalendarNameBytes, allowed else {
            throw ValidationError(
                .invalidArgument, field: field, "a calendar name is 1 to 64 letters, digits, '-', '_' or '.'")
        }
    }

    /// The occurrences of a sun or region trigger: the sun's daily moment at its place (or at
    /// `place`, the recipient's, when it names none; none until there is one), or none for a
    /// region.
    func beyondTheClockRecurrence(place: GeoPoint?) -> Recurrence {
        if let sun, let where_ = sun.place ?? place { return .solar(sun, at: where_, start: start) }
        return .none(start: start)
    }

    /// Checks the trigger and builds its occurrences with the recipient's `place` (for a sun
    /// trigger without its own) and the calendars' `exclusion`.
    /// - Throws: `ValidationError` as ``makeRecurrence()``.
    public func makeRecurrence(place: GeoPoint?, exclusion: OccurrenceExclusion?) throws(ValidationError) -> Recurrence {
        if let scaledRule {
            try validateOffset()
            try validateSpread()
            try validateBeyondTheClock()
            if repeatRule != nil || recurrenceRule != nil || !recurrenceDates.isEmpty || !exceptionDates.isEmpty || sun != nil || region != nil {
                throw ValidationError(.invalidArgument, field: "trigger.rrule", "an RSCALE rule takes no repeat, rdates, exdates, sun or region")
            }
            return try Recurrence.scaled(scaledRule, start: start).excluding(exclusion)
        }
        if sun != nil || region != nil {
            try validateOffset()
            try validateSpread()
            try validateBeyondTheClock()
            if case .wallClock(_, let zone) = start { _ = try ZoneRules.zone(named: zone) }
            return beyondTheClockRecurrence(place: place).excluding(exclusion)
        }
        return try makeRecurrence().excluding(exclusion)
    }
}
