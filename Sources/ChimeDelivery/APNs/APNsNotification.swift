import ChimeCore
import Foundation

/// One APNs request made from a delivery attempt, before the provider token is added: the
/// path, the `apns-*` headers and the JSON payload (Apple, "Sending notification requests to
/// APNs" and "Generating a remote notification"). Pure: no I/O, no clock.
public struct APNsNotification: Sendable, Equatable {
    /// `/3/device/<token>`.
    public var path: String
    /// `apns-topic`, `apns-push-type`, `apns-priority`, `apns-expiration`, `apns-id` and, when
    /// the content has one, `apns-collapse-id`, in that order.
    public var headers: [(name: String, value: String)]
    /// `{"aps": {...}, <userInfo keys>...}` with sorted keys.
    public var body: Data

    /// The largest payload APNs accepts for a regular notification, in bytes.
    public static let maximumPayloadBytes = 4096

    /// The request for `attempt` to `device`.
    /// - Parameter collapseID: the `apns-collapse-id` (at most 64 bytes); `nil` takes the
    ///   content's `collapseKey` when it fits in 64 bytes.
    public init(attempt: DeliveryAttempt, device: APNsDestination, apnsID: String, collapseID: String? = nil) {
        let content = attempt.content
        let isBackground = !content.hasAlertText && content.sound == nil && content.badgeChange == nil
        path = "/3/device/\(device.token)"
        headers = [
            ("apns-topic", device.topic),
            ("apns-push-type", isBackground ? "background" : "alert"),
            ("apns-priority", isBackground ? "5" : "10"),
            ("apns-expiration", String(Self.expiration(attempt.expiresAt))),
            ("apns-id", apnsID),
        ]
        if let collapse = collapseID ?? content.collapseKey.flatMap({ $0.utf8.count <= 64 ? $0 : nil }) {
            headers.append(("apns-collapse-id", collapse))
        }
        body = Self.payload(content, isBackground: isBackground).data
    }

    /// `apns-expiration`: whole seconds since 1970 of `expiresAt` (rounded down), 0 (deliver
    /// once, store nothing) when there is none or it is before 1970.
    static func expiration(_ expiresAt: Date?) -> Int64 {
        guard let seconds = expiresAt?.timeIntervalSince1970, seconds.isFinite, seconds >= 1 else { return 0 }
        return seconds >= 1e15 ? Int64(1e15) : Int64(seconds.rounded(.down))
    }

    /// The payload: `aps` from the content's alert (title, subtitle, body), badge, sound,
    /// category, thread, and the UserNotifications fields (`interruption-level` when not the
    /// default `active`: `passive`, `time-sensitive`, `critical`; `relevance-score`;
    /// `target-content-id`; `filter-criteria`), then `userInfo`'s keys beside it (an `aps` key
    /// in `userInfo` is dropped: Apple's wins). A `soundVolume` makes `sound` the critical form
    /// `{"critical": 1, "name", "volume"}` when the level delivered is `critical` (the plain
    /// name otherwise). Attachments set `mutable-content` and travel as
    /// ``attachmentsKey`` beside `aps`, for the app's notification service extension to
    /// download (APNs carries no files). Localizable keys arrive resolved in `title` and `body`
    /// (the coordinator resolved them): no `loc-key` is sent, so a device never shows a key its
    /// bundle lacks.
    static func payload(_ content: Content, isBackground: Bool) -> PushJSON {
        var alert: [String: PushJSON] = [:]
        if let title = content.title { alert["title"] = .string(title) }
        if let subtitle = content.subtitle { alert["subtitle"] = .string(subtitle) }
        if let body = content.body { alert["body"] = .string(body) }
        if let launchImage = content.launchImage { alert["launch-image"] = .string(launchImage) }
        if let action = content.action { alert["action-loc-key"] = .string(action) }
        var aps: [String: PushJSON] = [:]
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let badge = badge(content.badgeChange) { aps["badge"] = .integer(Int64(badge)) }
        if let sound = content.sound {
            if let volume = content.soundVolume, content.interruptionLevel == .critical {
                aps["sound"] = .object(["critical": .integer(1), "name": .string(sound), "volume": .real(volume)])
            } else {
                aps["sound"] = .string(sound)
            }
        }
        if let category = content.category { aps["category"] = .string(category) }
        if let threadId = content.threadId { aps["thread-id"] = .string(threadId) }
        if isBackground { aps["content-available"] = .integer(1) }
        let attachments = content.attachments ?? []
        if !attachments.isEmpty { aps["mutable-content"] = .integer(1) }
        switch content.interruptionLevel {
        case .active: break
        case .passive: aps["interruption-level"] = .string("passive")
        case .timeSensitive: aps["interruption-level"] = .string("time-sensitive")
        case .critical: aps["interruption-level"] = .string("critical")
        }
        if let score = content.relevanceScore { aps["relevance-score"] = .real(score) }
        if let target = content.targetContentIdentifier { aps["target-content-id"] = .string(target) }
        if let criteria = content.filterCriteria { aps["filter-criteria"] = .string(criteria) }
        var root = (content.userInfo ?? [:]).mapValues(PushJSON.init)
        root["aps"] = .object(aps)
        if !attachments.isEmpty {
            root[attachmentsKey] = .array(attachments.map { attachment in
                .object([
                    "identifier": .string(attachment.identifier), "url": .string(attachment.url), "type": .string(attachment.type),
                    "size": .integer(Int64(attachment.size)),
                ])
            })
        }
        return .object(root)
    }

    /// The payload key beside `aps` that lists the attachments (`[{identifier, url, type,
    /// size}]`); a `userInfo` key of that name is replaced.
    public static let attachmentsKey = "chime-attachments"

    /// `aps.badge` for a change: the number for `set(n)` with n > 0, 0 (clears) for n < 0; none
    /// for `set(0)` (leave it) and for `increment`, whose number the worker resolves into a
    /// `set` before delivery when it knows the recipient's count.
    static func badge(_ change: BadgeChange?) -> Int? {
        switch change {
        case .set(let number) where number > 0: number
        case .set(let number) where number < 0: 0
        default: nil
        }
    }

    /// Equality on path, headers and body.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.path == rhs.path && lhs.body == rhs.body && lhs.headers.map { "\($0.name): \($0.value)" } == rhs.headers.map { "\($0.name): \($0.value)" }
    }
}

extension APNsNotification {
    /// A UUID (RFC 9562 §5.8, version 8) derived from `firing`: the first 16 bytes of
    /// SHA-256(`"chime/apns-id/" + firing text`) with the version and variant bits set, in
    /// lowercase 8-4-4-4-12 form. Every attempt of a firing carries the same `apns-id`.
    /// - Throws: `CryptoError(.libraryMissing)` without libcrypto.
    public static func apnsID(for firing: FiringID) throws(CryptoError) -> String {
        var bytes = Array(try Digest.sha256(Data("chime/apns-id/\(firing.text)".utf8)).prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x80
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex[hex.index(hex.startIndex, offsetBy: range.lowerBound)..<hex.index(hex.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }

    /// Whether `token` can be a device token: hexadecimal, 32 to 200 bytes' worth.
    public static func isWellFormed(deviceToken token: String) -> Bool {
        token.utf8.count >= 64 && token.utf8.count <= 400 && token.utf8.count % 2 == 0 && token.utf8.allSatisfy { $0.isHexDigit }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
