import ChimeCore
import Foundation
import HTTPClient

/// Delivers a firing to a webhook per the Standard Webhooks specification: a POST of the fire
/// event's JSON with `webhook-id` (the firing id: a receiver drops a retry it has seen),
/// `webhook-timestamp` (Unix seconds), `webhook-signature` (``WebhookSignature``, one `v1,…`
/// per secret) and `content-type: application/json`.
///
/// Answers are classified by ``WebhookClassification``. Redirects are not followed; every
/// request has the channel's timeout (connect and total, capped by the firing's delivery
/// deadline); at most `maximumResponseBytes` of an answer are read. A URL whose host is or
/// resolves to a loopback, private, link-local or unspecified address is refused unless
/// `allowsPrivateAddresses` (SSRF: a recipient's URL is outside input); an allowed name is
/// connected to only at the addresses that were checked (``PrivateAddresses/check(_:resolve:)``).
public struct WebhookChannel: DeliveryChannel {
    /// Seconds per request at most (connect included).
    public var timeout: Double
    /// Whether URLs on loopback, private and link-local addresses are allowed (tests, and
    /// clusters whose receivers live on a private network).
    public var allowsPrivateAddresses: Bool
    /// The largest answer read, in bytes.
    public var maximumResponseBytes: Int
    /// The MAC the signatures use.
    let hmac: HMACSHA256
    /// The clock `webhook-timestamp` reads.
    let now: @Sendable () -> Date

    /// A channel.
    /// - Parameters:
    ///   - hmac: HMAC-SHA256 (OpenSSL's, through ChimeDelivery's crypto module, in a worker).
    ///   - now: the clock of `webhook-timestamp`.
    public init(
        timeout: Double = 10, allowsPrivateAddresses: Bool = false, maximumResponseBytes: Int = 64 << 10, hmac: @escaping HMACSHA256,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.timeout = timeout
        self.allowsPrivateAddresses = allowsPrivateAddresses
        self.maximumResponseBytes = maximumResponseBytes
        self.hmac = hmac
        self.now = now
    }

    /// Sends `attempt` and classifies the answer.
    public func deliver(_ attempt: DeliveryAttempt) -> DeliveryResult {
        guard case .webhook(let webhook) = attempt.destination else {
            return .refused(status: nil, reason: "the webhook channel got a \(attempt.destination.channel) destination", removesDestination: false)
        }
        var pinnedAddresses: [String] = []
        if !allowsPrivateAddresses {
            switch PrivateAddresses.check(webhook.url) {
            case .refused(let reason): return .refused(status: nil, reason: reason, removesDestination: false)
            case .allowed(let pins): pinnedAddresses = pins
            }
        }
        let sentAt = now()
        let timestamp = Int64(sentAt.timeIntervalSince1970.rounded(.down))
        let id = attempt.firing.firingId.description
        guard let signature = WebhookSignature.header(
            id: id, timestamp: timestamp, body: attempt.eventJSON, secrets: webhook.secrets, hmac: hmac)
        else {
            return .refused(status: nil, reason: "the webhook's secrets do not sign (not whsec_ + base64, or no HMAC)", removesDestination: false)
        }
        let remaining = attempt.expiresAt.map { $0.timeIntervalSince(sentAt) } ?? timeout
        let client = HTTPClient(timeout: max(0.05, min(timeout, remaining)), maximumResponseBytes: maximumResponseBytes)
        let request = HTTPClient.Request(
            method: "POST", url: webhook.url,
            headers: [
                ("content-type", "application/json"), ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
                ("webhook-signature", signature), ("user-agent", "chime-webhooks"),
            ],
            body: attempt.eventJSON, pinnedAddresses: pinnedAddresses)
        do {
            let response = try client.send(request)
            return WebhookClassification.classify(
                status: response.status, body: response.body, retryAfter: RetryAfter.seconds(response.header("retry-after"), now: now()))
        } catch {
            return WebhookClassification.classify(error)
        }
    }
}
