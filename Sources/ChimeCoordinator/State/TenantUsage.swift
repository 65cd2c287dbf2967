import ChimeCore
import ChimeSecurity

/// How many reminders, and how many stored bytes, the recipients of each tracked tenant scope
/// hold: the counts a restricted key's quota (``TenantQuota``) is checked against.
///
/// Derived, never a second truth: ``EntryTable`` adjusts it from the old and the new entry
/// each time an entry is set or removed (so the fold, a replay and a snapshot load all keep
/// it), and a scope starts being tracked with one pass over the entries
/// (``EntryTable/track(_:)``). A reminder counts its binary form's bytes, exactly what
/// the coordinator keeps of it. Left out of the state's `==`.
struct TenantUsage: Sendable {
    /// One scope's reminders (in any state) and their bytes.
    struct Usage: Sendable, Hashable {
        var reminders = 0
        var bytes = 0
    }

    /// Scopes tracked at most; a new one beyond clears the others, which are tracked again
    /// (one pass each) when their keys next schedule. Keys come and go with SIGHUP reloads.
    static let maximumScopes = 1024

    private(set) var byScope: [RecipientScope: Usage] = [:]

    var isEmpty: Bool { byScope.isEmpty }

    /// Adds `reminders` and `bytes` (negative to subtract) to every tracked scope that allows `recipient`.
    mutating func add(reminders: Int, bytes: Int, of recipient: RecipientID) {
        for (scope, usage) in byScope where scope.allows(recipient) {
            byScope[scope] = Usage(reminders: usage.reminders + reminders, bytes: usage.bytes + bytes)
        }
    }

    /// Follows one entry as `old` becomes `new` (either `nil`: added, removed). Only a change
    /// of recipient or of size costs anything: a firing moving `next` on does not.
    mutating func replace(_ old: ReminderEntry?, with new: ReminderEntry?) {
        if let old, let new, old.recipient == new.recipient, old.storedBytes == new.storedBytes { return }
        if let old { add(reminders: -1, bytes: -old.storedBytes, of: old.recipient) }
        if let new { add(reminders: 1, bytes: new.storedBytes, of: new.recipient) }
    }

    /// Starts tracking `scope` at `usage` (counted by the caller), making room if needed.
    mutating func start(_ scope: RecipientScope, at usage: Usage) {
        if byScope.count >= Self.maximumScopes { byScope.removeAll() }
        byScope[scope] = usage
    }
}

extension EntryTable {
    /// The reminders and bytes `scope`'s recipients hold, when it is tracked.
    func usage(of scope: RecipientScope) -> TenantUsage.Usage? { tenants.byScope[scope] }

    /// Tracks `scope` from now on (one pass over the entries; nothing when already tracked).
    /// - Returns: its usage.
    @discardableResult
    mutating func track(_ scope: RecipientScope) -> TenantUsage.Usage {
        if let usage = tenants.byScope[scope] { return usage }
        var usage = TenantUsage.Usage()
        for entry in values where scope.allows(entry.recipient) {
            usage.reminders += 1
            usage.bytes += entry.storedBytes
        }
        tenants.start(scope, at: usage)
        return usage
    }
}
