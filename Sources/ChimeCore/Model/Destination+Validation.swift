import Foundation

extension Destination {
    /// The most destinations one recipient holds (devices and endpoints together).
    public static let maximumPerRecipient = 16
    /// The longest webhook URL accepted, in UTF-8 bytes.
    public static let maximumURLBytes = 2048
    /// The most signing secrets one webhook holds (two during a rotation; a few more spare).
    public static let maximumSecrets = 4
    /// The decoded length of a signing secret, in bytes (Standard Webhooks recommends 24–64;
    /// 16 is accepted for older secrets).
    public static let secretBytes = 16...128
    /// The longest APNs device token, in hexadecimal digits (today's tokens have 64).
    public static let maximumAPNsTokenDigits = 512
    /// The longest FCM registration token, in bytes (today's have about 160).
    public static let maximumFCMTokenBytes = 4096
    /// What a masked secret or the hidden middle of a token shows.
    public static let mask = "<redacted>"

    /// Checks the destination's shape: a webhook URL with scheme `http` or `https`, a host and
    /// at most ``maximumURLBytes``; 1…``maximumSecrets`` secrets, each `whsec_` followed by the
    /// base64 of ``secretBytes`` bytes; an APNs token of an even number (2…512) of hexadecimal
    /// digits and a topic of 1…255 letters, digits, `.`, `-` and `_`; an FCM token of
    /// 1…4096 letters, digits, `:`, `-` and `_`.
    /// - Parameter field: the dotted name errors start with (`destinations[0]`).
    /// - Throws: `ValidationError` `.invalidArgument` naming the first offending field
    ///   (`destinations[0].url`, `destinations[0].secrets[1]`, `destinations[2].token`).
    public func validate(field: String) throws(ValidationError) {
        switch self {
        case .webhook(let webhook):
            try Self.validateURL(webhook.url, field: "\(field).url")
            guard (1...Self.maximumSecrets).contains(webhook.secrets.count) else {
                throw ValidationError(
                    .invalidArgument, field: "\(field).secrets", "a webhook has 1…\(Self.maximumSecrets) secrets, not \(webhook.secrets.count)")
            }
            for (index, secret) in webhook.secrets.enumerated() where Self.secretKey(secret) == nil {
                throw ValidationError(
                    .invalidArgument, field: "\(field).secrets[\(index)]",
                    "a secret is whsec_ followed by the base64 of \(Self.secretBytes.lowerBound)…\(Self.secretBytes.upperBound) bytes")
            }
        case .apns(let apns):
            let digits = apns.token.utf8
            guard (2...Self.maximumAPNsTokenDigits).contains(digits.count), digits.count.isMultiple(of: 2),
                digits.allSatisfy({ $0.isHexDigit })
            else {
                throw ValidationError(
                    .invalidArgument, field: "\(field).token", "an APNs device token is an even number (2…512) of hexadecimal digits")
            }
            guard (1...255).contains(apns.topic.utf8.count), apns.topic.utf8.allSatisfy({ $0.isAlphanumeric || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F })
            else {
                throw ValidationError(
                    .invalidArgument, field: "\(field).topic", "an APNs topic is a bundle id: 1…255 letters, digits, '.', '-' and '_'")
            }
        case .fcm(let fcm):
            let bytes = fcm.token.utf8
            guard (1...Self.maximumFCMTokenBytes).contains(bytes.count),
                bytes.allSatisfy({ $0.isAlphanumeric || $0 == 0x3A || $0 == 0x2D || $0 == 0x5F })
            else {
                throw ValidationError(
                    .invalidArgument, field: "\(field).token", "an FCM token is 1…4096 letters, digits, ':', '-' and '_'")
            }
        }
    }

    /// The key bytes of a `whsec_` secret (the base64 after the prefix), or `nil` when the
    /// secret is not `whsec_` + base64 of ``secretBytes`` bytes.
    public static func secretKey(_ secret: String) -> Data? {
        guard secret.hasPrefix("whsec_"), let key = Data(base64Encoded: String(secret.dropFirst(6))),
            secretBytes.contains(key.count)
        else { return nil }
        return key
    }

    static func validateURL(_ url: String, field: String) throws(ValidationError) {
        guard url.utf8.count <= maximumURLBytes else {
            throw ValidationError(.invalidArgument, field: field, "is longer than \(maximumURLBytes) bytes")
        }
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = parts.host, !host.isEmpty, parts.user == nil, parts.password == nil, parts.fragment == nil
        else {
            throw ValidationError(
                .invalidArgument, field: field, "a webhook URL is http:// or https:// with a host, no user or fragment: not '\(url)'")
        }
    }

    /// A copy fit for listings, logs and events: webhook secrets become ``mask``; a token keeps
    /// its first 8 and last 4 characters around the mask (enough to tell devices apart).
    public func redacted() -> Destination {
        switch self {
        case .webhook(var webhook):
            webhook.secrets = webhook.secrets.map { _ in Self.mask }
            return .webhook(webhook)
        case .apns(var apns):
            apns.token = Self.maskedToken(apns.token)
            return .apns(apns)
        case .fcm(var fcm):
            fcm.token = Self.maskedToken(fcm.token)
            return .fcm(fcm)
        }
    }

    /// ``key`` with the token masked as in ``redacted()``: what logs and dead letters name.
    public var redactedKey: String { redacted().key }

    static func maskedToken(_ token: String) -> String {
        guard token.count > 16 else { return mask }
        return "\(token.prefix(8))…\(token.suffix(4))"
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool { (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self) }
    fileprivate var isAlphanumeric: Bool { (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
}
