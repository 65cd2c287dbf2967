internal import COpenSSL
import Foundation

/// Every call into OpenSSL's libcrypto, in this one file, through the one function table
/// ``table`` (libcrypto is loaded with `dlopen` at the first use).
///
/// The table is a Swift global, not a C static: a `static inline` function's static is copied
/// into each object file that inlines it, and a release build (whole-module optimization, one
/// object file per source file) inlined these calls into `Digest.swift`'s object with its own,
/// never loaded, copy: the first webhook's HMAC jumped through garbage and killed the worker
/// with SIGILL.
enum LibCrypto {
    /// The loaded table, or why libcrypto could not be loaded. Made once (a global's lazy,
    /// thread-safe initializer), never freed: it lives as long as the process.
    private nonisolated(unsafe) static let loaded: (table: UnsafePointer<chime_crypto_table>?, error: String) = {
        let table = UnsafeMutablePointer<chime_crypto_table>.allocate(capacity: 1)
        table.initialize(to: chime_crypto_table())
        var error = [CChar](repeating: 0, count: 512)
        guard chime_crypto_load_table(table, &error, error.count) == 1 else {
            table.deallocate()
            return (nil, text(error))
        }
        return (UnsafePointer(table), "")
    }()

    /// The function table every call goes through; `nil` until libcrypto loads (never, when it
    /// cannot), in which case each call below answers as refused.
    private static var table: UnsafePointer<chime_crypto_table>? { loaded.table }

    /// Loads libcrypto if it is not yet.
    /// - Throws: `CryptoError(.libraryMissing)` naming the missing library or call.
    static func load() throws(CryptoError) {
        guard table != nil else { throw CryptoError(.libraryMissing, loaded.error) }
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
        guard let table else { return "" }
        var buffer = [CChar](repeating: 0, count: 256)
        chime_crypto_take_error(table, &buffer, buffer.count)
        return text(buffer)
    }

    /// SHA-256 of `message`, 32 bytes; `nil` when libcrypto refuses. Loaded first.
    static func sha256(_ message: Data) -> [UInt8]? {
        guard let table else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        let isDone = message.withUnsafeBytes { bytes in
            chime_crypto_sha256(table, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), bytes.count, &out) == 1
        }
        return isDone ? out : nil
    }

    /// HMAC-SHA256 of `message` under `key`, 32 bytes; `nil` when libcrypto refuses.
    static func hmacSHA256(key: Data, message: Data) -> [UInt8]? {
        guard let table, let keyLength = Int32(exactly: key.count) else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        let isDone = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                chime_crypto_hmac_sha256(
                    table, keyBytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), keyLength,
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
        guard let table, let length = Int32(exactly: text.count) else { return nil }
        return text.withUnsafeBytes { chime_crypto_read_private_key(table, $0.baseAddress, length) }
    }

    /// Frees a key ``readPrivateKey(pem:)`` made (which only a loaded table makes).
    static func freeKey(_ key: OpaquePointer) {
        guard let table else { return }
        chime_crypto_free_key(table, key)
    }

    static func kind(of key: OpaquePointer) -> KeyKind {
        guard let table else { return .other }
        switch chime_crypto_key_type(table, key) {
        case chime_crypto_key_type_ec:
            var name = [CChar](repeating: 0, count: 64)
            return .ec(curve: chime_crypto_key_group(table, key, &name, name.count) == 1 ? text(name) : "")
        case chime_crypto_key_type_rsa: return .rsa(bits: Int(chime_crypto_key_bits(table, key)))
        default: return .other
        }
    }

    /// The SHA-256 signature of `message` with `key` as OpenSSL makes it (ECDSA: DER; RSA:
    /// PKCS #1 v1.5); `nil` when libcrypto refuses.
    static func signSHA256(_ message: Data, with key: OpaquePointer) -> [UInt8]? {
        guard let table else { return nil }
        var room = 1024
        var out = [UInt8](repeating: 0, count: room)
        let isSigned = message.withUnsafeBytes { bytes in
            chime_crypto_sign_sha256(table, key, bytes.bindMemory(to: UInt8.self).baseAddress ?? UnsafePointer(bitPattern: 1), bytes.count, &out, &room)
                == 1
        }
        return isSigned && room <= out.count ? Array(out.prefix(room)) : nil
    }

    /// Whether `signature` (OpenSSL's form) is `key`'s SHA-256 signature of `message`.
    static func verifySHA256(_ signature: [UInt8], of message: Data, with key: OpaquePointer) -> Bool {
        guard let table else { return false }
        let isValid = message.withUnsafeBytes { bytes in
            chime_crypto_verify_sha256(
                table, key, bytes.bindMemory(to: UInt8.self).baseAddress ?? UnsafePointer(bitPattern: 1), bytes.count, signature, signature.count) == 1
        }
        clearErrors()
        return isValid
    }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
