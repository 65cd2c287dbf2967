import Foundation

/// Where a worker delivers a recipient's firings besides the ZeroMQ fire event: a webhook,
/// an APNs device or an FCM registration. A recipient holds several (devices and endpoints).
///
/// JSON shape, one object per destination, told apart by `kind`:
/// - `{"kind": "webhook", "url": "https://…", "secrets": ["whsec_…", …]}`: signed per the
///   Standard Webhooks specification with every secret in `secrets` (several while a secret
///   is rotated);
/// - `{"kind": "apns", "token": "<hex device token>", "topic": "com.example.app",
///   "environment": "production" | "sandbox"}`;
/// - `{"kind": "fcm", "token": "<registration token>"}`.
/// Listings show ``redacted()``: secrets and tokens masked.
public enum Destination: Hashable, Sendable {
    /// An HTTP endpoint that receives the fire event's JSON, signed.
    case webhook(WebhookDestination)
    /// An Apple device, through the APNs provider API.
    case apns(APNsDestination)
    /// An Android or web client, through FCM HTTP v1.
    case fcm(FCMDestination)

    /// Every channel's name, as ``channel`` spells them (metrics start each at zero).
    public static let channels = ChannelKind.allCases.map(\.rawValue)

    /// The channel's name as metrics and events spell it: `webhook`, `apns`, `fcm`.
    public var channel: String { channelKind.rawValue }

    /// What identifies the destination within its recipient (removal names it): the URL of
    /// a webhook, the token of a device, prefixed by the channel (`webhook:https://…`,
    /// `apns:<token>`, `fcm:<token>`).
    public var key: String {
        switch self {
        case .webhook(let webhook): "webhook:\(webhook.url)"
        case .apns(let apns): "apns:\(apns.token)"
        case .fcm(let fcm): "fcm:\(fcm.token)"
        }
    }
}

/// A webhook endpoint and its signing secrets.
public struct WebhookDestination: Hashable, Sendable {
    /// The `https://` (or, for tests and loopback, `http://`) URL POSTed to.
    public var url: String
    /// The signing secrets, each `whsec_` followed by base64 (Standard Webhooks); every one
    /// signs, so a receiver rotating its secret accepts either.
    public var secrets: [String]

    /// A webhook destination from its parts, unchecked.
    public init(url: String, secrets: [String]) {
        self.url = url
        self.secrets = secrets
    }
}

/// An APNs device.
public struct APNsDestination: Hashable, Sendable {
    /// Apple's two hosts.
    public enum Environment: String, Codable, Hashable, Sendable {
        /// `api.push.apple.com`.
        case production
        /// `api.sandbox.push.apple.com` (development builds).
        case sandbox
    }

    /// The device token, hexadecimal.
    public var token: String
    /// The app's bundle id, sent as `apns-topic`.
    public var topic: String
    /// Which of Apple's hosts the device is registered with.
    public var environment: Environment

    /// An APNs destination from its parts, unchecked.
    public init(token: String, topic: String, environment: Environment = .production) {
        self.token = token
        self.topic = topic
        self.environment = environment
    }
}

/// An FCM registration.
public struct FCMDestination: Hashable, Sendable {
    /// The registration token.
    public var token: String

    /// An FCM destination from its token, unchecked.
    public init(token: String) {
        self.token = token
    }
}

extension Destination: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, url, secrets, token, topic, environment
    }

    /// Decodes the JSON shape above.
    /// - Throws: `DecodingError` for an unknown `kind`, a missing or malformed field, or a key
    ///   the kind does not have (an ``UnknownFieldError`` underneath).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        let allowed: Set<CodingKeys>
        switch kind {
        case "webhook":
            allowed = [.kind, .url, .secrets]
            self = .webhook(
                WebhookDestination(
                    url: try container.decode(String.self, forKey: .url),
                    secrets: try container.decodeIfPresent([String].self, forKey: .secrets) ?? []))
        case "apns":
            allowed = [.kind, .token, .topic, .environment]
            self = .apns(
                APNsDestination(
                    token: try container.decode(String.self, forKey: .token),
                    topic: try container.decode(String.self, forKey: .topic),
                    environment: try container.decodeIfPresent(APNsDestination.Environment.self, forKey: .environment) ?? .production))
        case "fcm":
            allowed = [.kind, .token]
            self = .fcm(FCMDestination(token: try container.decode(String.self, forKey: .token)))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container, debugDescription: "kind must be webhook, apns or fcm, not \(kind)")
        }
        if let stray = container.allKeys.first(where: { !allowed.contains($0) }) {
            throw DecodingError.dataCorruptedError(
                forKey: stray, in: container, debugDescription: "a \(kind) destination has no \(stray.stringValue)")
        }
    }

    /// Encodes the JSON shape above.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(channel, forKey: .kind)
        switch self {
        case .webhook(let webhook):
            try container.encode(webhook.url, forKey: .url)
            try container.encode(webhook.secrets, forKey: .secrets)
        case .apns(let apns):
            try container.encode(apns.token, forKey: .token)
            try container.encode(apns.topic, forKey: .topic)
            try container.encode(apns.environment, forKey: .environment)
        case .fcm(let fcm):
            try container.encode(fcm.token, forKey: .token)
        }
    }
}
