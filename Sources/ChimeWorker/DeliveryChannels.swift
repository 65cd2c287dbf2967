import ChimeCore
import ChimeDelivery
import ChimeRuntime
import Foundation

/// The channels and limits a worker delivers with, from its configuration. A channel per
/// ``Destination/channel``: APNs and FCM join here as `"apns"` and `"fcm"` entries.
enum DeliveryChannels {
    /// The standard channels: the webhook channel (Standard Webhooks), and the APNs and FCM
    /// channels when `apnsConfigFile` and `fcmConfigFile` name their configurations.
    /// - Returns: the channels, and a sentence for each configured channel that could not be
    ///   made (its file unreadable or malformed, its key refused): the worker logs them and
    ///   refuses that channel's destinations.
    static func standard(_ configuration: ChimeConfiguration.Delivery) -> (channels: [String: any DeliveryChannel], problems: [String]) {
        var channels: [String: any DeliveryChannel] = [
            "webhook": WebhookChannel(
                timeout: Double(configuration.timeoutMilliseconds) / 1000, allowsPrivateAddresses: configuration.allowPrivateAddresses,
                hmac: DeliveryChannels.hmac)
        ]
        var problems: [String] = []
        if !configuration.apnsConfigFile.isEmpty {
            do {
                let apns = try JSONDecoder().decode(APNsConfiguration.self, from: Data(contentsOf: URL(fileURLWithPath: configuration.apnsConfigFile)))
                channels["apns"] = try APNsChannel(configuration: apns)
            } catch {
                problems.append("delivery.apnsConfigFile \(configuration.apnsConfigFile): \(error)")
            }
        }
        if !configuration.fcmConfigFile.isEmpty {
            do {
                let fcm = try JSONDecoder().decode(FCMConfiguration.self, from: Data(contentsOf: URL(fileURLWithPath: configuration.fcmConfigFile)))
                channels["fcm"] = try FCMChannel(configuration: fcm)
            } catch {
                problems.append("delivery.fcmConfigFile \(configuration.fcmConfigFile): \(error)")
            }
        }
        return (channels, problems)
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
