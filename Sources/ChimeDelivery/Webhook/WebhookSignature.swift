import ChimeCore
import Foundation

/// HMAC-SHA256 of `message` under `key` (32 bytes), as a channel is given it (OpenSSL's
/// libcrypto in a worker; fixed stand-ins in tests).
public typealias HMACSHA256 = @Sendable (_ key: Data, _ message: Data) -> Data?

/// The Standard Webhooks signature (standardwebhooks.com, "Signature scheme"): for each secret,
/// `v1,` + base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")), where the key
/// is the base64 after the secret's `whsec_` prefix; several separated by single spaces (a
/// receiver rotating its secret accepts any one).
public enum WebhookSignature {
    /// The `webhook-signature` header value, or `nil` when a secret is not `whsec_` + base64
    /// or the HMAC fails.
    /// - Parameters:
    ///   - id: the `webhook-id` (the firing id).
    ///   - timestamp: the `webhook-timestamp`, Unix seconds.
    ///   - body: the exact bytes POSTed.
    public static func header(id: String, timestamp: Int64, body: Data, secrets: [String], hmac: HMACSHA256) -> String? {
        var message = Data("\(id).\(timestamp).".utf8)
        message.append(body)
        var signatures: [String] = []
        for secret in secrets {
            guard let key = Destination.secretKey(secret), let mac = hmac(key, message) else { return nil }
            signatures.append("v1,\(mac.base64EncodedString())")
        }
        return signatures.isEmpty ? nil : signatures.joined(separator: " ")
    }
}
