/// The calendar or clock unit a reminder repeats by.
///
/// `minute` and `hour` repeat on elapsed time (fixed 60 s and 3600 s steps); `day`, `week`,
/// `month` and `year` repeat on calendar fields (see ``Recurrence``). Each is the short form
/// of an RFC 5545 FREQ (see ``RepeatRule/recurrenceRule``).
public enum RepeatUnit: String, Codable, CaseIterable, Sendable {
    case minute, hour, day, week, month, year

    /// Parses a unit name (`minute` … `year`), explaining that seconds are too short.
    /// - Throws: `ValidationError` `.invalidArgument` (field `trigger.repeat`) for an unknown
    ///   unit; second-like names (`second`, `seconds`, `sec`, `s`) say that repeats shorter
    ///   than 60 s are rejected.
    public init(parsing name: String) throws(ValidationError) {
        if let unit = RepeatUnit(rawValue: name) {
            self = unit
        } else if ["second", "seconds", "sec", "secs", "s"].contains(name) {
            throw ValidationError(
                .invalidArgument, field: "trigger.repeat",
                "repeats shorter than 60 s are not supported; the shortest repeat is every minute")
        } else {
            throw ValidationError(
                .invalidArgument, field: "trigger.repeat",
                "'\(name)' is not a repeat unit; use \(Self.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    /// Decodes a unit name.
    /// - Throws: `DecodingError.dataCorrupted` with the message of ``init(parsing:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        do {
            self = try RepeatUnit(parsing: try container.decode(String.self))
        } catch let error as ValidationError {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }
}

/// How a reminder repeats: every `interval` `unit`s, such as every 2 weeks.
///
/// JSON shape: `{"unit": "week", "interval": 2}`; `interval` defaults to 1 when absent.
/// Decoding does not check the interval; ``validate()`` does.
public struct RepeatRule: Codable, Hashable, Sendable {
    /// The unit of one step.
    public var unit: RepeatUnit
    /// How many units one step spans; at least 1.
    public var interval: Int

    /// Creates a rule without checking it; see ``validate()``.
    public init(unit: RepeatUnit, interval: Int = 1) {
        self.unit = unit
        self.interval = interval
    }

    /// The shortest repeat, in seconds: every minute.
    public static let minimumSeconds = 60

    /// Checks that the interval is 1…``RecurrenceRule/maximumInterval``, so no repeat is
    /// shorter than 60 s and no step overflows.
    /// - Throws: `ValidationError` `.invalidArgument` with field `trigger.repeat.interval`.
    public func validate() throws(ValidationError) {
        guard interval >= 1 else {
            throw ValidationError(
                .invalidArgument, field: "trigger.repeat.interval",
                "repeats shorter than 60 s are not supported: the repeat interval must be a whole number of at least 1, not \(interval)")
        }
        guard interval <= RecurrenceRule.maximumInterval else {
            throw ValidationError(
                .invalidArgument, field: "trigger.repeat.interval",
                "the repeat interval must be at most \(RecurrenceRule.maximumInterval), not \(interval)")
        }
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case unit, interval
    }

    /// Decodes `{"unit": …, "interval": …}`, with `interval` optional (default 1).
    /// - Throws: `DecodingError` for a missing or unknown unit, an interval that is not a
    ///   whole number in `Int`'s range, or an unknown key (an ``UnknownFieldError`` underneath).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        unit = try container.decode(RepeatUnit.self, forKey: .unit)
        interval = try container.decodeNumberIfPresent(Int.self, forKey: .interval, expected: "a whole number") ?? 1
    }
}

extension RepeatRule {
    /// The RFC 5545 §3.3.10 rule this short form stands for: `FREQ=MINUTELY` … `FREQ=YEARLY`
    /// with this `INTERVAL`, so `{"unit": "day", "interval": 2}` is `FREQ=DAILY;INTERVAL=2`.
    public var recurrenceRule: RecurrenceRule {
        let frequency: RecurrenceRule.Frequency
        switch unit {
        case .minute: frequency = .minutely
        case .hour: frequency = .hourly
        case .day: frequency = .daily
        case .week: frequency = .weekly
        case .month: frequency = .monthly
        case .year: frequency = .yearly
        }
        return RecurrenceRule(frequency: frequency, interval: interval)
    }
}
