/// A digest, key or signature that could not be made: why, and a sentence naming the input.
///
/// Two errors are equal when their codes are equal. New codes may be added without breaking
/// callers.
public struct CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Why the operation failed.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The code's name.
        public var rawValue: String

        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// `libcrypto.so.3` (Debian package `libssl3`) could not be loaded, or lacks a call.
        public static let libraryMissing = Code(rawValue: "libraryMissing")
        /// The text is not an unencrypted PEM private key OpenSSL can read.
        public static let badPEM = Code(rawValue: "badPEM")
        /// The key is of another kind than the algorithm needs (ES256: an EC P-256 key;
        /// RS256: an RSA key of at least 2048 bits).
        public static let wrongKeyType = Code(rawValue: "wrongKeyType")
        /// A key file is missing, unreadable, too large or malformed (a service-account JSON
        /// without `private_key`, …).
        public static let badKeyFile = Code(rawValue: "badKeyFile")
        /// A key file is readable or writable by group or others.
        public static let loosePermissions = Code(rawValue: "loosePermissions")
        /// libcrypto refused to digest or sign (its own error queue's account in the message).
        public static let failed = Code(rawValue: "failed")
    }

    /// Why the operation failed.
    public var code: Code
    /// A sentence naming the input (a file path, never a key's bytes) and the cause.
    public var message: String

    /// An error with `code` and `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// Equality on the code only.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
}
