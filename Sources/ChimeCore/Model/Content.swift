import Foundation

/// What a firing shows: the `UNNotificationContent` / `UILocalNotification` fields.
///
/// JSON shape: `{"title": "...", "body": "...", "action": "...", "launchImage": "...",
/// "sound": "default" | "<name>" | absent (silent), "badge": Int | "+1", "userInfo": {...},
/// "category": "...", "threadId": "...", "subtitle": "...", "interruptionLevel": "passive" |
/// "active" | "timeSensitive" | "critical", "relevanceScore": 0...1, "targetContentIdentifier":
/// "...", "filterCriteria": "...", "hasAction": Bool, "unhandled": "stack" | "replace" | "skip",
/// "collapseKey": "..."}`; every field is optional. `"badge"` is a
/// ``BadgeChange``: a number as before, or `"+1"` for the relative mode. The defaults
/// (`interruptionLevel` `"active"`, `hasAction` `true`, `unhandled` `"stack"`) are omitted when encoding, so content
/// that does not use the newer fields encodes as it did before they existed.
public struct Content: Codable, Hashable, Sendable {
    /// The alert title.
    public var title: String?
    /// The alert text (`alertBody`).
    public var body: String?
    /// The title of the default action (`alertAction`, "slide to …").
    public var action: String?
    /// The launch image name shown when the app opens from the notification.
    public var launchImage: String?
    /// `"default"`, a sound name, or `nil` for no sound.
    public var sound: String?
    /// What the firing does to the recipient's badge (JSON key `"badge"`); `nil` leaves it.
    public var badgeChange: BadgeChange?
    /// Application data delivered with the firing; property-list types only.
    public var userInfo: [String: PropertyListValue]?
    /// The category identifier that selects the actions shown with the notification.
    public var category: String?
    /// Groups related notifications (`threadIdentifier`).
    public var threadId: String?
    /// The fields added with the attention model, boxed: `nil` when every one has its
    /// default, so content that does not use them is as small (and as cheap to copy, in every
    /// firing and reminder entry) as before they existed; one pointer when it does.
    private var attention: AttentionBox?

    /// A line under the title (`subtitle`).
    public var subtitle: String? {
        get { attention?.fields.subtitle }
        set { changeAttention { $0.subtitle = newValue } }
    }
    /// How urgently the firing asks for attention (`interruptionLevel`); `.active` by default.
    public var interruptionLevel: InterruptionLevel {
        get { attention?.fields.interruptionLevel ?? .active }
        set { changeAttention { $0.interruptionLevel = newValue } }
    }
    /// How the firing ranks among the recipient's others in a summary, 0 to 1 inclusive
    /// (`relevanceScore`); `nil` counts as 0.
    public var relevanceScore: Double? {
        get { attention?.fields.relevanceScore }
        set { changeAttention { $0.relevanceScore = newValue } }
    }
    /// The identifier of the window or content the notification opens (`targetContentIdentifier`).
    public var targetContentIdentifier: String? {
        get { attention?.fields.targetContentIdentifier }
        set { changeAttention { $0.targetContentIdentifier = newValue } }
    }
    /// The Focus filter criteria that let the notification through (`filterCriteria`).
    public var filterCriteria: String? {
        get { attention?.fields.filterCriteria }
        set { changeAttention { $0.filterCriteria = newValue } }
    }
    /// Whether the alert shows its action button (`UILocalNotification.hasAction`); `true` by default.
    public var hasAction: Bool {
        get { attention?.fields.hasAction ?? true }
        set { changeAttention { $0.hasAction = newValue } }
    }
    /// What this firing does when an earlier firing of its reminder is still unhandled on the
    /// delivered list; `.stack` by default.
    public var unhandled: UnhandledPolicy {
        get { attention?.fields.unhandled ?? .stack }
        set { changeAttention { $0.unhandled = newValue } }
    }
    /// A delivered firing of the recipient with the same key leaves the delivered list when
    /// this one is delivered (APNs `apns-collapse-id`, FCM `collapse_key`); at most 64 bytes.
    public var collapseKey: String? {
        get { attention?.fields.collapseKey }
        set { changeAttention { $0.collapseKey = newValue } }
    }

    /// Changes the boxed fields: a new box (values stay immutable and shareable), or none when
    /// every field is back to its default; nothing when the change changes nothing.
    private mutating func changeAttention(_ change: (inout AttentionFields) -> Void) {
        let old = attention?.fields ?? AttentionFields()
        var fields = old
        change(&fields)
        guard fields != old else { return }
        attention = AttentionBox.holding(fields)
    }

    /// Creates content; `badge` is shorthand for `badgeChange: .set(badge)` (give one of them).
    public init(
        title: String? = nil, body: String? = nil, action: String? = nil,
        launchImage: String? = nil, sound: String? = nil, badge: Int? = nil,
        badgeChange: BadgeChange? = nil, userInfo: [String: PropertyListValue]? = nil,
        category: String? = nil, threadId: String? = nil, subtitle: String? = nil,
        interruptionLevel: InterruptionLevel = .active, relevanceScore: Double? = nil,
        targetContentIdentifier: String? = nil, filterCriteria: String? = nil, hasAction: Bool = true,
        unhandled: UnhandledPolicy = .stack, collapseKey: String? = nil
    ) {
        precondition(badge == nil || badgeChange == nil, "give Content either badge or badgeChange, not both")
        self.title = title
        self.body = body
        self.action = action
        self.launchImage = launchImage
        self.sound = sound
        self.badgeChange = badgeChange ?? badge.map(BadgeChange.set)
        self.userInfo = userInfo
        self.category = category
        self.threadId = threadId
        self.attention = AttentionBox.holding(
            AttentionFields(
                subtitle: subtitle, interruptionLevel: interruptionLevel, relevanceScore: relevanceScore,
                targetContentIdentifier: targetContentIdentifier, filterCriteria: filterCriteria, hasAction: hasAction,
                unhandled: unhandled, collapseKey: collapseKey))
    }

    /// The longest `collapseKey`, in UTF-8 bytes (APNs' limit on `apns-collapse-id`).
    public static let maximumCollapseKeyLength = 64

    /// The deepest `userInfo` nesting accepted.
    public static let maximumUserInfoDepth = 32

    /// Checks the content against the model's rules.
    /// - Parameter maximumUserInfoBytes: the limit on the JSON size of `userInfo`, in bytes.
    /// - Throws: `ValidationError` (`.invalidArgument` for a too-deep `userInfo`, an empty
    ///   sound, a `relevanceScore` outside 0...1 or not finite, or an empty or over-long
    ///   `collapseKey`; `.tooLarge` for an
    ///   oversized `userInfo`).
    public func validate(maximumUserInfoBytes: Int = 4096) throws(ValidationError) {
        if let userInfo {
            let depth = PropertyListValue.dictionary(userInfo).depth
            if depth > Self.maximumUserInfoDepth {
                throw ValidationError(
                    .invalidArgument, field: "content.userInfo",
                    "is nested \(depth) levels deep; at most \(Self.maximumUserInfoDepth) are allowed")
            }
            let size = (try? JSONEncoder().encode(userInfo).count) ?? 0
            if size > maximumUserInfoBytes {
                throw ValidationError(
                    .tooLarge, field: "content.userInfo",
                    "is \(size) bytes of JSON; at most \(maximumUserInfoBytes) are allowed")
            }
        }
        if let sound, sound.isEmpty {
            throw ValidationError(
                .invalidArgument, field: "content.sound", "must be \"default\", a sound name, or absent")
        }
        if let collapseKey, collapseKey.isEmpty || collapseKey.utf8.count > Self.maximumCollapseKeyLength {
            throw ValidationError(
                .invalidArgument, field: "content.collapseKey",
                "must be 1 to \(Self.maximumCollapseKeyLength) bytes of UTF-8, not \(collapseKey.utf8.count)")
        }
        if let relevanceScore, !(0...1).contains(relevanceScore) {
            throw ValidationError(
                .invalidArgument, field: "content.relevanceScore", "is \(relevanceScore); it must lie in 0...1")
        }
    }

    /// The absolute badge number of a ``BadgeChange/set(_:)`` change: > 0 sets the
    /// recipient's badge, 0 leaves it, < 0 clears it; `nil` for no change and for
    /// ``BadgeChange/increment``. Setting it stores `.set(newValue)`. Prefer ``badgeChange``.
    public var badge: Int? {
        get {
            if case .set(let number) = badgeChange { return number }
            return nil
        }
        set { badgeChange = newValue.map(BadgeChange.set) }
    }

    /// Whether the content shows alert text (title, subtitle, body, action title or launch image).
    public var hasAlertText: Bool {
        title != nil || body != nil || action != nil || launchImage != nil || subtitle != nil
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case title, body, action, launchImage, sound, badge, userInfo, category, threadId
        case subtitle, interruptionLevel, relevanceScore, targetContentIdentifier, filterCriteria, hasAction
        case unhandled, collapseKey
    }

    /// The JSON keys of content, in declaration order (what a reminder's `unknown_field` hint
    /// points into `content`).
    public static let jsonKeys: [String] = CodingKeys.allCases.map(\.stringValue)

    /// Decodes the JSON shape above; every key is optional.
    /// - Throws: `DecodingError` for a wrongly typed field, a `null` inside `userInfo`, a
    ///   badge that is neither a whole number nor `"+1"`, or an unknown key (an
    ///   ``UnknownFieldError`` underneath).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        body = try container.decodeIfPresent(String.self, forKey: .body)
        action = try container.decodeIfPresent(String.self, forKey: .action)
        launchImage = try container.decodeIfPresent(String.self, forKey: .launchImage)
        sound = try container.decodeIfPresent(String.self, forKey: .sound)
        badgeChange = try container.decodeIfPresent(BadgeChange.self, forKey: .badge)
        userInfo = try container.decodeIfPresent([String: PropertyListValue].self, forKey: .userInfo)
        category = try container.decodeIfPresent(String.self, forKey: .category)
        threadId = try container.decodeIfPresent(String.self, forKey: .threadId)
        attention = AttentionBox.holding(
            AttentionFields(
                subtitle: try container.decodeIfPresent(String.self, forKey: .subtitle),
                interruptionLevel: try container.decodeIfPresent(InterruptionLevel.self, forKey: .interruptionLevel) ?? .active,
                relevanceScore: try container.decodeIfPresent(Double.self, forKey: .relevanceScore),
                targetContentIdentifier: try container.decodeIfPresent(String.self, forKey: .targetContentIdentifier),
                filterCriteria: try container.decodeIfPresent(String.self, forKey: .filterCriteria),
                hasAction: try container.decodeIfPresent(Bool.self, forKey: .hasAction) ?? true,
                unhandled: try container.decodeIfPresent(UnhandledPolicy.self, forKey: .unhandled) ?? .stack,
                collapseKey: try container.decodeIfPresent(String.self, forKey: .collapseKey)))
    }

    /// Encodes the JSON shape above, omitting absent fields.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(body, forKey: .body)
        try container.encodeIfPresent(action, forKey: .action)
        try container.encodeIfPresent(launchImage, forKey: .launchImage)
        try container.encodeIfPresent(sound, forKey: .sound)
        try container.encodeIfPresent(badgeChange, forKey: .badge)
        try container.encodeIfPresent(userInfo, forKey: .userInfo)
        try container.encodeIfPresent(category, forKey: .category)
        try container.encodeIfPresent(threadId, forKey: .threadId)
        try container.encodeIfPresent(subtitle, forKey: .subtitle)
        if interruptionLevel != .active { try container.encode(interruptionLevel, forKey: .interruptionLevel) }
        try container.encodeIfPresent(relevanceScore, forKey: .relevanceScore)
        try container.encodeIfPresent(targetContentIdentifier, forKey: .targetContentIdentifier)
        try container.encodeIfPresent(filterCriteria, forKey: .filterCriteria)
        if !hasAction { try container.encode(false, forKey: .hasAction) }
        if unhandled != .stack { try container.encode(unhandled, forKey: .unhandled) }
        try container.encodeIfPresent(collapseKey, forKey: .collapseKey)
    }

    /// Whether any field added with the attention model is given (a subtitle, a level other
    /// than `.active`, a relevance score, a target, filter criteria, `hasAction` false, an
    /// `unhandled` policy other than `.stack` or a collapse key): the binary forms write those
    /// fields only then, so older content costs nothing more.
    public var hasAttentionFields: Bool { attention != nil }
}

/// The attention model's fields of a ``Content``, with their defaults.
struct AttentionFields: Hashable, Sendable {
    var subtitle: String?
    var interruptionLevel = InterruptionLevel.active
    var relevanceScore: Double?
    var targetContentIdentifier: String?
    var filterCriteria: String?
    var hasAction = true
    var unhandled = UnhandledPolicy.stack
    var collapseKey: String?
}

/// An immutable box of ``AttentionFields``, shared by copies of a ``Content``; compared and
/// hashed by its fields.
final class AttentionBox: Hashable, Sendable {
    let fields: AttentionFields

    private init(_ fields: AttentionFields) { self.fields = fields }

    /// A box of `fields`, or `nil` when every field has its default.
    static func holding(_ fields: AttentionFields) -> AttentionBox? {
        fields == AttentionFields() ? nil : AttentionBox(fields)
    }

    static func == (lhs: AttentionBox, rhs: AttentionBox) -> Bool { lhs === rhs || lhs.fields == rhs.fields }

    func hash(into hasher: inout Hasher) { hasher.combine(fields) }
}
