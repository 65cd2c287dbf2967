import ChimeCore
import ChimeSecurity

/// How many reminders, and how many stored bytes, the recipients of each tracked tenant scope
/// hold: the counts a restricted key's quota (``TenantQuota``) is checked against.
///
/// Derived, never a second truth: ``EntryTable`` keeps one for the reminders, adjusted from
/// the old and the new entry each time an entry is set or removed, and ``Recipients`` one for
/// the registrations and delivered lists (`reminders` always 0), adjusted each time a
/// registration is stored or a ledger changes (so the fold, a replay, a snapshot load and a
/// slot move all keep them); a scope starts being tracked with one pass over each
/// (``EntryTable/track(_:)``, ``Recipients/track(_:)``). A reminder counts its binary form's
/// bytes, a registration its JSON's (``Recipient/storedBytes``), a delivered list its
/// entries' JSON (``BadgeLedger/storedBytes``): what the coordinator keeps of each. Left out
/// of the state's `==`.
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

    /// Follows one registration as `old` becomes `new` (`old` `nil`: a first registration).
    /// Measures the two only when a tracked scope allows the recipient (a JSON encoding each).
    mutating func replace(registration old: Recipient?, with new: Recipient) {
        guard byScope.keys.contains(where: { $0.allows(new.id) }) else { return }
        let change = new.storedBytes - (old?.storedBytes ?? 0)
        if change != 0 { add(reminders: 0, bytes: change, of: new.id) }
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

extension Recipients {
    /// The bytes `scope`'s recipients' registrations and delivered lists hold, when it is tracked.
    func registrationBytes(of scope: RecipientScope) -> Int? { tenants.byScope[scope]?.bytes }

    /// Tracks `scope` from now on (one pass over the registrations, a JSON encoding of each the
    /// scope allows, and one over the delivered lists; nothing when already tracked).
    /// - Returns: the bytes its recipients' registrations and delivered lists take.
    @discardableResult
    mutating func track(_ scope: RecipientScope) -> Int {
        if let usage = tenants.byScope[scope] { return usage.bytes }
        var bytes = 0
        for (id, recipient) in registered where scope.allows(id) { bytes += recipient.storedBytes }
        for (id, ledger) in ledgers where scope.allows(id) { bytes += ledger.storedBytes }
        tenants.start(scope, at: TenantUsage.Usage(reminders: 0, bytes: bytes))
        return bytes
    }
}
