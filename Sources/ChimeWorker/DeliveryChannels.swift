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

    /// HMAC-SHA256 for webhook signatures: OpenSSL's libcrypto (the crypto module lands from
    /// the `push` branch; until then no signature is made and webhooks are refused, saying so).
    static let hmac: HMACSHA256 = { _, _ in nil }
}
