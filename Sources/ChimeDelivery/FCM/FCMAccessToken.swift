import Foundation
import HTTPClient
import Synchronization

/// The OAuth 2.0 access token FCM requests carry, got with a service account's signed
/// assertion (RFC 7523 §2.1, Google's "Using OAuth 2.0 for Server to Server Applications") and
/// kept until `renewalMargin` before it expires.
///
/// The assertion is an RS256 JWT: header `{"alg": "RS256", "kid": private_key_id, "typ": "JWT"}`,
/// claims `{"iss": client_email, "scope": "https://www.googleapis.com/auth/firebase.messaging",
/// "aud": token URL, "iat": now, "exp": now + 3600}`, POSTed as
/// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<jwt>`; the answer is
/// `{"access_token": "...", "expires_in": seconds, "token_type": "Bearer"}`.
public final class FCMAccessToken: Sendable {
    /// The scope FCM HTTP v1 needs.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// How long before its expiry a token is renewed, in seconds.
    public static let renewalMargin: Double = 300
    /// The assertion's lifetime, in seconds (Google's maximum: an hour).
    public static let assertionLifetime: Int64 = 3600

    private let account: ServiceAccount
    private let key: SigningKey
    private let tokenURL: String
    private let session: HTTPSession
    private let current: Mutex<(token: String, expiresAt: Date)?>

    /// A token source for `account`, exchanging at `tokenURL` through `session`.
    /// - Throws: `CryptoError` (`.badPEM`, `.wrongKeyType`, `.libraryMissing`) for its key.
    public init(account: ServiceAccount, tokenURL: String, session: HTTPSession) throws(CryptoError) {
        self.account = account
        key = try SigningKey(pem: account.privateKey, algorithm: .rs256)
        self.tokenURL = tokenURL
        self.session = session
        current = Mutex(nil)
    }

    /// The signed assertion for `now` (whole seconds).
    /// - Throws: `CryptoError(.failed)` when signing fails.
    public func assertion(now: Date) throws(CryptoError) -> String {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        return try JSONWebToken.make(
            claims: [
                "iss": .string(account.clientEmail), "scope": .string(Self.scope), "aud": .string(tokenURL),
                "iat": .number(issuedAt), "exp": .number(issuedAt + Self.assertionLifetime),
            ],
            keyID: account.privateKeyID, type: "JWT", key: key)
    }

    /// The access token to send at `now`, exchanged when none is held or the held one is
    /// within `renewalMargin` of expiring. Threads asking at once wait for one exchange.
    /// - Throws: `FCMTokenError` with the exchange's status (nil for a transport failure or
    ///   a signing failure) and a sentence.
    public func token(now: @Sendable () -> Date) throws(FCMTokenError) -> String {
        try current.withLock { (current: inout (token: String, expiresAt: Date)?) throws(FCMTokenError) -> String in
            if let current, now().addingTimeInterval(Self.renewalMargin) < current.expiresAt { return current.token }
            let fresh = try exchange(at: now())
            current = fresh
            return fresh.token
        }
    }

    /// Forgets `token` after FCM answered 401 to it (a token already replaced is left alone).
    public func rejected(_ token: String) {
        current.withLock { current in
            if current?.token == token { current = nil }
        }
    }

    private func exchange(at now: Date) throws(FCMTokenError) -> (token: String, expiresAt: Date) {
        let assertion: String
        do {
            assertion = try self.assertion(now: now)
        } catch {
            throw FCMTokenError(status: nil, message: "FCM OAuth assertion: \(error.message)")
        }
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        let request = HTTPClient.Request(
            method: "POST", url: tokenURL, headers: [("content-type", "application/x-www-form-urlencoded")], body: Data(form.utf8))
        let response: HTTPClient.Response
        do {
            response = try session.send(request)
        } catch {
            throw FCMTokenError(status: nil, message: "FCM OAuth token exchange: \(error.message)")
        }
        struct Answer: Decodable {
            var access_token: String
            var expires_in: Double?
        }
        guard response.status == 200, let answer = try? JSONDecoder().decode(Answer.self, from: response.body), !answer.access_token.isEmpty
        else {
            throw FCMTokenError(
                status: response.status, message: "FCM OAuth token exchange at \(tokenURL): \(response.status) \(responseExcerpt(response.body))")
        }
        let lifetime = answer.expires_in.map { $0.isFinite ? min(max($0, 0), 86_400) : 0 } ?? 3600
        return (answer.access_token, now.addingTimeInterval(lifetime))
    }
}

/// An access token that could not be had: the token endpoint's status (nil when no answer
/// came) and a sentence naming the endpoint.
public struct FCMTokenError: Error, Sendable, Equatable {
    /// The token endpoint's HTTP status, or nil.
    public var status: Int?
    /// What happened, with a bounded excerpt of the answer.
    public var message: String
}
