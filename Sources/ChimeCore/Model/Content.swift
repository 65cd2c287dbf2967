import Foundation

/// What a firing shows: the `UNNotificationContent` / `UILocalNotification` fields.
///
/// JSON shape: `{"title": "...", "body": "...", "action": "...", "launchImage": "...",
/// "sound": "default" | "<name>" | absent (silent), "badge": Int | "+1", "userInfo": {...},
/// "category": "...", "threadId": "...", "subtitle": "...", "interruptionLevel": "passive" |
/// "active" | "timeSensitive" | "critical", "relevanceScore": 0...1, "targetContentIdentifier":
/// "...", "filterCriteria": "...", "hasAction": Bool, "unhandled": "stack" | "replace" | "skip",
/// "collapseKey": "...", "attachments": [attachment, …], "titleKey": "...", "titleArgs": ["..."],
/// "bodyKey": "...", "bodyArgs": ["..."], "soundVolume": 0...1, "throttled": "hold" | "coalesce" |
/// "drop"}` (``NotificationAttachment``'s
/// shape for attachments); every field is optional. `"badge"` is a
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

    /// Files shown with the notification (``NotificationAttachment``), at most
    /// ``NotificationAttachment/maximumCount``; `nil` when none.
    public var attachments: [NotificationAttachment]? {
        get { attention?.fields.attachments }
        set { changeAttention { $0.attachments = newValue } }
    }
    /// The key of the title's format in the string tables (`titleLocKey`,
    /// `localizedUserNotificationString(forKey:arguments:)`), resolved in the recipient's
    /// locale when the firing is dispatched (``StringTables``); `title` is the fallback text.
    public var titleKey: String? {
        get { attention?.fields.titleKey }
        set { changeAttention { $0.titleKey = newValue } }
    }
    /// The arguments of `titleKey`'s format (`%@`, `%1$@`), in order; `nil` when none.
    public var titleArgs: [String]? {
        get { attention?.fields.titleArgs }
        set { changeAttention { $0.titleArgs = newValue } }
    }
    /// The key of the body's format in the string tables (`loc-key`); `body` is the fallback.
    public var bodyKey: String? {
        get { attention?.fields.bodyKey }
        set { changeAttention { $0.bodyKey = newValue } }
    }
    /// The arguments of `bodyKey`'s format, in order; `nil` when none.
    public var bodyArgs: [String]? {
        get { attention?.fields.bodyArgs }
        set { changeAttention { $0.bodyArgs = newValue } }
    }
    /// Makes `sound` a critical sound played at this volume, 0 to 1 inclusive
    /// (`UNNotificationSound.criticalSoundNamed(_:withAudioVolume:)`); it plays as critical
    /// only when the firing is delivered at the `critical` level (the recipient granted it),
    /// otherwise as the plain sound. Needs `sound`.
    public var soundVolume: Double? {
        get { attention?.fields.soundVolume }
        set { changeAttention { $0.soundVolume = newValue } }
    }

    /// What an occurrence does when the recipient's throttle has no room for it
    /// (``ThrottledPolicy``); `.hold` by default.
    public var throttled: ThrottledPolicy {
        get { attention?.fields.throttled ?? .hold }
        set { changeAttention { $0.throttled = newValue } }
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
        unhandled: UnhandledPolicy = .stack, collapseKey: String? = nil,
        attachments: [NotificationAttachment]? = nil, titleKey: String? = nil, titleArgs: [String]? = nil,
        bodyKey: String? = nil, bodyArgs: [String]? = nil, soundVolume: Double? = nil, throttled: ThrottledPolicy = .hold
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
                unhandled: unhandled, collapseKey: collapseKey, attachments: attachments, titleKey: titleKey,
                titleArgs: titleArgs, bodyKey: bodyKey, bodyArgs: bodyArgs, soundVolume: soundVolume, throttled: throttled))
    }

    /// The longest localizable key, in UTF-8 bytes.
    public static let maximumKeyLength = 256
    /// The most arguments of one localizable key.
    public static let maximumKeyArguments = 16
    /// The longest argument of a localizable key, in UTF-8 bytes.
    public static let maximumKeyArgumentLength = 256

    /// The longest `collapseKey`, in UTF-8 bytes (APNs' limit on `apns-collapse-id`).
    public static let maximumCollapseKeyLength = 64

    /// The deepest `userInfo` nesting accepted.
    public static let maximumUserInfoDepth = 32

    /// Checks the content against the model's rules.
    /// - Parameter maximumUserInfoBytes: the limit on the JSON size of `userInfo`, in bytes.
    /// - Throws: `ValidationError` (`.invalidArgument` for a too-deep `userInfo`, an empty
    ///   sound, a `relevanceScore` outside 0...1 or not finite, an empty or over-long
    ///   `collapseKey`, more than ``NotificationAttachment/maximumCount`` attachments or one
    ///   that ``NotificationAttachment/validate(field:)`` refuses, two attachments with one
    ///   identifier, an empty or over-long `titleKey`/`bodyKey`, arguments without their key or
    ///   more than ``maximumKeyArguments`` or one over ``maximumKeyArgumentLength`` bytes, or a `soundVolume` without a sound or outside 0...1;
    ///   `.tooLarge` for an oversized `userInfo`).
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
        if hasAttentionFields { try validateLaterFields() }
    }

    /// The checks of the fields added after the attention model's first ones (attachments,
    /// localizable keys, critical volume).
    private func validateLaterFields() throws(ValidationError) {
        if let attachments {
            if attachments.count > NotificationAttachment.maximumCount {
                throw ValidationError(
                    .invalidArgument, field: "content.attachments",
                    "has \(attachments.count) attachments; at most \(NotificationAttachment.maximumCount) are allowed")
            }
            var identifiers = Set<String>()
            for (index, attachment) in attachments.enumerated() {
                try attachment.validate(field: "content.attachments[\(index)]")
                if !identifiers.insert(attachment.identifier).inserted {
                    throw ValidationError(
                        .invalidArgument, field: "content.attachments[\(index)].identifier",
                        "'\(attachment.identifier)' names an earlier attachment too")
                }
            }
        }
        for (name, key, arguments) in [("title", titleKey, titleArgs), ("body", bodyKey, bodyArgs)] {
            if let key, key.isEmpty || key.utf8.count > Self.maximumKeyLength {
                throw ValidationError(
                    .invalidArgument, field: "content.\(name)Key",
                    "must be 1 to \(Self.maximumKeyLength) bytes of UTF-8, not \(key.utf8.count)")
            }
            if let arguments {
                if key == nil {
                    throw ValidationError(.invalidArgument, field: "content.\(name)Args", "needs content.\(name)Key")
                }
                if arguments.count > Self.maximumKeyArguments {
                    throw ValidationError(
                        .invalidArgument, field: "content.\(name)Args",
                        "has \(arguments.count) arguments; at most \(Self.maximumKeyArguments) are allowed")
                }
                if let index = arguments.firstIndex(where: { $0.utf8.count > Self.maximumKeyArgumentLength }) {
                    throw ValidationError(
                        .invalidArgument, field: "content.\(name)Args[\(index)]",
                        "is \(arguments[index].utf8.count) bytes; an argument has at most \(Self.maximumKeyArgumentLength)")
                }
            }
        }
        if let soundVolume {
            if sound == nil {
                throw ValidationError(.invalidArgument, field: "content.soundVolume", "needs content.sound (the critical sound's name)")
            }
            if !(0...1).contains(soundVolume) {
                throw ValidationError(.invalidArgument, field: "content.soundVolume", "is \(soundVolume); it must lie in 0...1")
            }
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

    /// Whether the content shows alert text (title, subtitle, body, their localizable keys,
    /// action title or launch image).
    public var hasAlertText: Bool {
        title != nil || body != nil || action != nil || launchImage != nil || subtitle != nil || titleKey != nil
            || bodyKey != nil
    }

    /// Whether the content names a localizable key (`titleKey` or `bodyKey`): what dispatch
    /// resolves (``StringTables/localized(_:locale:)``). One comparison for content without the
    /// attention model's fields.
    public var hasLocalizableKeys: Bool { attention.map { $0.fields.titleKey != nil || $0.fields.bodyKey != nil } ?? false }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case title, body, action, launchImage, sound, badge, userInfo, category, threadId
        case subtitle, interruptionLevel, relevanceScore, targetContentIdentifier, filterCriteria, hasAction
        case unhandled, collapseKey
        case attachments, titleKey, titleArgs, bodyKey, bodyArgs, soundVolume, throttled
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
        try self.init(fieldsOf: decoder)
    }

    /// Decodes the content's keys of `decoder`'s object as ``init(from:)`` does, ignoring any
    /// other key: a fire event carries its content's keys beside its own.
    /// - Throws: `DecodingError` for a wrongly typed field.
    public init(fieldsOf decoder: any Decoder) throws {
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
                collapseKey: try container.decodeIfPresent(String.self, forKey: .collapseKey),
                attachments: try Self.decodeAttachments(from: container),
                titleKey: try container.decodeIfPresent(String.self, forKey: .titleKey),
                titleArgs: try container.decodeIfPresent([String].self, forKey: .titleArgs),
                bodyKey: try container.decodeIfPresent(String.self, forKey: .bodyKey),
                bodyArgs: try container.decodeIfPresent([String].self, forKey: .bodyArgs),
                soundVolume: try container.decodeIfPresent(Double.self, forKey: .soundVolume),
                throttled: try container.decodeIfPresent(ThrottledPolicy.self, forKey: .throttled) ?? .hold))
    }

    /// The attachments, counted before any is decoded (a list of a million would otherwise
    /// be decoded in full before validation refuses it).
    private static func decodeAttachments(from container: KeyedDecodingContainer<CodingKeys>) throws -> [NotificationAttachment]? {
        guard container.contains(.attachments), try !container.decodeNil(forKey: .attachments) else { return nil }
        let list = try container.nestedUnkeyedContainer(forKey: .attachments)
        if let count = list.count, count > NotificationAttachment.maximumCount {
            throw DecodingError.dataCorruptedError(
                forKey: .attachments, in: container,
                debugDescription: "at most \(NotificationAttachment.maximumCount) attachments, not \(count)")
        }
        return try container.decode([NotificationAttachment].self, forKey: .attachments)
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
        guard hasAttentionFields else { return }
        try container.encodeIfPresent(attachments, forKey: .attachments)
        try container.encodeIfPresent(titleKey, forKey: .titleKey)
        try container.encodeIfPresent(titleArgs, forKey: .titleArgs)
        try container.encodeIfPresent(bodyKey, forKey: .bodyKey)
        try container.encodeIfPresent(bodyArgs, forKey: .bodyArgs)
        try container.encodeIfPresent(soundVolume, forKey: .soundVolume)
        if throttled != .hold { try container.encode(throttled, forKey: .throttled) }
    }

    /// Whether any field added with the attention model is given (a subtitle, a level other
    /// than `.active`, a relevance score, a target, filter criteria, `hasAction` false, an
    /// `unhandled` policy other than `.stack`, a collapse key, attachments, localizable keys or
    /// a critical sound volume): the binary forms write those
    /// fields only then, so older content costs nothing more.
    public var hasAttentionFields: Bool { attention != nil }

    /// Whether any of the later attention fields is given (attachments, `titleKey`,
    /// `titleArgs`, `bodyKey`, `bodyArgs`, `soundVolume`, `throttled` other than `.hold`): the
    /// dispatch frame writes them in a block of their own only then.
    public var hasExtendedFields: Bool {
        guard let fields = attention?.fields else { return false }
        return fields.attachments != nil || fields.titleKey != nil || fields.titleArgs != nil || fields.bodyKey != nil
            || fields.bodyArgs != nil || fields.soundVolume != nil || fields.throttled != .hold
    }
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
    var attachments: [NotificationAttachment]?
    var titleKey: String?
    var titleArgs: [String]?
    var bodyKey: String?
    var bodyArgs: [String]?
    var soundVolume: Double?
    var throttled = ThrottledPolicy.hold
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
