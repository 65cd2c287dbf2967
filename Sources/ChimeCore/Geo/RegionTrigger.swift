import Foundation

/// A circular region a reminder fires on instead of at a time (iOS 8's
/// `UILocalNotification.region` with `regionTriggersOnce`, `UNLocationNotificationTrigger`):
/// when its recipient enters and/or leaves it, as the recipient's location reports show.
///
/// JSON (the trigger's `"region"`): `{"latitude": 52.52, "longitude": 13.405, "radius": 150,
/// "notifyOnEntry": true, "notifyOnExit": false, "triggersOnce": true}`; `radius` in metres
/// (1 m…100 km); `notifyOnEntry` and `notifyOnExit` default to `true` as `CLRegion`'s do,
/// `triggersOnce` to `true` as `regionTriggersOnce` does (then the first crossing delivers it
/// and it is `delivered`; otherwise every crossing fires and it stays `pending`).
public struct RegionTrigger: Hashable, Sendable {
    /// The centre.
    public var center: GeoPoint
    /// The radius in metres.
    public var radius: Double
    /// Fire when the recipient enters.
    public var notifyOnEntry: Bool
    /// Fire when the recipient leaves.
    public var notifyOnExit: Bool
    /// Fire on the first crossing only.
    public var triggersOnce: Bool

    /// The radius bounds, metres.
    public static let radiusRange: ClosedRange<Double> = 1...100_000

    /// Creates a region trigger.
    public init(center: GeoPoint, radius: Double, notifyOnEntry: Bool = true, notifyOnExit: Bool = true, triggersOnce: Bool = true) {
        self.center = center
        self.radius = radius
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.triggersOnce = triggersOnce
    }

    /// Checks the centre, the radius and that some crossing fires.
    /// - Throws: `ValidationError` `.invalidArgument` with field `trigger.region.<part>`.
    public func validate() throws(ValidationError) {
        try center.validate(field: "trigger.region")
        guard radius.isFinite, Self.radiusRange.contains(radius) else {
            throw ValidationError(.invalidArgument, field: "trigger.region.radius", "radius must be 1 m to 100 km")
        }
        guard notifyOnEntry || notifyOnExit else {
            throw ValidationError(.invalidArgument, field: "trigger.region", "notifyOnEntry or notifyOnExit must be true")
        }
    }

    /// Whether a crossing fires this reminder.
    public func fires(on crossing: RegionCrossing) -> Bool {
        crossing == .entry ? notifyOnEntry : notifyOnExit
    }

    /// Where a report at `point` with `accuracy` metres puts the recipient, given where it
    /// was (`nil`: not yet determined), with hysteresis: the margin is the accuracy, at most
    /// half the radius; inside when the distance is at most `radius − margin`, outside when it
    /// is more than `radius + margin`, and otherwise where it was (a report that jitters
    /// around the edge within its accuracy crosses nothing).
    public func presence(at point: GeoPoint, accuracy: Double, previous: RegionPresence?) -> RegionPresence? {
        let margin = min(max(0, accuracy.isFinite ? accuracy : 0), radius / 2)
        let distance = center.distance(to: point)
        if distance <= radius - margin { return .inside }
        if distance > radius + margin { return .outside }
        return previous
    }

    /// The crossing from `previous` to `current`, if any: only a move between two determined
    /// presences crosses (the first determination fires nothing).
    public static func crossing(from previous: RegionPresence?, to current: RegionPresence?) -> RegionCrossing? {
        switch (previous, current) {
        case (.outside?, .inside?): .entry
        case (.inside?, .outside?): .exit
        default: nil
        }
    }
}

/// Where a recipient is with respect to a region.
public enum RegionPresence: String, Codable, Sendable {
    case inside, outside
}

/// A move across a region's edge.
public enum RegionCrossing: String, Codable, Sendable {
    case entry, exit
}

extension RegionTrigger: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case latitude, longitude, radius, notifyOnEntry, notifyOnExit, triggersOnce
    }

    /// Decodes the JSON shape on the type.
    /// - Throws: `DecodingError` for a missing or malformed field or an unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        center = GeoPoint(
            latitude: try container.decodeNumber(Double.self, forKey: .latitude, expected: "degrees"),
            longitude: try container.decodeNumber(Double.self, forKey: .longitude, expected: "degrees"))
        radius = try container.decodeNumber(Double.self, forKey: .radius, expected: "metres")
        notifyOnEntry = try container.decodeIfPresent(Bool.self, forKey: .notifyOnEntry) ?? true
        notifyOnExit = try container.decodeIfPresent(Bool.self, forKey: .notifyOnExit) ?? true
        triggersOnce = try container.decodeIfPresent(Bool.self, forKey: .triggersOnce) ?? true
    }

    /// Encodes the JSON shape on the type, defaults left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(center.latitude, forKey: .latitude)
        try container.encode(center.longitude, forKey: .longitude)
        try container.encode(radius, forKey: .radius)
        if !notifyOnEntry { try container.encode(false, forKey: .notifyOnEntry) }
        if !notifyOnExit { try container.encode(false, forKey: .notifyOnExit) }
        if !triggersOnce { try container.encode(false, forKey: .triggersOnce) }
    }
}

/// A recipient's reported location (`locate`): where, how accurately, and when.
public struct LocationReport: Hashable, Sendable, Codable {
    /// The place.
    public var point: GeoPoint
    /// The report's accuracy radius in metres (0: exact).
    public var accuracy: Double
    /// When the recipient was there (UTC): reports at or before the last one are ignored.
    public var at: Date

    /// The largest accuracy accepted, metres.
    public static let maximumAccuracy = 100_000.0

    /// Creates a report.
    public init(point: GeoPoint, accuracy: Double = 0, at: Date) {
        self.point = point
        self.accuracy = accuracy
        self.at = at
    }

    /// Checks the place and the accuracy.
    /// - Throws: `ValidationError` `.invalidArgument` (fields `latitude`, `longitude`, `accuracy`).
    public func validate() throws(ValidationError) {
        try point.validate(field: "location")
        guard accuracy.isFinite, accuracy >= 0, accuracy <= Self.maximumAccuracy else {
            throw ValidationError(.invalidArgument, field: "location.accuracy", "accuracy must be 0 to 100 km")
        }
        guard at.timeIntervalSinceReferenceDate.isFinite, RFC3339.isSupported(at) else {
            throw ValidationError(.invalidArgument, field: "location.at", "at must be an instant in years 0001–9999")
        }
    }
}
