/// Keys or certificates that cannot be used, or an address that may not be bound without them.
///
/// Equality compares the code only.
public struct SecurityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The raw code, as printed.
        public var rawValue: String
        /// Creates a code from its raw value.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A certificate file is missing, unreadable or not in the ZeroMQ certificate format.
        public static let badCertificate = Code(rawValue: "bad_certificate")
        /// A secret certificate readable by group or others, or an allow-list writable by them.
        public static let loosePermissions = Code(rawValue: "loose_permissions")
        /// A secret file (a webhook's signing secrets, a provider key) is missing or unreadable.
        public static let unreadableSecret = Code(rawValue: "unreadable_secret")
        /// A non-loopback address without keys and without `security.insecure`.
        public static let insecureBind = Code(rawValue: "insecure_bind")
        /// The start-up self-test let an unknown key in (or could not run): fail closed.
        public static let selfTestFailed = Code(rawValue: "self_test_failed")
        /// libzmq was built without CURVE (`zmq_has("curve")` is false).
        public static let curveUnavailable = Code(rawValue: "curve_unavailable")
    }

    /// The kind of problem.
    public var code: Code
    /// One sentence naming the file or address and what to do.
    public var message: String

    /// Creates the value from its fields (see each property for meaning).
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Compares codes only.
    public static func == (lhs: SecurityError, rhs: SecurityError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// `<code>: <message>`.
    public var description: String { "\(code.rawValue): \(message)" }
}
