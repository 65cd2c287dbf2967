/// An HTTP exchange that did not complete: why, and a sentence naming the request.
///
/// Two errors are equal when their codes are equal. New codes may be added without breaking
/// callers.
public struct HTTPClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Why the exchange failed.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The code's name.
        public var rawValue: String

        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The deadline passed before the whole response arrived.
        public static let timedOut = Code(rawValue: "timedOut")
        /// The response body was over the client's bound.
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// No connection: the name did not resolve or nothing listens at the address.
        public static let unreachable = Code(rawValue: "unreachable")
        /// TLS failed: the server's certificate did not verify against the CA file, or the
        /// CA file did not load.
        public static let tls = Code(rawValue: "tls")
        /// Anything else (a malformed URL, a connection reset, …).
        public static let failed = Code(rawValue: "failed")
    }

    /// Why the exchange failed.
    public var code: Code
    /// A sentence naming the request and libcurl's account of the failure.
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
