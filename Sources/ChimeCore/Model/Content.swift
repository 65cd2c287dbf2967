import Foundation

/// What a firing shows: the `UNNotificationContent` / `UILocalNotification` fields.
///
/// JSON shape: `{"title": "...", "body": "...", "action": "...", "launchImage": "...",
/// "sound": "default" | "<name>" | absent (silent), "badge": Int, "userInfo": {...},
/// "category": "...", "threadId": "..."}`; every field is optional.
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
    /// > 0 sets the recipient's badge to the number, 0 leaves it, < 0 clears it; `nil` leaves it.
    public var badge: Int?
    /// Application data delivered with the firing; property-list types only.
    public var userInfo: [String: PropertyListValue]?
    /// The category identifier that selects the actions shown with the notification.
    public var category: String?
    /// Groups related notifications (`threadIdentifier`).
    public var threadId: String?

    public init(
        title: String? = nil, body: String? = nil, action: String? = nil,
        launchImage: String? = nil, sound: String? = nil, badge: Int? = nil,
        userInfo: [String: PropertyListValue]? = nil, category: String? = nil,
        threadId: String? = nil
    ) {
        self.title = title
        self.body = body
        self.action = action
        self.launchImage = launchImage
        self.sound = sound
        self.badge = badge
        self.userInfo = userInfo
        self.category = category
        self.threadId = threadId
    }

    /// The deepest `userInfo` nesting accepted.
    public static let maximumUserInfoDepth = 32

    /// Checks the content against the model's rules.
    /// - Parameter maximumUserInfoBytes: the limit on the JSON size of `userInfo`, in bytes.
    /// - Throws: `ValidationError` (`.invalidArgument` for a too-deep `userInfo` or a
    ///   `"none"` sound spelled oddly, `.tooLarge` for an oversized `userInfo`).
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
    }
}
