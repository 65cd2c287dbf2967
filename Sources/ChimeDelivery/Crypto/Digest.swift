import Foundation

/// SHA-256 and HMAC-SHA256 through OpenSSL's libcrypto (loaded at the first call).
///
/// ```swift
/// let signature = try Digest.hmacSHA256(key: secret, message: Data("id.1700000000.{}".utf8))  // 32 bytes
/// ```
public enum Digest {
    /// The SHA-256 digest of `message` (FIPS 180-4): 32 bytes.
    /// - Throws: `CryptoError(.libraryMissing)` without libcrypto, `.failed` if it refuses.
    public static func sha256(_ message: Data) throws(CryptoError) -> Data {
        try LibCrypto.load()
        guard let digest = LibCrypto.sha256(message) else { throw LibCrypto.failure("SHA-256") }
        return Data(digest)
    }

    /// The HMAC-SHA256 of `message` under `key` (RFC 2104, RFC 4231): 32 bytes. A key of any
    /// length is taken (a longer one than 64 bytes is hashed first, as RFC 2104 says).
    /// - Throws: `CryptoError(.libraryMissing)` without libcrypto, `.failed` if it refuses
    ///   (a key over 2 GiB).
    public static func hmacSHA256(key: Data, message: Data) throws(CryptoError) -> Data {
        try LibCrypto.load()
        guard let code = LibCrypto.hmacSHA256(key: key, message: message) else { throw LibCrypto.failure("HMAC-SHA256") }
        return Data(code)
    }
}
