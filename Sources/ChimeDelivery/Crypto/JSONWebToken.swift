import Foundation

/// Builds compact JWS tokens, `base64url(header).base64url(claims).base64url(signature)`
/// (RFC 7519 §3, RFC 7515 §7.1): the header `{"alg": …, "kid"?: …, "typ"?: …}` and the claims
/// are JSON with sorted keys and unescaped slashes, so a token is reproducible byte for byte.
///
/// ```swift
/// let jwt = try JSONWebToken.make(claims: ["iss": .string("TEAMID"), "iat": .number(1_700_000_000)], keyID: "ABC123", key: key)
/// ```
public enum JSONWebToken {
    /// A claim or header value: JSON's string, whole number or boolean.
    public enum Value: Hashable, Sendable, Encodable {
        /// A JSON string.
        case string(String)
        /// A JSON whole number (seconds since 1970 for `iat` and `exp`).
        case number(Int64)
        /// A JSON boolean.
        case bool(Bool)

        /// Encodes the bare JSON value.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            case .bool(let flag): try container.encode(flag)
            }
        }
    }

    /// A signed token for `claims`, its header naming `key`'s algorithm, `keyID` as `kid` when
    /// given, and `type` as `typ` when given (Google's assertion says `"JWT"`; APNs' has none).
    /// - Throws: `CryptoError(.failed)` when libcrypto refuses to sign.
    public static func make(claims: [String: Value], keyID: String? = nil, type: String? = nil, key: SigningKey) throws(CryptoError) -> String {
        var header: [String: Value] = ["alg": .string(key.algorithm.rawValue)]
        if let keyID { header["kid"] = .string(keyID) }
        if let type { header["typ"] = .string(type) }
        let signingInput = Base64.encodeURL(json(header)) + "." + Base64.encodeURL(json(claims))
        let signature = try key.sign(Data(signingInput.utf8))
        return signingInput + "." + Base64.encodeURL(signature)
    }

    /// `object` as JSON with sorted keys and `/` unescaped.
    static func json(_ object: [String: Value]) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, integers and booleans in a string-keyed dictionary always encode.
        guard let data = try? encoder.encode(object) else { preconditionFailure("JSON of strings, integers and booleans did not encode") }
        return data
    }
}
