import Foundation
import Synchronization

/// The APNs provider token (an ES256 JWT: header `{"alg": "ES256", "kid": keyID}`, claims
/// `{"iss": teamID, "iat": seconds}`), made once and reused: Apple refuses tokens older than
/// an hour and answers `TooManyProviderTokenUpdates` to a provider that makes them more often
/// than every 20 minutes (Apple, "Establishing a token-based connection to APNs").
///
/// A token is remade when it is `refreshAge` old (50 minutes), or when APNs refused it and it
/// is at least `minimumAge` old (20 minutes); a token refused sooner is kept (a new one would
/// be refused for the same reason: a wrong key, team or clock).
public final class APNsProviderToken: Sendable {
    /// The age, in seconds, at which a token is remade before use.
    public static let refreshAge: Double = 50 * 60
    /// The least age, in seconds, of a token remade because APNs refused it.
    public static let minimumAge: Double = 20 * 60

    private let key: SigningKey
    private let keyID: String
    private let teamID: String
    private let current: Mutex<(token: String, issuedAt: Date)?>

    /// A token source signing with `key` (ES256).
    public init(key: SigningKey, keyID: String, teamID: String) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        current = Mutex(nil)
    }

    /// The token to send at `now`: the current one, or a new one when there is none, it is
    /// `refreshAge` old, or the clock went back more than a minute since it was made.
    /// - Throws: `CryptoError(.failed)` when signing fails.
    public func token(now: Date) throws(CryptoError) -> String {
        try current.withLock { (current: inout (token: String, issuedAt: Date)?) throws(CryptoError) -> String in
            if let current {
                let age = now.timeIntervalSince(current.issuedAt)
                if age < Self.refreshAge && age > -60 { return current.token }
            }
            let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            let token = try JSONWebToken.make(
                claims: ["iss": .string(teamID), "iat": .number(Int64(issuedAt.timeIntervalSince1970))], keyID: keyID, key: key)
            current = (token, issuedAt)
            return token
        }
    }

    /// Says APNs refused `token` at `now`. Returns whether sending again may help: true when
    /// `token` is no longer the current one (another thread replaced it) or it was dropped
    /// because it was at least `minimumAge` old; false when it is younger and kept.
    public func refused(_ token: String, now: Date) -> Bool {
        current.withLock { current in
            guard let held = current, held.token == token else { return true }
            guard now.timeIntervalSince(held.issuedAt) >= Self.minimumAge else { return false }
            current = nil
            return true
        }
    }
}
