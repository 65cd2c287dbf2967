import ChimeCore
import ChimeDelivery
import ChimeRuntime
import Foundation

/// The channels and limits a worker delivers with, from its configuration. A channel per
/// ``Destination/channel``: APNs and FCM join here as `"apns"` and `"fcm"` entries.
enum DeliveryChannels {
    /// The standard channels: the webhook channel (Standard Webhooks).
    static func standard(_ configuration: ChimeConfiguration.Delivery) -> [String: any DeliveryChannel] {
        [
            "webhook": WebhookChannel(
                timeout: Double(configuration.timeoutMilliseconds) / 1000, allowsPrivateAddresses: configuration.allowPrivateAddresses,
                hmac: DeliveryChannels.hmac)
        ]
    }

    /// The engine's limits.
    static func limits(_ configuration: ChimeConfiguration.Delivery) -> DeliveryLimits {
        DeliveryLimits(
            schedule: RetrySchedule(
                base: Double(configuration.backoffMilliseconds) / 1000, cap: Double(configuration.maxBackoffMilliseconds) / 1000,
                maximumAttempts: configuration.maxAttempts),
            maximumPerHost: configuration.maxPerHost, maximumInFlight: configuration.maxInFlight,
            circuitThreshold: configuration.circuitFailures, circuitOpenSeconds: configuration.circuitOpenSeconds)
    }

    /// HMAC-SHA256 for webhook signatures: OpenSSL's libcrypto (``Digest``).
    static let hmac: HMACSHA256 = { key, message in
        // A missing libcrypto becomes nil: the channel then refuses the webhook saying it
        // cannot sign, which the dead letter shows.
        try? Digest.hmacSHA256(key: key, message: message)
    }
}
