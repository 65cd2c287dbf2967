import ChimeCore
import Foundation

/// One attempt at delivering one firing to one destination, as a worker hands it to the
/// destination's channel.
public struct DeliveryAttempt: Sendable {
    /// The firing (its id is the idempotency key every channel sends: `webhook-id`,
    /// `apns-id`'s seed, FCM's message label).
    public var firing: Firing
    /// The fire event's JSON, exactly as published on the ZeroMQ fire topic: a webhook's body.
    public var eventJSON: Data
    /// The content to present, after the recipient's settings were applied (``DeliveryPlan``).
    public var content: Content
    /// Where to.
    public var destination: Destination
    /// 1 for the first attempt at this destination, then 2, 3, …
    public var number: Int
    /// After this instant (UTC) the firing is stale and is not sent; `nil`: never.
    public var expiresAt: Date?

    /// An attempt from its parts.
    public init(firing: Firing, eventJSON: Data, content: Content, destination: Destination, number: Int, expiresAt: Date? = nil) {
        self.firing = firing
        self.eventJSON = eventJSON
        self.content = content
        self.destination = destination
        self.number = number
        self.expiresAt = expiresAt
    }
}

/// What one attempt came to, as the providers' semantics classify it.
public enum DeliveryResult: Sendable, Equatable {
    /// Accepted by the endpoint (a 2xx); `status` is the HTTP status.
    case delivered(status: Int)
    /// Refused for good: a 4xx other than 408 and 429, or a provider's permanent error.
    /// `removesDestination` is true when the provider said the destination no longer exists
    /// (HTTP 410, APNs `BadDeviceToken`/`Unregistered`, FCM `UNREGISTERED`): the worker then
    /// asks the coordinator to remove it from the recipient, durably. `reason` is what an
    /// operator reads in the dead letter (status, provider reason, a bounded excerpt).
    case refused(status: Int?, reason: String, removesDestination: Bool)
    /// Worth another attempt: a 5xx, 408, 429, a timeout or a connection error. `retryAfter`
    /// is the provider's `Retry-After` in seconds when it sent one.
    case retry(status: Int?, reason: String, retryAfter: Double?)
}

/// A delivery channel: turns an attempt into one provider request and classifies the answer.
///
/// `deliver` blocks for at most the channel's own timeout and is called from a worker's
/// delivery threads, several at once; it never throws: every failure is a ``DeliveryResult``.
public protocol DeliveryChannel: Sendable {
    /// Sends `attempt` and classifies the answer.
    func deliver(_ attempt: DeliveryAttempt) -> DeliveryResult
}
