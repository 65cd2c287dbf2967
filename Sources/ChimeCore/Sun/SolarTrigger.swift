import Foundation

/// A trigger at a moment of the sun's day (Celery beat's `solar` schedule): sunrise, sunset,
/// dawn or dusk at a depression below the horizon, or solar noon, plus a signed offset, at a
/// fixed place or at the recipient's last reported place (it moves with them), every day.
///
/// JSON: `{"event": "sunset", "offset": -1800, "latitude": 52.52, "longitude": 13.405}`;
/// `"depression"`: `"civil"` (6°, default), `"nautical"` (12°), `"astronomical"` (18°) or
/// degrees, for dawn and dusk only; `"offset"` in seconds (or a duration, with an optional
/// leading `-`), −12 h…12 h; without `latitude` and `longitude` the recipient's last location
/// (`locate`) is the place, and until it reports one the reminder waits.
///
/// Polar day and night: a day on which the sun does not cross the event's zenith (sunrise
/// above the polar circle in midsummer, dusk in the white nights) has no occurrence, and the
/// reminder fires on the next day that has one; solar noon happens every day.
public struct SolarTrigger: Hashable, Sendable {
    /// The sun's moments Chime fires at.
    public enum Event: String, Codable, CaseIterable, Sendable {
        case sunrise, sunset, dawn, dusk, noon

        var binaryTag: UInt8 { UInt8(Self.allCases.firstIndex(of: self) ?? 0) }
        init?(binaryTag: UInt8) {
            guard Int(binaryTag) < Self.allCases.count else { return nil }
            self = Self.allCases[Int(binaryTag)]
        }
        /// Whether the sun is rising at the event.
        var isRising: Bool { self == .sunrise || self == .dawn }
    }

    /// Which moment.
    public var event: Event
    /// For dawn and dusk: degrees below the horizon (6 civil, 12 nautical, 18 astronomical).
    public var depression: Double
    /// Seconds added to the moment (negative: before it).
    public var offset: Double
    /// The place, or `nil` for the recipient's last reported place.
    public var place: GeoPoint?

    /// The largest offset accepted, in seconds (12 hours either way).
    public static let maximumOffset: Double = 43_200
    /// Civil twilight's depression, the default.
    public static let civil = 6.0

    /// Creates a solar trigger.
    public init(event: Event, depression: Double = SolarTrigger.civil, offset: Double = 0, place: GeoPoint? = nil) {
        self.event = event
        self.depression = depression
        self.offset = offset
        self.place = place
    }

    /// The event's instant on UTC day `day` (days since 1970-01-01) at `place`, offset
    /// applied; `nil` when it does not happen that day.
    public func instant(onDay day: Int, at place: GeoPoint) -> Date? {
        let minutes: Double?
        switch event {
        case .noon: minutes = SolarCalculator.noon(day: day, longitude: place.longitude)
        case .sunrise, .sunset:
            minutes = SolarCalculator.crossing(
                day: day, latitude: place.latitude, longitude: place.longitude, zenith: SolarCalculator.zenith(depression: nil),
                rising: event.isRising)
        case .dawn, .dusk:
            minutes = SolarCalculator.crossing(
                day: day, latitude: place.latitude, longitude: place.longitude,
                zenith: SolarCalculator.zenith(depression: depression), rising: event.isRising)
        }
        guard let minutes else { return nil }
        // Whole milliseconds: firing ids name the millisecond.
        let milliseconds = ((Double(day) * 86_400 + minutes * 60 + offset) * 1000).rounded(.down)
        guard milliseconds.isFinite, abs(milliseconds) < 1e15 else { return nil }
        return Date.wholeMillisecond(Int64(milliseconds))
    }

    /// Checks the depression, the offset and the place.
    /// - Throws: `ValidationError` `.invalidArgument` with field `trigger.sun.<part>`.
    public func validate() throws(ValidationError) {
        guard depression.isFinite, depression > 0, depression < 90 else {
            throw ValidationError(.invalidArgument, field: "trigger.sun.depression", "depression must be more than 0 and less than 90 degrees")
        }
        guard offset.isFinite, abs(offset) <= Self.maximumOffset else {
            throw ValidationError(.invalidArgument, field: "trigger.sun.offset", "offset must be within 12 hours either way")
        }
        try place?.validate(field: "trigger.sun")
    }
}

extension SolarTrigger: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case event, depression, offset, latitude, longitude
    }

    /// Decodes the JSON shape on the type.
    /// - Throws: `DecodingError` for an unknown event or depression name, a malformed number
    ///   or offset, only one of latitude and longitude, or an unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        event = try container.decode(Event.self, forKey: .event)
        if let name = try? container.decodeIfPresent(String.self, forKey: .depression) {
            switch name {
            case "civil": depression = 6
            case "nautical": depression = 12
            case "astronomical": depression = 18
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .depression, in: container, debugDescription: "depression is civil, nautical, astronomical or degrees")
            }
        } else {
            depression = try container.decodeNumberIfPresent(Double.self, forKey: .depression, expected: "degrees") ?? Self.civil
        }
        if let text = try? container.decodeIfPresent(String.self, forKey: .offset) {
            let negative = text.hasPrefix("-")
            do {
                offset = try DurationParser.parseSeconds(negative ? String(text.dropFirst()) : text) * (negative ? -1 : 1)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .offset, in: container, debugDescription: error.message)
            }
        } else {
            offset = try container.decodeNumberIfPresent(Double.self, forKey: .offset, expected: "seconds") ?? 0
        }
        let latitude = try container.decodeNumberIfPresent(Double.self, forKey: .latitude, expected: "degrees")
        let longitude = try container.decodeNumberIfPresent(Double.self, forKey: .longitude, expected: "degrees")
        switch (latitude, longitude) {
        case (let latitude?, let longitude?): place = GeoPoint(latitude: latitude, longitude: longitude)
        case (nil, nil): place = nil
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .latitude, in: container, debugDescription: "give latitude and longitude together (or neither: the recipient's place)")
        }
    }

    /// Encodes the JSON shape on the type (depression only for dawn and dusk when not civil).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(event, forKey: .event)
        if depression != Self.civil { try container.encode(depression, forKey: .depression) }
        if offset != 0 { try container.encode(offset, forKey: .offset) }
        try container.encodeIfPresent(place?.latitude, forKey: .latitude)
        try container.encodeIfPresent(place?.longitude, forKey: .longitude)
    }
}

/// The daily occurrences of a ``SolarTrigger`` at a place: index `n` is the event computed
/// for UTC day `n` (days since 1970-01-01), which lies within about a day of it; days without
/// the event are holes.
struct SolarSeries: OccurrenceSource {
    let trigger: SolarTrigger
    let place: GeoPoint
    /// No occurrence before this instant (the trigger's start).
    let notBefore: Date

    func first(from instant: Date, inclusive: Bool) -> (step: Int, instant: Date)? {
        let bound = max(instant, notBefore)
        let isInclusive = instant >= notBefore ? inclusive : true
        // The event of day n lies within n − 1.5 … n + 1.5 days, offset included.
        var day = Int(((bound.timeIntervalSince1970 - trigger.offset) / 86_400).rounded(.down)) - 2
        // Polar night can hide sunrise for about six months: a year is searched.
        for _ in 0..<400 {
            if let candidate = trigger.instant(onDay: day, at: place), isInclusive ? candidate >= bound : candidate > bound {
                return (day, candidate)
            }
            day += 1
        }
        return nil
    }

    func lowerBound(ofIndex index: Int) -> Date? {
        Date(timeIntervalSince1970: (Double(index) - 2) * 86_400 + trigger.offset)
    }

    func probe(ofIndex index: Int) -> Date? {
        trigger.instant(onDay: index, at: place) ?? lowerBound(ofIndex: index)
    }
}
