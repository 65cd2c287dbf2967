import Foundation

/// A registered recipient: its notification settings, categories and limits, as
/// `chime register RECIPIENT --allow … --categories FILE.json` stores them.
///
/// JSON shape: `{"id": "alice", "settings": ["alert", "sound", "badge"], "categories":
/// [category, …], "zone": "Europe/Berlin", "token": "…", "maxPending": 64, "destinations":
/// [destination, …], "grants": ["provisional", "timeSensitive", "critical"], "quietHours":
/// [{"start": "22:00", "end": "07:00"}], "throttle": {"count": 5, "seconds": 3600},
/// "optedOutCategories": ["promo"], "summaryAt": ["08:00", "18:00"], "breakThrough":
/// {"categories": ["alarm"], "filterCriteria": ["work"]}, "optedOutChannels": {"*": ["fcm"],
/// "promo": ["apns"]}, "locale": "fr-CA"}` (``Destination``'s shape
/// for destinations); only `id` is required (`settings` defaults to all three, `categories`,
/// `grants` and `quietHours` to `[]`; empty `grants` and `quietHours` are omitted when
/// encoding). Re-registering
/// replaces the whole record. The badge number and the delivered list are not part of the
/// registration: they live in ``BadgeLedger``, which also exists for unregistered
/// recipients and survives re-registration. Listings use ``redacted()``, never the token.
public struct Recipient: Codable, Hashable, Sendable {
    /// What listings show instead of a configured token.
    public static let redactedToken = "<redacted>"
    /// The longest token accepted, in UTF-8 bytes.
    public static let maximumTokenLength = 1024

    /// Who this is.
    public var id: RecipientID
    /// Which parts of a notification the recipient allows.
    public var settings: NotificationSettings
    /// The categories the recipient's reminders may name in `content.category`.
    public var categories: [NotificationCategory]
    /// The recipient's IANA time zone (`Europe/Berlin`), used for wall-clock input; `nil` when
    /// not given.
    public var zone: String?
    /// The secret that `authenticationRequired` actions must present; `nil` when none is
    /// configured (such actions are then always refused).
    public var token: String?
    /// This recipient's cap on armed pending firings, overriding `maxPendingPerRecipient`;
    /// `nil` uses the configured default.
    public var maxPending: Int?
    /// Where workers deliver the recipient's firings besides the fire event (webhooks, APNs,
    /// FCM; at most ``Destination/maximumPerRecipient``); `nil` when none. In a `register`
    /// request, absent keeps the destinations already registered (they are managed with the
    /// `destinations` request); present replaces them.
    public var destinations: [Destination]?
    /// What the recipient granted beyond alert, sound and badge (provisional authorization,
    /// time-sensitive and critical levels); none by default.
    public var grants: AuthorizationGrants
    /// When passive and active firings wait (``QuietWindow``), on the wall clock of `zone`
    /// (UTC without one); none by default.
    public var quietHours: [QuietWindow]
    /// At most so many passive and active deliveries in any stretch of time; what exceeds it
    /// is held (``DeliveryThrottle``); `nil`: no throttle.
    public var throttle: DeliveryThrottle?
    /// Category identifiers the recipient opted out of: their firings are recorded as
    /// suppressed, not delivered; none by default.
    public var optedOutCategories: [String]
    /// When the recipient's scheduled summaries go out, in minutes after local midnight on
    /// the wall clock of `zone` (JSON `"summaryAt": ["08:00", "18:00"]`, at most 24): passive
    /// and active firings wait for the next one; none by default.
    public var summaryTimes: [Int]
    /// Which passive and active firings are delivered in quiet hours instead of held, by
    /// category or `filterCriteria` (``QuietHoursBreakThrough``); `nil`: none.
    public var breakThrough: QuietHoursBreakThrough?
    /// The delivery channels the recipient opted out of, for every firing or a category's
    /// (``ChannelOptOuts``); `nil`: none.
    public var optedOutChannels: ChannelOptOuts?
    /// The recipient's locale (`fr-CA`, BCP 47's shape), in which content's localizable keys
    /// resolve (``StringTables``); `nil`: the development locale.
    public var locale: String?

    /// Creates a registration without checking it; see ``validate()``.
    public init(
        id: RecipientID, settings: NotificationSettings = .all, categories: [NotificationCategory] = [],
        zone: String? = nil, token: String? = nil, maxPending: Int? = nil, destinations: [Destination]? = nil,
        grants: AuthorizationGrants = [], quietHours: [QuietWindow] = [], throttle: DeliveryThrottle? = nil,
        optedOutCategories: [String] = [], summaryTimes: [Int] = [], breakThrough: QuietHoursBreakThrough? = nil,
        optedOutChannels: ChannelOptOuts? = nil, locale: String? = nil
    ) {
        self.destinations = destinations
        self.id = id
        self.settings = settings
        self.categories = categories
        self.zone = zone
        self.token = token
        self.maxPending = maxPending
        self.grants = grants
        self.quietHours = quietHours
        self.throttle = throttle
        self.optedOutCategories = optedOutCategories
        self.summaryTimes = summaryTimes
        self.breakThrough = breakThrough
        self.optedOutChannels = optedOutChannels
        self.locale = locale
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case id, settings, categories, zone, token, maxPending
        case destinations
        case grants, quietHours, throttle, optedOutCategories
        case summaryTimes = "summaryAt"
        case breakThrough, optedOutChannels, locale
    }

    /// Decodes the JSON shape above.
    /// - Throws: `DecodingError` for a missing id, a malformed field, or an unknown key (an
    ///   ``UnknownFieldError`` underneath).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(RecipientID.self, forKey: .id)
        settings = try container.decodeIfPresent(NotificationSettings.self, forKey: .settings) ?? .all
        if container.contains(.categories), try !container.decodeNil(forKey: .categories) {
            // Counted before any element is decoded: 100,000 categories once took seconds.
            let list = try container.nestedUnkeyedContainer(forKey: .categories)
            if let count = list.count, count > Self.maximumCategories {
                throw DecodingError.dataCorruptedError(
                    forKey: .categories, in: container, debugDescription: "at most \(Self.maximumCategories) categories, not \(count)")
            }
            categories = try container.decode([NotificationCategory].self, forKey: .categories)
        } else {
            categories = []
        }
        zone = try container.decodeIfPresent(String.self, forKey: .zone)
        token = try container.decodeIfPresent(String.self, forKey: .token)
        maxPending = try container.decodeNumberIfPresent(Int.self, forKey: .maxPending, expected: "a whole number")
        destinations = try Self.decodeDestinations(from: container, forKey: .destinations)
        grants = try container.decodeIfPresent(AuthorizationGrants.self, forKey: .grants) ?? []
        if container.contains(.quietHours), try !container.decodeNil(forKey: .quietHours) {
            // Counted before any element is decoded, as categories are.
            let list = try container.nestedUnkeyedContainer(forKey: .quietHours)
            if let count = list.count, count > QuietWindow.maximumCount {
                throw DecodingError.dataCorruptedError(
                    forKey: .quietHours, in: container, debugDescription: "at most \(QuietWindow.maximumCount) quiet windows, not \(count)")
            }
            quietHours = try container.decode([QuietWindow].self, forKey: .quietHours)
        } else {
            quietHours = []
        }
        throttle = try container.decodeIfPresent(DeliveryThrottle.self, forKey: .throttle)
        if container.contains(.optedOutCategories), try !container.decodeNil(forKey: .optedOutCategories) {
            let list = try container.nestedUnkeyedContainer(forKey: .optedOutCategories)
            if let count = list.count, count > Self.maximumCategories {
                throw DecodingError.dataCorruptedError(
                    forKey: .optedOutCategories, in: container,
                    debugDescription: "at most \(Self.maximumCategories) opted-out categories, not \(count)")
            }
            optedOutCategories = try container.decode([String].self, forKey: .optedOutCategories)
        } else {
            optedOutCategories = []
        }
        summaryTimes = []
        for text in try container.decodeIfPresent([String].self, forKey: .summaryTimes) ?? [] {
            guard let minutes = QuietWindow.minutes(of: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .summaryTimes, in: container, debugDescription: "'\(text)' is not a time of day HH:MM (00:00 to 23:59)")
            }
            summaryTimes.append(minutes)
        }
        breakThrough = try container.decodeIfPresent(QuietHoursBreakThrough.self, forKey: .breakThrough)
        optedOutChannels = try container.decodeIfPresent(ChannelOptOuts.self, forKey: .optedOutChannels)
        locale = try container.decodeIfPresent(String.self, forKey: .locale)
    }

    /// Encodes the JSON shape above; absent optionals and empty `grants` are omitted, so a
    /// registration without grants encodes as it did before they existed. `breakThrough` and
    /// `optedOutChannels` are written whenever present, so every value round-trips exactly.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(settings, forKey: .settings)
        try container.encode(categories, forKey: .categories)
        try container.encodeIfPresent(zone, forKey: .zone)
        try container.encodeIfPresent(token, forKey: .token)
        try container.encodeIfPresent(maxPending, forKey: .maxPending)
        try container.encodeIfPresent(destinations, forKey: .destinations)
        if !grants.isEmpty { try container.encode(grants, forKey: .grants) }
        if !quietHours.isEmpty { try container.encode(quietHours, forKey: .quietHours) }
        try container.encodeIfPresent(throttle, forKey: .throttle)
        if !optedOutCategories.isEmpty { try container.encode(optedOutCategories, forKey: .optedOutCategories) }
        if !summaryTimes.isEmpty { try container.encode(summaryTimes.map(QuietWindow.text(ofMinutes:)), forKey: .summaryTimes) }
        // Written whenever present, even empty, so the journal's copy decodes to the value the
        // live fold stored (an empty one compares unequal to none).
        try container.encodeIfPresent(breakThrough, forKey: .breakThrough)
        try container.encodeIfPresent(optedOutChannels, forKey: .optedOutChannels)
        try container.encodeIfPresent(locale, forKey: .locale)
    }

    /// Decodes `destinations`, counted before any element is decoded.
    private static func decodeDestinations(
        from container: KeyedDecodingContainer<CodingKeys>, forKey key: CodingKeys
    ) throws -> [Destination]? {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        let list = try container.nestedUnkeyedContainer(forKey: key)
        if let count = list.count, count > Destination.maximumPerRecipient {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "at most \(Destination.maximumPerRecipient) destinations, not \(count)")
        }
        return try container.decode([Destination].self, forKey: key)
    }

    /// Categories a recipient may have at most whatever the configuration says (the
    /// coordinator's `limits.maxCategoriesPerRecipient` is at most this), checked before the
    /// categories are decoded.
    public static let maximumCategories = 10_000

    /// A copy fit for listings and events: a configured token becomes ``redactedToken``, and
    /// each destination its ``Destination/redacted()`` form (secrets and tokens masked).
    public func redacted() -> Recipient {
        var copy = self
        if copy.token != nil { copy.token = Self.redactedToken }
        copy.destinations = destinations?.map { $0.redacted() }
        return copy
    }

    /// The category named `identifier`, or `nil` when the recipient registered none by that name.
    public func category(withIdentifier identifier: String) -> NotificationCategory? {
        categories.first { $0.identifier == identifier }
    }

    /// Whether `presentedToken` matches the configured token, compared in constant time;
    /// `false` when either is missing.
    public func accepts(token presentedToken: String?) -> Bool {
        guard let token, let presentedToken else { return false }
        return isEqualInConstantTime(token, presentedToken)
    }

    /// Whether `action` may run with `presentedToken`: always for actions without
    /// `authenticationRequired`, otherwise only with the recipient's token.
    public func authorizes(_ action: NotificationAction, token presentedToken: String?) -> Bool {
        !action.authenticationRequired || accepts(token: presentedToken)
    }

    /// Checks the id, the zone, the token, the cap, the quiet hours and every category.
    /// - Throws: `ValidationError` naming the first offending field: `.invalidArgument` for
    ///   `recipient`, `token`, `maxPending`, `locale`, `quietHours[i]` or `categories[i]…` (see
    ///   ``validateCategories(_:)``), `.unknownTimeZone` for `zone`.
    public func validate() throws(ValidationError) {
        try id.validate()
        if let zone {
            do {
                _ = try ZoneRules.zone(named: zone)
            } catch {
                throw ValidationError(error.code, field: "zone", error.message)
            }
        }
        if let token {
            try validateIdentifier(token, field: "token", maximumLength: Self.maximumTokenLength)
            if token == Self.redactedToken {
                throw ValidationError(.invalidArgument, field: "token", "'\(token)' is reserved; choose another token")
            }
        }
        if let maxPending, maxPending < 1 {
            throw ValidationError(
                .invalidArgument, field: "maxPending",
                "must be at least 1 (leave it out for the configured default), not \(maxPending)")
        }
        if quietHours.count > QuietWindow.maximumCount {
            throw ValidationError(
                .invalidArgument, field: "quietHours", "has \(quietHours.count) windows; at most \(QuietWindow.maximumCount) are allowed")
        }
        for (index, window) in quietHours.enumerated() { try window.validate(field: "quietHours[\(index)]") }
        try throttle?.validate()
        try breakThrough?.validate()
        try optedOutChannels?.validate()
        if let locale, !StringTables.isLocale(locale) {
            throw ValidationError(
                .invalidArgument, field: "locale", "'\(locale.prefix(64))' is not a locale (language[-region…], e.g. fr or fr-CA)")
        }
        if summaryTimes.count > 24 || Set(summaryTimes).count != summaryTimes.count
            || !summaryTimes.allSatisfy({ (0..<1440).contains($0) })
        {
            throw ValidationError(.invalidArgument, field: "summaryAt", "must be at most 24 distinct times of day")
        }
        for (index, category) in optedOutCategories.enumerated() where category.isEmpty {
            throw ValidationError(.invalidArgument, field: "optedOutCategories[\(index)]", "must name a category, not be empty")
        }
        try Self.validateCategories(categories)
        try Self.validateDestinations(destinations ?? [])
    }

    /// Checks a destination list: at most ``Destination/maximumPerRecipient``, each valid (see
    /// ``Destination/validate(field:)``), no key twice.
    /// - Throws: `ValidationError` `.invalidArgument` with fields such as `destinations` or
    ///   `destinations[1].url`.
    public static func validateDestinations(_ destinations: [Destination]) throws(ValidationError) {
        guard destinations.count <= Destination.maximumPerRecipient else {
            throw ValidationError(
                .invalidArgument, field: "destinations",
                "a recipient has at most \(Destination.maximumPerRecipient) destinations, not \(destinations.count)")
        }
        var seen: Set<String> = []
        for (index, destination) in destinations.enumerated() {
            try destination.validate(field: "destinations[\(index)]")
            if !seen.insert(destination.key).inserted {
                throw ValidationError(
                    .invalidArgument, field: "destinations[\(index)]", "destination \(destination.redactedKey) appears more than once")
            }
        }
    }

    /// When a firing of `level` due at `instant` (UTC) may be delivered under the quiet
    /// hours: the end of the quiet window it falls in, on the wall clock of `zone` (UTC
    /// without one); `nil` to deliver it now — outside every window, for `timeSensitive` and
    /// `critical` (they break through), or when the zone no longer resolves. What
    /// ``breakThrough`` lets through is the caller's to check (``quietRelease(of:content:)``).
    public func quietRelease(of instant: Date, level: InterruptionLevel) -> Date? {
        guard !quietHours.isEmpty else { return nil }
        return releaseInstant(of: instant, level: level) { timeZone in
            QuietWindow.release(of: instant, windows: quietHours, in: timeZone)
        }
    }

    /// When a firing of `content` (its level as delivered) due at `instant` (UTC) may be
    /// delivered under the quiet hours: as ``quietRelease(of:level:)``, and `nil` when
    /// ``breakThrough`` lets it through by its category or filter criteria.
    public func quietRelease(of instant: Date, content: Content) -> Date? {
        guard !quietHours.isEmpty, !(breakThrough?.lets(content) ?? false) else { return nil }
        return quietRelease(of: instant, level: content.interruptionLevel)
    }

    /// When a firing of `level` that would be delivered at `instant` (UTC) goes out in the
    /// recipient's next scheduled summary: the first summary time at or after `instant` on
    /// the wall clock of `zone` (UTC without one; DST as triggers have it); `nil` without
    /// summary times, for `timeSensitive` and `critical`, or when the zone no longer resolves.
    public func summaryRelease(of instant: Date, level: InterruptionLevel) -> Date? {
        guard !summaryTimes.isEmpty else { return nil }
        return releaseInstant(of: instant, level: level) { timeZone in
            let local = ZoneRules.localDateTime(at: instant, in: timeZone)
            let today = LocalDateTime(year: local.year, month: local.month, day: local.day)
            guard today.isValid else { return nil }
            var earliest: Date?
            for day in [today, today.adding(days: 1)].compactMap({ $0 }) {
                for minutes in summaryTimes {
                    let at = ZoneRules.resolve(
                        LocalDateTime(year: day.year, month: day.month, day: day.day, hour: minutes / 60, minute: minutes % 60),
                        in: timeZone)
                    if at >= instant && earliest.map({ at < $0 }) ?? true { earliest = at }
                }
            }
            return earliest
        }
    }

    private func releaseInstant(of instant: Date, level: InterruptionLevel, _ compute: (TimeZone) -> Date?) -> Date? {
        // A zone removed from tzdata since registering delivers at once rather than guessing.
        guard !level.breaksThroughQuietHours, let timeZone = try? ZoneRules.zone(named: zone ?? "UTC") else { return nil }
        return compute(timeZone)
    }

    /// Checks a category list as `--categories FILE.json` gives it: each category valid (see
    /// `NotificationCategory.validate(field:)`) and no identifier used twice.
    /// - Throws: `ValidationError` `.invalidArgument` with fields such as
    ///   `categories[0].actions` or `categories[2].identifier`.
    public static func validateCategories(_ categories: [NotificationCategory]) throws(ValidationError) {
        var seen: Set<String> = []
        for (index, category) in categories.enumerated() {
            try category.validate(field: "categories[\(index)]")
            if !seen.insert(category.identifier).inserted {
                throw ValidationError(
                    .invalidArgument, field: "categories[\(index)].identifier",
                    "category identifier '\(category.identifier)' appears more than once")
            }
        }
    }
}

/// Whether two secrets are equal, taking the same time for every pair of the same
/// lengths whatever their contents, so response times do not reveal how much of a guessed
/// token was right. Only the lengths may leak.
public func isEqualInConstantTime(_ lhs: String, _ rhs: String) -> Bool {
    let left = Array(lhs.utf8)
    let right = Array(rhs.utf8)
    var difference = UInt(bitPattern: left.count ^ right.count)
    for index in 0..<max(left.count, right.count) {
        let leftByte = index < left.count ? left[index] : 0
        let rightByte = index < right.count ? right[index] : 0
        difference |= UInt(leftByte ^ rightByte)
    }
    return difference == 0
}
