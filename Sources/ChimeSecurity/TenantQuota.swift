import Foundation

/// What the recipients of one restricted `client` key may hold at most: reminders (in any
/// state), and the bytes those reminders and the recipients' registrations are stored in. A
/// `schedule` that would go past either is refused whole with `quota_exceeded`, and so is a
/// `register` (or a destination add) that would grow the bytes past theirs; `cancel` and a
/// smaller registration free quota at once.
///
/// Certificate metadata `max-reminders = 500` and `max-reminder-bytes = 1048576` (a
/// non-negative integer, or `unlimited`) set it per key (`chime keys add … --max-reminders N
/// --max-reminder-bytes B`); a limit the certificate does not give comes from the configuration
/// (`limits.tenantMaxReminders`, `limits.tenantMaxReminderBytes`). Keys without a recipient
/// restriction (operators, unrestricted clients) have no quota: usage is counted per tenant
/// scope (``RecipientScope``), since a reminder does not record the key that scheduled it.
public struct TenantQuota: Sendable, Hashable {
    /// A limit as a certificate gives it: a number, `unlimited`, or nothing (the default).
    public enum Limit: Sendable, Hashable {
        /// At most this many (reminders or bytes), 0 … `Int.max`.
        case atMost(Int)
        /// No limit.
        case unlimited
    }

    /// Reminders the key's recipients may hold at most, in any state; `nil`: the configured default.
    public var maxReminders: Limit?
    /// Bytes those reminders and the recipients' registrations may take at most together, as
    /// the coordinator stores them (each reminder's binary form, each registration's JSON);
    /// `nil`: the configured default.
    public var maxReminderBytes: Limit?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(maxReminders: Limit? = nil, maxReminderBytes: Limit? = nil) {
        self.maxReminders = maxReminders
        self.maxReminderBytes = maxReminderBytes
    }

    /// The limits in force: this key's own, else `defaultReminders` and `defaultBytes` (`nil`: unlimited).
    /// - Returns: reminders and bytes at most, `nil` for no limit.
    public func resolved(defaultReminders: Int?, defaultBytes: Int?) -> (reminders: Int?, bytes: Int?) {
        func pick(_ own: Limit?, _ fallback: Int?) -> Int? {
            switch own {
            case .atMost(let value): value
            case .unlimited: nil
            case nil: fallback
            }
        }
        return (pick(maxReminders, defaultReminders), pick(maxReminderBytes, defaultBytes))
    }

    /// The certificate metadata keys (`max-reminders`, `max-reminder-bytes`).
    public static let metadataKeys = (reminders: "max-reminders", bytes: "max-reminder-bytes")

    /// Reads the quota from certificate metadata; `nil` when it names none.
    /// - Throws: `SecurityError(.badCertificate)` for a value that is neither a non-negative
    ///   integer nor `unlimited`.
    static func read(_ metadata: [String: String]) throws(SecurityError) -> TenantQuota? {
        func limit(_ key: String) throws(SecurityError) -> Limit? {
            guard let text = metadata[key] else { return nil }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed == "unlimited" { return .unlimited }
            guard let value = Int(trimmed), value >= 0 else {
                throw SecurityError(.badCertificate, "\(key) must be a non-negative integer or unlimited, not '\(text)'")
            }
            return .atMost(value)
        }
        let quota = TenantQuota(maxReminders: try limit(metadataKeys.reminders), maxReminderBytes: try limit(metadataKeys.bytes))
        return quota.maxReminders == nil && quota.maxReminderBytes == nil ? nil : quota
    }

    /// The metadata that describes this quota (`read`'s inverse).
    var metadata: [String: String] {
        func text(_ limit: Limit) -> String {
            switch limit {
            case .atMost(let value): String(value)
            case .unlimited: "unlimited"
            }
        }
        var metadata: [String: String] = [:]
        if let maxReminders { metadata[Self.metadataKeys.reminders] = text(maxReminders) }
        if let maxReminderBytes { metadata[Self.metadataKeys.bytes] = text(maxReminderBytes) }
        return metadata
    }
}
