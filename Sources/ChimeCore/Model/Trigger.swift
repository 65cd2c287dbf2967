import Foundation

/// When a reminder fires: its first occurrence and how it repeats.
///
/// JSON shape, following `fireDate` + `timeZone` of `UILocalNotification`:
/// - absolute: `{"at": "2026-12-24T08:00:00Z"}` (RFC 3339 with `Z` or an offset; no zone);
/// - floating: `{"at": "2026-12-24T09:00:00", "timeZone": "Europe/Berlin"}` (a wall-clock
///   date-time the zone's rules turn into an instant, DST included);
/// - `"repeat"`: `"day"` or `{"unit": "day", "interval": 2}` (units minute … year);
/// - `"before"`: remind this long before the event, in seconds (`300`) or as a duration
///   (`"5m"`, `"1d"`); encodes as seconds. Optional.
/// - `"misfire"`: `"fireOnce"` (default) | `"skip"` | `"fireAll"`; `"misfireThreshold"`:
///   seconds past which a missed occurrence is skipped rather than fired (default: none).
///
/// `at` and `repeat` describe the *event*; each firing comes ``offset`` seconds before its
/// event (see ``fireInstant(eventInstant:)``).
public struct Trigger: Hashable, Sendable {
    /// The first event: an instant, or a wall-clock time in an IANA zone.
    public var start: TriggerStart
    /// How the events repeat; `nil` for a one-shot.
    public var repeatRule: RepeatRule?
    /// Remind-before: seconds between a firing and its event (JSON `"before"`); `nil` fires
    /// at the event.
    public var offset: Double?
    /// What to do with occurrences missed while no coordinator ran; `nil` means `fireOnce`.
    public var misfire: MisfirePolicy?
    /// How late (seconds) a missed occurrence may still fire; older ones are skipped.
    public var misfireThreshold: Double?

    /// Creates a trigger without checking it; see ``makeRecurrence()``.
    public init(
        start: TriggerStart, repeatRule: RepeatRule? = nil, offset: Double? = nil, misfire: MisfirePolicy? = nil,
        misfireThreshold: Double? = nil
    ) {
        self.start = start
        self.repeatRule = repeatRule
        self.offset = offset
        self.misfire = misfire
        self.misfireThreshold = misfireThreshold
    }

    /// The IANA zone of a floating trigger; `nil` for an absolute one.
    public var timeZoneIdentifier: String? {
        if case .wallClock(_, let zone) = start { return zone }
        return nil
    }

    /// Checks the offset and builds the sequence of event instants.
    /// - Throws: `ValidationError` (`.unknownTimeZone`, `.invalidArgument`).
    public func makeRecurrence() throws(ValidationError) -> Recurrence {
        try validateOffset()
        if let repeatRule { try repeatRule.validate() }
        return try Recurrence(start: start, rule: repeatRule)
    }
}

extension Trigger: Codable {
    private enum CodingKeys: String, CodingKey {
        case at, timeZone, `repeat`, before, misfire, misfireThreshold
    }

    /// Decodes the JSON shape above.
    /// - Throws: `DecodingError` for a malformed `at`, an unknown repeat unit (repeats
    ///   shorter than a minute say so), or a malformed `before`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let at = try container.decode(String.self, forKey: .at)
        if let zone = try container.decodeIfPresent(String.self, forKey: .timeZone) {
            do {
                start = .wallClock(try LocalDateTime(parsing: at), zoneIdentifier: zone)
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: .at, in: container,
                    debugDescription: "with timeZone, at must be a wall-clock time such as 2026-12-24T09:00:00: \(error.message)")
            }
        } else {
            do {
                start = .instant(try RFC3339.parseInstant(at))
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: .at, in: container, debugDescription: error.message)
            }
        }
        if let unitName = try? container.decodeIfPresent(String.self, forKey: .repeat) {
            do {
                repeatRule = RepeatRule(unit: try RepeatUnit(parsing: unitName), interval: 1)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .repeat, in: container, debugDescription: error.message)
            }
        } else {
            repeatRule = try container.decodeIfPresent(RepeatRule.self, forKey: .repeat)
        }
        misfire = try container.decodeIfPresent(MisfirePolicy.self, forKey: .misfire)
        misfireThreshold = try container.decodeIfPresent(Double.self, forKey: .misfireThreshold)
        if let misfireThreshold, !(misfireThreshold >= 0) {
            throw DecodingError.dataCorruptedError(
                forKey: .misfireThreshold, in: container, debugDescription: "must be a number of seconds >= 0")
        }
        offset = container.contains(.before) ? try decodeSeconds(from: container, forKey: .before) : nil
    }

    /// Encodes the JSON shape above: absolute starts in RFC 3339 UTC with milliseconds,
    /// `before` in seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch start {
        case .instant(let date):
            try container.encode(RFC3339.format(date), forKey: .at)
        case .wallClock(let local, let zone):
            try container.encode(local.description, forKey: .at)
            try container.encode(zone, forKey: .timeZone)
        }
        try container.encodeIfPresent(repeatRule, forKey: .repeat)
        try container.encodeIfPresent(misfire, forKey: .misfire)
        try container.encodeIfPresent(misfireThreshold, forKey: .misfireThreshold)
        try container.encodeIfPresent(offset, forKey: .before)
    }
}
