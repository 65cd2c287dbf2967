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
    /// `quiet hours, then summary` or `throttle`, as the coordinator recorded it with the hold
    /// (``HeldFiringListing/reason``); a firing held before reasons were recorded is absent.
    public var holdReasons: [String: String]

    /// Creates the view, collecting ``holdReasons`` from the listings.
    public init(recipient: String, registration: RecipientResult?, registrationError: String? = nil, reminders: PageView<ReminderListing>) {
        self.recipient = recipient
        self.registration = registration
        self.registrationError = registrationError
        self.reminders = reminders
        var reasons: [String: String] = [:]
        for listing in reminders.items {
            for held in listing.held ?? [] {
                if let reason = held.reason { reasons[held.firingId.description] = reason.rawValue }
            }
        }
        holdReasons = reasons
    }
}
