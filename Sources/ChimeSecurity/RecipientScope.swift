import ChimeCore

/// The recipients a restricted `client` key may act for: listed ids and id prefixes.
///
/// Certificate metadata `recipients = "alice, bob"` and `recipient-prefixes = "a-"` make
/// it; a client certificate without either is unrestricted (no scope).
public struct RecipientScope: Sendable, Hashable {
    /// Recipient ids allowed exactly.
    public var recipients: Set<String>
    /// Recipient id prefixes: an id starting with one is allowed.
    public var prefixes: [String]

    /// Creates a scope; both empty allows no recipient at all.
    public init(recipients: Set<String> = [], prefixes: [String] = []) {
        self.recipients = recipients
        self.prefixes = prefixes
    }

    /// Whether `recipient` is inside the scope.
    public func allows(_ recipient: RecipientID) -> Bool {
        recipients.contains(recipient.rawValue) || prefixes.contains { recipient.rawValue.hasPrefix($0) }
    }

    /// The scope for error messages: `alice, bob, a-*`.
    public var summary: String {
        (recipients.sorted() + prefixes.map { "\($0)*" }).joined(separator: ", ")
    }
}
