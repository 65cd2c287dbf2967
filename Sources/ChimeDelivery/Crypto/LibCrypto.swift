internal import COpenSSL
import Foundation

/// Every call into OpenSSL's libcrypto, in this one file: the shim's function table is a
/// `static inline` function's static, and each Swift file that calls the shim gets its own
/// copy of it, so a table loaded from one file would be empty in another.
enum LibCrypto {
    /// Loads libcrypto if it is not yet.
    /// - Throws: `CryptoError(.libraryMissing)` naming the missing library or call.
    static func load() throws(CryptoError) {
        guard chime_crypto_load() == 1 else { throw CryptoError(.libraryMissing, String(cString: chime_crypto_error())) }
    }

    /// A `code` error for `operation`, with OpenSSL's queued reason (the queue is emptied).
    static func failure(_ operation: String, code: CryptoError.Code = .failed) -> CryptoError {
        let reason = takeError()
        return CryptoError(code, reason.isEmpty ? "\(operation) failed" : "\(operation) failed: \(reason)")
    }

    /// Empties this thread's OpenSSL error queue (a key check or a failed verification can
    /// leave entries that would name the wrong failure later).
    static func clearErrors() { _ = takeError() }

    /// OpenSSL's oldest queued error as text, empty when none; the thread's queue is emptied.
    static func takeError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        chime_crypto_take_error(&buffer, buffer.count)
        return text(buffer)
    }

    /// SHA-256 of `message`, 32 bytes; `nil` when libcrypto refuses. Loaded first.
    static func sha256(_ message: Data) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        let isDone = message.withUnsafeBytes { bytes in
            chime_crypto_sha256(bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), bytes.count, &out) == 1
        }
        return isDone ? out : nil
    }

    /// HMAC-SHA256 of `message` under `key`, 32 bytes; `nil` when libcrypto refuses.
    static func hmacSHA256(key: Data, message: Data) -> [UInt8]? {
        guard let keyLength = Int32(exactly: key.count) else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        let isDone = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                chime_crypto_hmac_sha256(
                    keyBytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), keyLength,
                    messageBytes.bindMemory(to: UInt8.self).baseAddress ?? UnsafePointer(bitPattern: 1), messageBytes.count, &out) == 1
            }
        }
        return isDone ? out : nil
    }

    /// What a private key is.
    enum KeyKind: Equatable {
        /// An EC key on the named curve (`prime256v1` for P-256).
        case ec(curve: String)
        /// An RSA key of `bits`.
        case rsa(bits: Int)
        /// Anything else (Ed25519, DSA, …).
        case other
    }

    /// The key in PEM text, owned by the caller (``freeKey(_:)``); `nil` when it does not parse.
    static func readPrivateKey(pem: String) -> OpaquePointer? {
        let text = Array(pem.utf8)
        guard let length = Int32(exactly: text.count) else { return nil }
        return text.withUnsafeBytes { chime_crypto_read_private_key($0.baseAddress, length) }
    }

    static func freeKey(_ key: OpaquePointer) { chime_crypto_free_key(key) }

    static func kind(of key: OpaquePointer) -> KeyKind {
        switch chime_crypto_key_type(key) {
        case chime_crypto_key_type_ec:
            var name = [CChar](repeating: 0, count: 64)
            return .ec(curve: chime_crypto_key_group(key, &name, name.count) == 1 ? text(name) : "")
        case chime_crypto_key_type_rsa: return .rsa(bits: Int(chime_crypto_key_bits(key)))
        default: return .other
        }
    }

    /// The SHA-256 signature of `message` with `key` as OpenSSL makes it (ECDSA: DER; RSA:
    /// PKCS #1 v1.5); `nil` when libcrypto refuses.
    static func signSHA256(_ message: Data, with key: OpaquePointer) -> [UInt8]? {
        var room = 1024
        var out = [UInt8](repeating: 0, count: room)
        let isSigned = message.withUnsafeBytes { bytes in
            chime_crypto_sign_sha256(key, bytes.bindMemory(to: UInt8.self).baseAddress ?? UnsafePointer(bitPattern: 1), bytes.count, &out, &room)
                == 1
        }
        return isSigned && room <= out.count ? Array(out.prefix(room)) : nil
    }

    /// Whether `signature` (OpenSSL's form) is `key`'s SHA-256 signature of `message`.
    static func verifySHA256(_ signature: [UInt8], of message: Data, with key: OpaquePointer) -> Bool {
        let isValid = message.withUnsafeBytes { bytes in
            chime_crypto_verify_sha256(
                key, bytes.bindMemory(to: UInt8.self).baseAddress ?? UnsafePointer(bitPattern: 1), bytes.count, signature, signature.count) == 1
        }
        clearErrors()
        return isValid
    }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
