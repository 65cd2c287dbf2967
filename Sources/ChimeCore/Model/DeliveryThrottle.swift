import Foundation

/// At most `count` deliveries to a recipient in any `seconds`-long stretch (OneSignal's
/// frequency capping, Knock's and Novu's throttle): what exceeds it is held, not lost, and
/// delivered when the stretch allows.
///
/// JSON shape: `{"count": 5, "seconds": 3600, "per": "category"}` (`seconds` also as a
/// duration string such as `"1h"`; `per` absent: the recipient). Passive and active firings
/// count and wait; `timeSensitive` and `critical` neither count nor wait, as with quiet hours.
public struct DeliveryThrottle: Hashable, Sendable {
    /// What one allowance of `count` covers.
    public enum Scope: String, Codable, Hashable, Sendable, CaseIterable {
        /// Every throttled firing of the recipient (the default).
        case recipient
        /// Each `content.category` on its own (firings without one share an allowance).
        case category
        /// Each `content.threadId` on its own (firings without one share an allowance).
        case thread
    }

    /// The most deliveries in any stretch of `seconds`, 1–10,000.
    public var count: Int
    /// The stretch, in seconds, 1 to 604,800 (a week).
    public var seconds: Double
    /// What one allowance covers: the recipient, each category or each thread.
    public var per: Scope

    /// The most categories or threads whose slots are kept per recipient: past it, those whose
    /// slots no longer limit anything go first, then the one delivered to longest ago (which
    /// may let that one through sooner; a bound on what a recipient's content can make the
    /// coordinator keep).
    public static let maximumGroups = 1000

    /// Creates a throttle; not checked, see ``validate()``.
    public init(count: Int, seconds: Double, per: Scope = .recipient) {
        self.count = count
        self.seconds = seconds
        self.per = per
    }

    /// The allowance a firing of `content` counts against: `""` for the recipient's,
    /// else its category or thread (`""` without one).
    public func group(of content: Content) -> String {
        switch per {
        case .recipient: ""
        case .category: content.category ?? ""
        case .thread: content.threadId ?? ""
        }
    }

    /// Checks the ranges above.
    /// - Throws: `ValidationError` `.invalidArgument` (field `throttle`).
    public func validate() throws(ValidationError) {
        guard (1...10_000).contains(count) else {
            throw ValidationError(.invalidArgument, field: "throttle.count", "must be 1 to 10000, not \(count)")
        }
        guard (1...604_800).contains(seconds) else {
            throw ValidationError(.invalidArgument, field: "throttle.seconds", "must be 1 s to a week, not \(seconds)")
        }
    }

    /// Parses the command line's `N/DURATION[/category|/thread]` (`5/1h`, `1/90s`,
    /// `2/1h/category`).
    /// - Throws: `ValidationError` `.invalidArgument` (field `throttle`) for anything else.
    public init(parsing text: String) throws(ValidationError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, let count = Int(parts[0]),
            let seconds = try? DurationParser.parseSeconds(String(parts[1])),
            let per = parts.count == 3 ? Scope(rawValue: String(parts[2])) : .recipient, per != .recipient || parts.count == 2
        else {
            throw ValidationError(
                .invalidArgument, field: "throttle", "'\(text)' is not N/DURATION[/category|/thread] such as 5/1h or 2/1h/category")
        }
        self.init(count: count, seconds: seconds, per: per)
        try validate()
    }

    /// The delivery instant of a firing that would be delivered at `planned` (UTC), given
    /// `slots`, the instants already given to the recipient's latest deliveries (ascending,
    /// the last `count` at least): `planned`, or later when `count` slots lie within `seconds`
    /// before it, or when a later slot was already given (deliveries keep their order).
    ///
    /// Slots are handed out in ascending order, so for the new slot t only earlier slots
    /// count: t is the latest of `planned`, the last slot, and the `count`-th latest slot plus
    /// `seconds`; then at most `count` slots fall in any stretch (t − seconds, t].
    public func slot(for planned: Date, after slots: [Date]) -> Date {
        var slot = planned
        if let last = slots.last, last > slot { slot = last }
        if slots.count >= count {
            let boundary = slots[slots.count - count].addingTimeInterval(seconds)
            if boundary > slot { slot = boundary }
        }
        return slot
    }
}

extension DeliveryThrottle: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case count, seconds, per
    }

    /// Decodes the JSON shape above (`count` and `seconds` required).
    /// - Throws: `DecodingError` for a missing or malformed field or an unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        count = try container.decodeNumber(Int.self, forKey: .count, expected: "a whole number")
        seconds = try decodeSeconds(from: container, forKey: .seconds)
        per = try container.decodeIfPresent(Scope.self, forKey: .per) ?? .recipient
    }

    /// Encodes the JSON shape above, `seconds` as a number, `per` only when not the recipient
    /// (so a recipient-wide throttle encodes as before `per` existed).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encode(seconds, forKey: .seconds)
        if per != .recipient { try container.encode(per, forKey: .per) }
    }
}
