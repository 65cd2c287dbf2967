import ChimeCore
import ChimeWire
import Foundation

/// The recipient page and `/api/recipient`: a recipient's registration as `chime recipient`
/// shows it (token and destination secrets masked by the coordinator), one page of its
/// reminders, and why each held firing waits.
public struct RecipientView: Codable, Hashable, Sendable {
    /// The recipient asked for.
    public var recipient: String
    /// Its registration, badge and delivered count; `nil` when it is not registered (a
    /// recipient may have reminders without registering).
    public var registration: RecipientResult?
    /// Why the registration could not be read, other than "not registered" (a shard that
    /// did not answer); `nil` otherwise.
    public var registrationError: String?
    /// One page of its reminders, in reminder-id order.
    public var reminders: PageView<ReminderListing>
    /// Why each held firing of `reminders` waits, by firing id: `quiet hours`, `summary`,
    /// `quiet hours, then summary` or `throttle`, worked out from the registration (see
    /// ``HoldReason``); a firing whose reason cannot be told is absent.
    public var holdReasons: [String: String]

    /// Creates the view and works out ``holdReasons`` from `registration`.
    public init(recipient: String, registration: RecipientResult?, registrationError: String? = nil, reminders: PageView<ReminderListing>) {
        self.recipient = recipient
        self.registration = registration
        self.registrationError = registrationError
        self.reminders = reminders
        var reasons: [String: String] = [:]
        if let registered = registration?.recipient {
            for listing in reminders.items {
                for held in listing.held ?? [] {
                    let reason = HoldReason.explain(held, level: listing.reminder.content.interruptionLevel, recipient: registered)
                    if let reason { reasons[held.firingId.description] = reason.rawValue }
                }
            }
        }
        holdReasons = reasons
    }
}

/// Why a firing is held, as far as the recipient's registration tells: the coordinator keeps
/// only the release instant, so this replays its order (quiet hours, then the next summary)
/// from the firing's due instant and names the rule whose instant is the release. The
/// throttle's slots are not listed, so `throttle` is the rule left over: named when the
/// recipient has a throttle and neither quiet hours nor a summary gives the release. A hold
/// that matches nothing (a firing that fired late, settings changed since the hold, no
/// throttle) has no reason (`nil`) rather than a made-up one.
public enum HoldReason: String, Codable, Hashable, Sendable {
    /// Due in a quiet window; released at its end.
    case quietHours = "quiet hours"
    /// Waiting for the recipient's next scheduled summary.
    case summary = "summary"
    /// Due in a quiet window, then waiting for the summary after it ends.
    case quietHoursThenSummary = "quiet hours, then summary"
    /// Over the recipient's throttle; released at the slot it gives.
    case throttle = "throttle"

    /// The reason `held` (of a reminder whose level is `level`) waits under `recipient`'s
    /// settings, or `nil` when no rule gives its release instant. Instants are compared to
    /// the millisecond (the wire's precision).
    public static func explain(_ held: HeldFiringListing, level: InterruptionLevel, recipient: Recipient) -> HoldReason? {
        let due = Date(timeIntervalSince1970: Double(held.firingId.dueAtMilliseconds) / 1000)
        func matches(_ instant: Date?) -> Bool {
            guard let instant else { return false }
            return abs(instant.timeIntervalSince(held.until)) < 0.001
        }
        let quiet = recipient.quietRelease(of: due, level: level)
        let summary = recipient.summaryRelease(of: quiet ?? due, level: level)
        if let summary, summary > due, matches(summary) { return quiet == nil ? .summary : .quietHoursThenSummary }
        if matches(quiet) { return .quietHours }
        if recipient.throttle != nil, !level.breaksThroughQuietHours, held.until > due { return .throttle }
        return nil
    }
}
