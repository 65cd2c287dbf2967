import Foundation

/// What a worker delivers for one firing once the recipient's settings are applied.
///
/// The rules, as iOS applies `UNNotificationSettings` to a local notification:
/// - an unregistered recipient (no settings) gets everything, or nothing when
///   `requireRegistration` is on (suppressed: "recipient not registered");
/// - a recipient that allows nothing gets nothing (suppressed);
/// - otherwise the parts not allowed are stripped: alert text (`title`, `subtitle`, `body`,
///   `action`, `launchImage`, the attachments, and the localizable keys `titleKey`, `bodyKey`
///   with their arguments, which dispatch would resolve into alert text) without `alert`, `sound` (and its
///   critical `soundVolume`) without `sound`, `badge` without `badge`;
///   `userInfo`, `category` and `threadId` always stay;
/// - a firing that had something to present but loses all of it to stripping is
///   suppressed too; content that never had alert text, sound or badge (a data-only
///   firing) is delivered as it is;
/// - a registered recipient that opted out of the content's category gets nothing
///   (suppressed: "recipient opted out of category 'X'");
/// - a registered recipient's ``AuthorizationGrants`` then set the delivered
///   `interruptionLevel`: `timeSensitive` and `critical` not granted become `active`, and
///   under `provisional` everything but a granted `critical` becomes `passive` without its
///   sound (reported as stripped). An unregistered recipient's firings keep their level.
public enum DeliveryPlan: Hashable, Sendable {
    /// Deliver `content` (already stripped); `stripped` names the parts the firing carried
    /// that were removed.
    case deliver(Content, stripped: NotificationSettings)
    /// Record the firing as suppressed, not delivered, with a human reason.
    case suppressed(reason: String)

    /// The suppression reason for an unregistered recipient under `requireRegistration`.
    public static let notRegisteredReason = "recipient not registered"
    /// The suppression reason for a firing of a category the recipient opted out of.
    public static func optedOutReason(_ category: String) -> String { "recipient opted out of category '\(category)'" }

    /// The suppression reason for a recipient that allows no alert, sound or badge.
    public static let allowsNothingReason = "recipient allows no alert, sound or badge"

    /// Plans the delivery of `content`.
    /// - Parameters:
    ///   - content: the firing's content as scheduled.
    ///   - settings: the recipient's registered settings, or `nil` when it is unregistered.
    ///   - grants: the registered recipient's grants (ignored when `settings` is `nil`).
    ///   - optedOutCategories: the categories the registered recipient opted out of.
    ///   - requireRegistration: the configuration switch that makes unregistered recipients
    ///     get nothing.
    public static func make(
        for content: Content, settings: NotificationSettings?, grants: AuthorizationGrants = [],
        optedOutCategories: [String] = [], requireRegistration: Bool
    ) -> DeliveryPlan {
        guard let settings else {
            return requireRegistration ? .suppressed(reason: notRegisteredReason) : .deliver(content, stripped: [])
        }
        guard !settings.isEmpty else { return .suppressed(reason: allowsNothingReason) }
        if !optedOutCategories.isEmpty, let category = content.category, optedOutCategories.contains(category) {
            return .suppressed(reason: optedOutReason(category))
        }
        let presented = content.presentedParts
        let stripped = presented.subtracting(settings)
        if !presented.isEmpty && stripped == presented {
            let carried = presented.allowedNames.joined(separator: ", ")
            let allowed = settings.allowedNames.joined(separator: ", ")
            return .suppressed(reason: "recipient allows only \(allowed); this firing has only \(carried)")
        }
        var delivered = content
        if !settings.contains(.alert) {
            delivered.title = nil
            delivered.subtitle = nil
            delivered.body = nil
            delivered.action = nil
            delivered.launchImage = nil
            delivered.attachments = nil
            if delivered.hasLocalizableKeys {
                delivered.titleKey = nil
                delivered.titleArgs = nil
                delivered.bodyKey = nil
                delivered.bodyArgs = nil
            }
        }
        if !settings.contains(.sound) {
            delivered.sound = nil
            delivered.soundVolume = nil
        }
        if !settings.contains(.badge) { delivered.badgeChange = nil }
        // Most firings are active and most recipients grant nothing: nothing to do then.
        guard content.interruptionLevel > .active || !grants.isEmpty else {
            return .deliver(delivered, stripped: stripped)
        }
        let (level, isQuiet) = grants.delivered(content.interruptionLevel)
        delivered.interruptionLevel = level
        var quieted = stripped
        if isQuiet && delivered.sound != nil {
            delivered.sound = nil
            delivered.soundVolume = nil
            quieted.insert(.sound)
        }
        return .deliver(delivered, stripped: quieted)
    }

    /// The content to deliver, or `nil` when suppressed.
    public var deliveredContent: Content? {
        if case .deliver(let content, _) = self { return content }
        return nil
    }
}

extension Content {
    /// The parts this content would present: `.alert` with any alert text, `.sound` with a
    /// sound, `.badge` with a badge change (`set(0)`, which leaves the badge, counts as none).
    public var presentedParts: NotificationSettings {
        var parts: NotificationSettings = []
        if hasAlertText { parts.insert(.alert) }
        if sound != nil { parts.insert(.sound) }
        if let badgeChange, badgeChange != .set(0) { parts.insert(.badge) }
        return parts
    }
}
