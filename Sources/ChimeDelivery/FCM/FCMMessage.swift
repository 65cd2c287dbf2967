import ChimeCore
import Foundation

/// The FCM HTTP v1 send request's body made from a delivery attempt (Google, "REST Resource:
/// projects.messages"). Pure: `now` is given.
///
/// `{"message": {"token": ..., "notification"?: {"title"?, "body"?, "image"?}, "data": {"firingId": ...,
/// <userInfo as strings>}, "android": {"priority": "high" | "normal", "ttl"?: "<seconds>s",
/// "collapse_key"?: ...}, "apns"?: {"payload": {"aps": {"badge"?, "sound"?, "category"?,
/// "thread-id"?}}}}}`, keys sorted. `image` is the first image attachment's URL (FCM shows one
/// image; other attachments are not sent). Localizable keys arrive resolved in `title` and
/// `body`: no `title_loc_key` is sent.
public enum FCMMessage {
    /// The `data` key holding the firing id (a `userInfo` key of that name is replaced).
    public static let firingIDKey = "firingId"

    /// The body for `attempt` to `registration` at `now`.
    /// - Parameter collapseKey: `android.collapse_key`; `nil` takes the content's `collapseKey`.
    public static func body(attempt: DeliveryAttempt, registration: FCMDestination, now: Date, collapseKey: String? = nil) -> Data {
        let content = attempt.content
        var message: [String: PushJSON] = ["token": .string(registration.token)]
        var notification: [String: PushJSON] = [:]
        if let title = content.title { notification["title"] = .string(title) }
        if let body = content.body { notification["body"] = .string(body) }
        if let image = content.attachments?.first(where: { $0.kind == .image }) { notification["image"] = .string(image.url) }
        if !notification.isEmpty { message["notification"] = .object(notification) }
        var data = (content.userInfo ?? [:]).mapValues { PushJSON.string(PushJSON($0).text) }
        data[firingIDKey] = .string(attempt.firing.firingId.text)
        message["data"] = .object(data)
        var android: [String: PushJSON] = ["priority": .string(notification.isEmpty ? "normal" : "high")]
        if let ttl = timeToLive(expiresAt: attempt.expiresAt, now: now) { android["ttl"] = .string("\(ttl)s") }
        if let collapse = collapseKey ?? content.collapseKey { android["collapse_key"] = .string(collapse) }
        message["android"] = .object(android)
        var aps: [String: PushJSON] = [:]
        if let badge = APNsNotification.badge(content.badgeChange) { aps["badge"] = .integer(Int64(badge)) }
        if let sound = content.sound { aps["sound"] = .string(sound) }
        if let category = content.category { aps["category"] = .string(category) }
        if let threadId = content.threadId { aps["thread-id"] = .string(threadId) }
        if !aps.isEmpty { message["apns"] = .object(["payload": .object(["aps": .object(aps)])]) }
        return PushJSON.object(["message": .object(message)]).data
    }

    /// `android.ttl` in whole seconds: the time left until `expiresAt`, rounded up, 0 when it
    /// has passed (FCM then tries once), capped at FCM's 28 days; nil without an expiry
    /// (FCM's default, 28 days).
    static func timeToLive(expiresAt: Date?, now: Date) -> Int64? {
        guard let expiresAt else { return nil }
        let seconds = expiresAt.timeIntervalSince(now)
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int64(min(seconds, 28 * 86_400).rounded(.up))
    }
}
