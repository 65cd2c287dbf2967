import ChimeCore
import Foundation

/// An error that crosses the wire: a stable code plus one human sentence.
///
/// JSON shape (inside a reply): `{"code": "invalid_argument", "message": "...",
/// "field": "trigger.timeZone"}`; `field` only when one field is at fault. Equality
/// compares the code only.
public struct WireError: Error, Codable, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code; its raw value is what the wire carries.
    public struct Code: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
        public var description: String { rawValue }

        /// A field is missing, malformed or out of range.
        public static let invalidArgument = Code(rawValue: "invalid_argument")
        /// The time zone is not an IANA zone this machine knows.
        public static let unknownTimeZone = Code(rawValue: "unknown_time_zone")
        /// The message is not what the protocol allows: wrong frames, or not JSON at all.
        public static let malformed = Code(rawValue: "malformed")
        /// The request's `op` is not one this coordinator serves.
        public static let unknownOperation = Code(rawValue: "unknown_op")
        /// A JSON object carries a key its type (or the request's op) does not take; `field`
        /// is its path and the message suggests the key meant when one is close.
        public static let unknownField = Code(rawValue: "unknown_field")
        /// The reminder, firing or worker named does not exist.
        public static let notFound = Code(rawValue: "not_found")
        /// The message exceeds the configured size limit.
        public static let tooLarge = Code(rawValue: "too_large")
        /// The caller lacks the credential the operation needs.
        public static let unauthenticated = Code(rawValue: "unauthenticated")
        /// The caller's key (its role, or its recipient restriction) does not allow the request.
        public static let forbidden = Code(rawValue: "forbidden")
        /// The service cannot answer now (no coordinator, timeout, shutting down); retry later.
        public static let unavailable = Code(rawValue: "unavailable")
        /// The coordinator's store is full: it refuses changes (and `snapshot`, `compact`,
        /// `store`) until space returns, while it keeps answering reads and firing what is
        /// durable; retry later (`chime ctl status` shows `storeFull`).
        public static let storeFull = Code(rawValue: "store_full")
        /// The peer sent more control requests than its rate limit allows (`control.rateLimit`);
        /// `retryAfterMs` says when the next one will be taken. The request was not read.
        public static let rateLimited = Code(rawValue: "rate_limited")
        /// The request is for a recipient whose slot this shard does not own (Redis Cluster's
        /// `MOVED`): `shard` names the owner and `mapEpoch` the map that says so; nothing was
        /// applied. A client refreshes its shard map and sends the request there.
        public static let wrongShard = Code(rawValue: "wrong_shard")
        /// A `schedule`, `register` or `destinations` request would take the caller's
        /// recipients past their key's quota (reminders held, the bytes they and the
        /// registrations are stored in, destinations: `max-reminders`, `max-reminder-bytes`,
        /// `limits.tenantMaxDestinations`); nothing was applied. `cancel` frees quota at once.
        public static let quotaExceeded = Code(rawValue: "quota_exceeded")
        /// A cross-shard request (a listing, a cancel by filter, a status) that some shard did
        /// not answer: the result holds what the others answered, the message names the
        /// shards missing, `shards` lists their ids and `shard` is the first of them.
        public static let partial = Code(rawValue: "partial")
        /// A bug on our side; the message says what failed.
        public static let `internal` = Code(rawValue: "internal")
    }

    /// The stable code.
    public var code: Code
    /// One human sentence.
    public var message: String
    /// The offending field in dotted form, when one field is at fault.
    public var field: String?
    /// With `rate_limited`: how long to wait before the next request will be taken, in
    /// milliseconds (JSON `"retryAfterMs"`).
    public var retryAfterMilliseconds: Int?
    /// With `wrong_shard`: the shard that owns the recipient's slot; with `unavailable` from a
    /// cluster client, the shard that did not answer; with `partial`, the first of `shards`.
    public var shard: Int?
    /// With `partial`: every shard that did not answer, in id order.
    public var shards: [Int]?
    /// With `wrong_shard`: the epoch of the shard map that says so.
    public var mapEpoch: UInt64?

    private enum CodingKeys: String, CodingKey {
        case code, message, field
        case retryAfterMilliseconds = "retryAfterMs"
        case shard, shards, mapEpoch
    }

    /// Creates the value from its fields (see each property for meaning and units).
    public init(_ code: Code, _ message: String, field: String? = nil, retryAfterMilliseconds: Int? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    /// Maps a domain validation failure onto its wire code.
    public init(_ error: ValidationError) {
        switch error.code {
        case .unknownTimeZone: code = .unknownTimeZone
        case .tooLarge: code = .tooLarge
        default: code = .invalidArgument
        }
        message = error.message
        field = error.field
    }

    public var description: String {
        if let field { return "\(code): \(field): \(message)" }
        return "\(code): \(message)"
    }

    public static func == (lhs: WireError, rhs: WireError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
