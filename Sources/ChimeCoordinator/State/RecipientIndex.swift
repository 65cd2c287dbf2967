import ChimeCore

/// Each recipient's reminder keys in key order (derived from the entries: never journaled or
/// snapshotted), so `list --recipient` and `cancel --recipient` walk a recipient's own run,
/// O(log n + matches), instead of every reminder (issue 42).
///
/// Kept in step by ``EntryTable``'s setter and `removeValue`, the one place reminders enter and
/// leave the table: a recovery (snapshot load and journal fold) and a slice's merge rebuild it by
/// that same path. Striped by recipient, as the table is by key, so the loop's first change after
/// handing a copy of the state to the snapshot thread copies one stripe, not the index.
struct RecipientIndex: Sendable, Equatable {
    private var byRecipient = StripedDictionary<RecipientID, SortedKeySet<ReminderKey>>(
        stripeCount: EntryTable.stripeCount) { $0.stripeHash }

    /// An empty index.
    init() {}

    /// The index of `entries` built from scratch (what the maintained one must equal).
    init<Entries: Sequence>(rebuiltFrom entries: Entries) where Entries.Element == (key: ReminderKey, value: ReminderEntry) {
        var keys: [RecipientID: [ReminderKey]] = [:]
        for (key, entry) in entries { keys[entry.recipient, default: []].append(key) }
        for (recipient, run) in keys { byRecipient[recipient] = SortedKeySet(run) }
    }

    /// Adds `key`, a reminder of `recipient`.
    mutating func insert(_ key: ReminderKey, of recipient: RecipientID) {
        var run = byRecipient.removeValue(forKey: recipient) ?? SortedKeySet()
        run.insert(key)
        byRecipient[recipient] = run
    }

    /// Removes `key`, a reminder of `recipient`; a recipient left with none leaves the index.
    mutating func remove(_ key: ReminderKey, of recipient: RecipientID) {
        guard var run = byRecipient.removeValue(forKey: recipient) else { return }
        run.remove(key)
        if !run.isEmpty { byRecipient[recipient] = run }
    }

    /// `recipient`'s keys after `after` (all of them when `nil`), in key order.
    func keys(of recipient: RecipientID, after: ReminderKey?) -> SortedKeySet<ReminderKey>.Walk {
        (byRecipient[recipient] ?? SortedKeySet()).keys(after: after)
    }

    /// How many reminders `recipient` has.
    func count(of recipient: RecipientID) -> Int { byRecipient[recipient]?.count ?? 0 }

    /// How many recipients have a reminder.
    var recipientCount: Int { byRecipient.count }
}
