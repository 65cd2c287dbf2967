import Foundation
import Synchronization

/// A private key that signs JWS messages: ES256 (ECDSA P-256 with SHA-256, as APNs token
/// authentication needs) or RS256 (RSASSA-PKCS1-v1_5 with SHA-256, as Google's OAuth 2.0
/// service-account assertion needs), per RFC 7518 §3.3 and §3.4.
///
/// Read from PEM text: a PKCS #8 `-----BEGIN PRIVATE KEY-----` (Apple's `.p8`, Google's
/// service-account `private_key`), or the traditional `BEGIN EC PRIVATE KEY` / `BEGIN RSA
/// PRIVATE KEY`; never an encrypted one. Safe to share between threads (signatures are made
/// one at a time).
///
/// ```swift
/// let key = try SigningKey(pem: p8Text, algorithm: .es256)
/// let signature = try key.sign(Data("header.claims".utf8))  // 64 bytes: r || s
/// ```
public final class SigningKey: Sendable {
    /// The JWS algorithms a key signs with (RFC 7518 §3.1 names).
    public enum Algorithm: String, Sendable, Hashable {
        /// ECDSA on P-256 with SHA-256; signatures are 64 bytes, r then s.
        case es256 = "ES256"
        /// RSASSA-PKCS1-v1_5 with SHA-256; signatures are the modulus' length (256 bytes for
        /// a 2048-bit key).
        case rs256 = "RS256"
    }

    /// What the key signs with.
    public let algorithm: Algorithm
    private let key: Mutex<OpaquePointer>

    /// Reads an unencrypted PEM private key and checks it suits `algorithm`.
    /// - Throws: `CryptoError(.libraryMissing)` without libcrypto, `.badPEM` when the text is
    ///   no readable private key, `.wrongKeyType` for an RSA key given for ES256, an EC key
    ///   on another curve than P-256, or an EC key or an RSA key under 2048 bits for RS256
    ///   (RFC 7518 §3.3's minimum).
    public init(pem: String, algorithm: Algorithm) throws(CryptoError) {
        try LibCrypto.load()
        guard let pointer = LibCrypto.readPrivateKey(pem: pem) else {
            throw LibCrypto.failure("reading the PEM private key", code: .badPEM)
        }
        self.algorithm = algorithm
        let kind = LibCrypto.kind(of: pointer)
        LibCrypto.clearErrors()
        switch (algorithm, kind) {
        case (.es256, .ec(let curve)) where curve == "prime256v1" || curve == "P-256": break
        case (.es256, .ec(let curve)):
            LibCrypto.freeKey(pointer)
            throw CryptoError(.wrongKeyType, "ES256 needs an EC key on P-256 (prime256v1), not \(curve.isEmpty ? "an unnamed curve" : curve)")
        case (.es256, _):
            LibCrypto.freeKey(pointer)
            throw CryptoError(.wrongKeyType, "ES256 needs an EC P-256 key; this PEM holds another kind")
        case (.rs256, .rsa(let bits)) where bits >= 2048: break
        case (.rs256, _):
            LibCrypto.freeKey(pointer)
            throw CryptoError(.wrongKeyType, "RS256 needs an RSA key of at least 2048 bits")
        }
        key = Mutex(pointer)
    }

    deinit {
        key.withLock { LibCrypto.freeKey($0) }
    }

    /// The JWS signature of `message` (RFC 7515 §5.1 step 5's input, `header.payload`):
    /// ES256's raw `r || s`, 64 bytes (RFC 7518 §3.4: OpenSSL's DER form converted), or
    /// RS256's PKCS #1 v1.5 signature.
    /// - Throws: `CryptoError(.failed)` with OpenSSL's reason when libcrypto refuses.
    public func sign(_ message: Data) throws(CryptoError) -> Data {
        let signature = key.withLock { LibCrypto.signSHA256(message, with: $0) }
        guard let signature else { throw LibCrypto.failure("signing with \(algorithm.rawValue)") }
        switch algorithm {
        case .rs256: return Data(signature)
        case .es256:
            guard let raw = ECDSASignature.raw(fromDER: signature, coordinateBytes: 32) else {
                throw CryptoError(.failed, "libcrypto's ECDSA signature is not the DER form RFC 3279 §2.2.3 gives")
            }
            return Data(raw)
        }
    }

    /// Whether `signature` (the form ``sign(_:)`` returns) is this key's signature of
    /// `message`; a malformed signature is simply not valid.
    public func isValidSignature(_ signature: Data, for message: Data) -> Bool {
        let encoded: [UInt8]
        switch algorithm {
        case .rs256: encoded = Array(signature)
        case .es256:
            guard let der = ECDSASignature.der(fromRaw: Array(signature), coordinateBytes: 32) else { return false }
            encoded = der
        }
        return key.withLock { LibCrypto.verifySHA256(encoded, of: message, with: $0) }
    }
}
