import Foundation

/// A reminder, request or configuration value that Chime refuses, with a stable code.
///
/// Equality compares the code only, so new context fields never break callers that
/// match on `error.code`. The code's raw value is the wire's `error.code`.
public struct ValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable reason. New codes may be added at any time.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A field is missing, malformed or out of range (wire code `invalid_argument`).
        public static let invalidArgument = Code(rawValue: "invalid_argument")
        /// The time zone identifier is not an IANA zone known to this machine.
        public static let unknownTimeZone = Code(rawValue: "unknown_time_zone")
        /// A value exceeds a configured size limit (wire code `too_large`).
        public static let tooLarge = Code(rawValue: "too_large")
    }

    /// The stable reason.
    public var code: Code
    /// The offending field, in the wire's dotted form (`trigger.timeZone`), when known.
    public var field: String?
    /// One human sentence saying what is wrong and, where possible, what is expected.
    public var message: String

    /// Creates the value from its fields (see each property for meaning and units).
    public init(_ code: Code, field: String? = nil, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String {
        if let field { return "\(field): \(message)" }
        return message
    }

    public static func == (lhs: ValidationError, rhs: ValidationError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
