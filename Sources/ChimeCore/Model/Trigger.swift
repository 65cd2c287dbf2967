import Foundation

/// When a reminder fires: its first occurrence and how it repeats.
///
/// JSON shape, following `fireDate` + `timeZone` of `UILocalNotification`:
/// - absolute: `{"at": "2026-12-24T08:00:00Z"}` (RFC 3339 with `Z` or an offset; no zone);
/// - floating: `{"at": "2026-12-24T09:00:00", "timeZone": "Europe/Berlin"}` (a wall-clock
///   date-time the zone's rules turn into an instant, DST included);
/// - `"repeat"`: `"day"` or `{"unit": "day", "interval": 2}` (units minute … year), the
///   short form of `"rrule": "FREQ=DAILY;INTERVAL=2"`;
/// - `"rrule"`: an RFC 5545 §3.3.10 rule such as `"FREQ=WEEKLY;BYDAY=MO,WE"` (not with
///   `"repeat"`);
/// - `"rdates"` / `"exdates"`: instants added to or removed from the occurrences (RFC 5545
///   §3.8.5.2, §3.8.5.1), each `"2026-12-24T08:00:00Z"` or a wall-clock
///   `"2026-12-24T09:00:00"` read in `timeZone`;
/// - `"monthEnd"`: `"skip"` (default, RFC 5545) or `"clamp"` (see ``MonthEndPolicy``);
/// - `"before"`: remind this long before the event, in seconds (`300`) or as a duration
///   (`"5m"`, `"1d"`); encodes as seconds;
/// - `"misfire"`: `"fireOnce"` (default) | `"skip"` | `"fireAll"`; `"misfireThreshold"`:
///   seconds past which a missed occurrence is skipped rather than fired (default: none);
/// - `"spread"`: a jitter bound in seconds (`900`) or as a duration (`"15m"`): each firing
///   comes a delay in `[0, spread)` derived from its firing id (see `Trigger+Spread.swift`);
///   encodes as seconds;
/// - `"calendars"`: names of shared exclusion calendars (``ExclusionCalendar``) whose days and
///   ranges, in the recipient's zone, the occurrences skip;
/// - `"sun"`: a ``SolarTrigger`` — the occurrences are the sun's daily moment instead of a rule
///   (`at` optional: the day from which it counts);
/// - `"region"`: a ``RegionTrigger`` — the reminder fires on crossings of the region, not at a
///   time (`at` optional: crossings before it are ignored).
/// A sun or region trigger without `at` starts at 2001-01-01T00:00:00Z (and encodes without it).
/// Absent keys mean no rule, no dates, `skip`, no offset; encoding leaves them out.
///
/// `at` and the repeat describe the *event*; each firing comes ``offset`` seconds before its
/// event (see ``fireInstant(eventInstant:)``).
public struct Trigger: Hashable, Sendable {
    /// The first event: an instant, or a wall-clock time in an IANA zone.
    public var start: TriggerStart
    /// The short-form repeat; `nil` when there is none (then ``recurrenceRule`` may be set).
    public var repeatRule: RepeatRule?
    /// The RFC 5545 rule; `nil` when there is none or ``repeatRule`` gives the repeat.
    public var recurrenceRule: RecurrenceRule?
    /// Extra occurrences (RDATE).
    public var recurrenceDates: [RecurrenceDateTime]
    /// Removed occurrences (EXDATE).
    public var exceptionDates: [RecurrenceDateTime]
    /// What a monthly or yearly rule does on days its month lacks.
    public var monthEnd: MonthEndPolicy
    /// Remind-before: seconds between a firing and its event (JSON `"before"`); `nil` fires
    /// at the event.
    public var offset: Double?
    /// What to do with occurrences missed while no coordinator ran; `nil` means `fireOnce`.
    public var misfire: MisfirePolicy?
    /// How late (seconds) a missed occurrence may still fire; older ones are skipped.
    public var misfireThreshold: Double?
    /// The jitter bound in seconds (JSON `"spread"`): each firing is delayed by a
    /// deterministic `[0, spread)`; `nil` for none.
    public var spread: Double?
    /// Names of the exclusion calendars the occurrences skip (JSON `"calendars"`); empty for none.
    public var calendars: [String] = []
    /// The sun's moment the reminder fires at daily (JSON `"sun"`), instead of a rule.
    public var sun: SolarTrigger?
    /// The region whose crossings fire the reminder (JSON `"region"`), instead of a time.
    public var region: RegionTrigger?
    /// A rule in another calendar scale (RFC 7529 `RSCALE`, JSON `"rrule"` text naming one),
    /// instead of ``recurrenceRule``.
    public var scaledRule: ScaledRule?

    /// Creates a trigger; checks happen in ``makeRecurrence()``.
    public init(
        start: TriggerStart, repeatRule: RepeatRule? = nil, recurrenceRule: RecurrenceRule? = nil,
        recurrenceDates: [RecurrenceDateTime] = [], exceptionDates: [RecurrenceDateTime] = [],
        monthEnd: MonthEndPolicy = .skip, offset: Double? = nil, misfire: MisfirePolicy? = nil,
        misfireThreshold: Double? = nil, spread: Double? = nil, calendars: [String] = [], sun: SolarTrigger? = nil,
        region: RegionTrigger? = nil, scaledRule: ScaledRule? = nil
    ) {
        self.start = start
        self.repeatRule = repeatRule
        self.recurrenceRule = recurrenceRule
        self.recurrenceDates = recurrenceDates
        self.exceptionDates = exceptionDates
        self.monthEnd = monthEnd
        self.offset = offset
        self.misfire = misfire
        self.misfireThreshold = misfireThreshold
        self.spread = spread
        self.calendars = calendars
        self.sun = sun
        self.region = region
        self.scaledRule = scaledRule
    }

    /// The IANA zone of a floating trigger; `nil` for an absolute one.
    public var timeZoneIdentifier: String? {
        if case .wallClock(_, let zone) = start { return zone }
        return nil
    }

    /// Whether the trigger can fire more than once (a repeat, a rule or RDATEs).
    public var isRepeating: Bool {
        // Matched in place: comparing the optional rules with `nil` copied them first (the
        // coordinator asks several times per reminder it schedules).
        if case .some = repeatRule { return true }
        if case .some = sun { return true }
        if case .some = scaledRule { return true }
        if case .some = recurrenceRule { return true }
        return !recurrenceDates.isEmpty
    }

    /// How the trigger repeats, in a few words for listings: `day`, `2 weeks`, `rrule`,
    /// `rrule+rdates`, `rdates` (extra dates only), or `-` for a one-shot.
    public var repeatSummary: String {
        var parts: [String] = []
        if let repeatRule {
            parts.append(repeatRule.interval == 1 ? repeatRule.unit.rawValue : "\(repeatRule.interval) \(repeatRule.unit.rawValue)s")
        }
        if recurrenceRule != nil { parts.append("rrule") }
        if let scaledRule { parts.append("rscale:\(scaledRule.scale.rawValue.lowercased())") }
        if let sun { parts.append("sun:\(sun.event.rawValue)") }
        if region != nil { parts.append("region") }
        if !recurrenceDates.isEmpty { parts.append("rdates") }
        return parts.isEmpty ? "-" : parts.joined(separator: "+")
    }

    /// Checks the offset and builds the sequence of event instants.
    /// - Throws: `ValidationError` (`.unknownTimeZone`, `.invalidArgument`); field
    ///   `trigger.rrule` when both `repeat` and `rrule` are given.
    public func makeRecurrence() throws(ValidationError) -> Recurrence {
        if sun != nil || region != nil || scaledRule != nil { return try makeRecurrence(place: nil, exclusion: nil) }
        try validateOffset()
        try validateSpread()
        try validateBeyondTheClock()
        if let repeatRule {
            guard recurrenceRule == nil else {
                throw ValidationError(
                    .invalidArgument, field: "trigger.rrule", "give repeat or rrule, not both")
            }
            try repeatRule.validate()
        }
        return try Recurrence(
            start: start, repeatRule: repeatRule, recurrenceRule: repeatRule?.recurrenceRule ?? recurrenceRule,
            recurrenceDates: recurrenceDates, exceptionDates: exceptionDates, monthEnd: monthEnd)
    }
}

extension Trigger: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case at, timeZone, `repeat`, rrule, rdates, exdates, monthEnd, before, misfire, misfireThreshold, spread
        case calendars, sun, region
    }

    /// Decodes the JSON shape described on ``Trigger``.
    /// - Throws: `DecodingError` for a malformed `at`, `rrule`, date, `monthEnd` or `before`,
    ///   an unknown repeat unit (repeats shorter than a minute say so), or an unknown key (an
    ///   ``UnknownFieldError`` underneath).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let sun = try container.decodeIfPresent(SolarTrigger.self, forKey: .sun)
        let region = try container.decodeIfPresent(RegionTrigger.self, forKey: .region)
        let at: String
        if sun != nil || region != nil, !container.contains(.at) {
            at = RFC3339.format(Self.unstarted)
        } else {
            at = try container.decode(String.self, forKey: .at)
        }
        self.sun = sun
        self.region = region
        calendars = try container.decodeIfPresent([String].self, forKey: .calendars) ?? []
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
        if let text = try container.decodeIfPresent(String.self, forKey: .rrule), ScaledRule.isScaled(text) {
            do {
                scaledRule = try ScaledRule(parsing: text)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .rrule, in: container, debugDescription: error.message)
            }
            recurrenceRule = nil
        } else if let text = try container.decodeIfPresent(String.self, forKey: .rrule) {
            do {
                recurrenceRule = try RecurrenceRule(parsing: text)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .rrule, in: container, debugDescription: error.message)
            }
        } else {
            recurrenceRule = nil
        }
        recurrenceDates = try container.decodeIfPresent([RecurrenceDateTime].self, forKey: .rdates) ?? []
        exceptionDates = try container.decodeIfPresent([RecurrenceDateTime].self, forKey: .exdates) ?? []
        monthEnd = try container.decodeIfPresent(MonthEndPolicy.self, forKey: .monthEnd) ?? .skip
        misfire = try container.decodeIfPresent(MisfirePolicy.self, forKey: .misfire)
        misfireThreshold = try container.decodeNumberIfPresent(Double.self, forKey: .misfireThreshold, expected: "a number of seconds")
        if let misfireThreshold, !(misfireThreshold >= 0) {
            throw DecodingError.dataCorruptedError(
                forKey: .misfireThreshold, in: container, debugDescription: "must be a number of seconds >= 0")
        }
        offset = container.contains(.before) ? try decodeSeconds(from: container, forKey: .before) : nil
        spread = container.contains(.spread) ? try decodeSeconds(from: container, forKey: .spread) : nil
    }

    /// Encodes the JSON shape described on ``Trigger``, leaving out absent parts: absolute
    /// starts in RFC 3339 UTC with milliseconds, `before` in seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch start {
        case .instant(let date):
            if !(date == Self.unstarted && (sun != nil || region != nil)) {
                try container.encode(RFC3339.format(date), forKey: .at)
            }
        case .wallClock(let local, let zone):
            try container.encode(local.description, forKey: .at)
            try container.encode(zone, forKey: .timeZone)
        }
        try container.encodeIfPresent(repeatRule, forKey: .repeat)
        try container.encodeIfPresent(recurrenceRule?.description ?? scaledRule?.description, forKey: .rrule)
        if !recurrenceDates.isEmpty { try container.encode(recurrenceDates, forKey: .rdates) }
        if !exceptionDates.isEmpty { try container.encode(exceptionDates, forKey: .exdates) }
        if monthEnd != .skip { try container.encode(monthEnd, forKey: .monthEnd) }
        try container.encodeIfPresent(offset, forKey: .before)
        try container.encodeIfPresent(misfire, forKey: .misfire)
        try container.encodeIfPresent(misfireThreshold, forKey: .misfireThreshold)
        try container.encodeIfPresent(spread, forKey: .spread)
        if !calendars.isEmpty { try container.encode(calendars, forKey: .calendars) }
        try container.encodeIfPresent(sun, forKey: .sun)
        try container.encodeIfPresent(region, forKey: .region)
    }
}
