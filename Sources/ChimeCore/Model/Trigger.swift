import Foundation

/// When a reminder fires: its first occurrence and how it repeats.
///
/// JSON shape, following `fireDate` + `timeZone` of `UILocalNotification`:
/// - absolute: `{"at": "2026-12-24T08:00:00Z"}` (RFC 3339 with `Z` or an offset; no zone);
/// - floating: `{"at": "2026-12-24T09:00:00", "timeZone": "Europe/Berlin"}` (a wall-clock
///   date-time the zone's rules turn into an instant, DST included);
/// - `"repeat"`: `"day"` or `{"unit": "day", "interval": 2}` (units minute … year).
/// - `"misfire"`: `"fireOnce"` (default) | `"skip"` | `"fireAll"`; `"misfireThreshold"`:
///   seconds past which a missed occurrence is skipped rather than fired (default: none).
public struct Trigger: Hashable, Sendable {
    /// The first occurrence: an instant, or a wall-clock time in an IANA zone.
    public var start: TriggerStart
    /// How the occurrences repeat; `nil` for a one-shot.
    public var repeatRule: RepeatRule?
    /// What to do with occurrences missed while no coordinator ran; `nil` means `fireOnce`.
    public var misfire: MisfirePolicy?
    /// How late (seconds) a missed occurrence may still fire; older ones are skipped.
    public var misfireThreshold: Double?

    public init(
        start: TriggerStart, repeatRule: RepeatRule? = nil, misfire: MisfirePolicy? = nil,
        misfireThreshold: Double? = nil
    ) {
        self.start = start
        self.repeatRule = repeatRule
        self.misfire = misfire
        self.misfireThreshold = misfireThreshold
    }

    /// The IANA zone of a floating trigger; `nil` for an absolute one.
    public var timeZoneIdentifier: String? {
        if case .wallClock(_, let zone) = start { return zone }
        return nil
    }

    /// Builds the occurrence sequence of this trigger.
    /// - Throws: `ValidationError` (`.unknownTimeZone`, `.invalidArgument`).
    public func makeRecurrence() throws(ValidationError) -> Recurrence {
        if let repeatRule { try repeatRule.validate() }
        return try Recurrence(start: start, rule: repeatRule)
    }
}

extension Trigger: Codable {
    private enum CodingKeys: String, CodingKey {
        case at, timeZone, `repeat`, misfire, misfireThreshold
    }

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
        if let unit = try? container.decodeIfPresent(RepeatUnit.self, forKey: .repeat) {
            repeatRule = RepeatRule(unit: unit, interval: 1)
        } else {
            repeatRule = try container.decodeIfPresent(RepeatRule.self, forKey: .repeat)
        }
        misfire = try container.decodeIfPresent(MisfirePolicy.self, forKey: .misfire)
        misfireThreshold = try container.decodeIfPresent(Double.self, forKey: .misfireThreshold)
        if let misfireThreshold, !(misfireThreshold >= 0) {
            throw DecodingError.dataCorruptedError(
                forKey: .misfireThreshold, in: container, debugDescription: "must be a number of seconds >= 0")
        }
    }

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
    }
}
