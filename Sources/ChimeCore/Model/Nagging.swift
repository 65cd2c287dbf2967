import Foundation

/// Re-alerting an unhandled firing: `--nag 3 --nag-every 10m` fires it again up to 3 times,
/// 10 minutes apart, until it is handled (any action or ack cancels the rest).
///
/// JSON shape (`reminder.nag`): `{"count": 3, "interval": 600}`; `interval` is seconds, or
/// a duration string such as `"10m"` on input, and encodes as seconds.
public struct NagPolicy: Hashable, Sendable {
    /// The allowed numbers of nags.
    public static let countRange = 1...100
    /// The shortest interval between nags, in seconds.
    public static let minimumInterval: Double = 60
    /// The longest interval between nags, in seconds: 366 days.
    public static let maximumInterval: Double = 366 * 86_400

    /// How many times the firing is re-alerted at most, 1…100.
    public var count: Int
    /// Seconds between the firing and its first nag, and between nags; at least 60.
    public var interval: Double

    /// Creates a policy without checking it; see ``validate()``.
    public init(count: Int, interval: Double) {
        self.count = count
        self.interval = interval
    }

    /// Creates a checked policy from the command line's `--nag N --nag-every DURATION`.
    /// - Throws: `ValidationError` `.invalidArgument` for a malformed duration (field
    ///   `nag.interval`) or a value ``validate()`` refuses.
    public init(count: Int, every duration: String) throws(ValidationError) {
        do {
            self.init(count: count, interval: try DurationParser.parseSeconds(duration))
        } catch {
            throw ValidationError(error.code, field: "nag.interval", error.message)
        }
        try validate()
    }

    /// Checks that the count is 1…100 and the interval 60 s…366 days.
    /// - Throws: `ValidationError` `.invalidArgument` with field `nag.count` or `nag.interval`.
    public func validate() throws(ValidationError) {
        guard Self.countRange.contains(count) else {
            throw ValidationError(
                .invalidArgument, field: "nag.count",
                "must be \(Self.countRange.lowerBound)…\(Self.countRange.upperBound) nags, not \(count)")
        }
        guard interval.isFinite, interval >= Self.minimumInterval else {
            throw ValidationError(
                .invalidArgument, field: "nag.interval",
                "nags must be at least 60 s apart, not \(DurationParser.format(seconds: interval))")
        }
        guard interval <= Self.maximumInterval else {
            throw ValidationError(
                .invalidArgument, field: "nag.interval",
                "nags must be at most 366 days apart, not \(DurationParser.format(seconds: interval))")
        }
    }

    /// The nags of `firing`, in order: nag k (1…``count``) fires k × ``interval`` seconds
    /// after the base instant, with id `<firingId>#nag<k>`.
    ///
    /// The base instant is the firing's due instant, so on-time nags keep round times; for a
    /// late firing (a misfire) it is `deliveredAt`, so the nags do not all come at once.
    public func nags(of firing: Firing, deliveredAt: Date) -> [Nag] {
        let base = firing.late ? deliveredAt : firing.dueAt
        guard count >= 1 else { return [] }
        return (1...count).map { number in
            Nag(
                firingId: FiringID(nag: number, of: firing.firingId.nagBase), number: number,
                at: base.addingTimeInterval(Double(number) * interval))
        }
    }
}

/// One scheduled re-alert of a firing.
public struct Nag: Hashable, Sendable {
    /// `<firingId>#nag<number>`.
    public var firingId: FiringID
    /// 1 for the first nag.
    public var number: Int
    /// When it fires (UTC).
    public var at: Date

    /// Creates a nag.
    public init(firingId: FiringID, number: Int, at: Date) {
        self.firingId = firingId
        self.number = number
        self.at = at
    }
}

extension NagPolicy: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case count, interval
    }

    /// Decodes `{"count", "interval"}`, the interval as seconds or a duration string.
    /// - Throws: `DecodingError` for a missing field, a count that is not a whole number, a
    ///   malformed duration, or an unknown key (an ``UnknownFieldError`` underneath); ranges
    ///   are checked by ``validate()``.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        count = try container.decodeNumber(Int.self, forKey: .count, expected: "a whole number")
        interval = try decodeSeconds(from: container, forKey: .interval)
    }

    /// Encodes `{"count", "interval"}` with the interval in seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encode(interval, forKey: .interval)
    }
}

extension Firing {
    /// The firing to deliver for `nag`: the same reminder, recipient and content, with the
    /// nag's id and instant and no badge change (re-alerting must not move the badge;
    /// the nag shares its firing's delivered-list entry).
    public func makeNag(_ nag: Nag) -> Firing {
        var copy = self
        copy.firingId = nag.firingId
        copy.dueAt = nag.at
        copy.content.badgeChange = nil
        copy.attempt = 1
        copy.late = false
        return copy
    }
}

/// Decodes seconds given as a JSON number or as a duration string such as `"10m"`.
func decodeSeconds<Key: CodingKey>(from container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> Double {
    if let seconds = try? container.decode(Double.self, forKey: key) { return seconds }
    let text = try container.decode(String.self, forKey: key)
    do {
        return try DurationParser.parseSeconds(text)
    } catch {
        throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: error.message)
    }
}
