import ChimeCore
import ChimeWire

/// The reminders by id, with how many are in each state (derived, kept as entries are set and
/// removed): `status` reads the counts in O(1) instead of visiting every reminder.
///
/// Every change of an entry goes through the subscript's setter or `removeValue`, which adjust
/// the counts from the old and the new entry's state, and the recipient index
/// (``byRecipient``) when a reminder enters or leaves.
///
/// Striped (`StripedDictionary`): the loop's first change after it hands a copy of the state to
/// the snapshot thread copies one stripe of the table, not the table.
struct EntryTable: Sendable, Sequence, Equatable {
    /// How many stripes hold the entries (and the schedule's index): about 4,000 entries each at
    /// a million reminders.
    static let stripeCount = 256
    private var byID = StripedDictionary<ReminderKey, ReminderEntry>(stripeCount: stripeCount) { $0.stripeHash }
    /// How many entries are in each state (states with none may be absent or 0).
    @Derived private(set) var stateCounts: [ReminderState: Int] = [:]
    /// The reminders and bytes of each tracked tenant scope (``TenantUsage``; none until a
    /// restricted key with a quota schedules).
    @Derived var tenants = TenantUsage()
    /// Each recipient's keys in key order (``RecipientIndex``): `list` and `cancel` by
    /// recipient walk only that recipient's reminders.
    @Derived private(set) var byRecipient = RecipientIndex()
    /// Every entry's place in next-fire order (``ReminderEntry/nextFirePlace(of:)``): `list
    /// --order next-fire` walks it from its cursor.
    @Derived private(set) var byNextFire = SortedKeySet<NextFireKey>()

    /// The entry of `id`; setting `nil` removes it.
    subscript(id: ReminderKey) -> ReminderEntry? {
        get { byID[id] }
        set {
            let old: ReminderEntry?
            if let newValue { old = byID.updateValue(newValue, forKey: id) } else { old = byID.removeValue(forKey: id) }
            if let old { stateCounts[old.state, default: 0] -= 1 }
            if let newValue { stateCounts[newValue.state, default: 0] += 1 }
            if !tenants.isEmpty { tenants.replace(old, with: newValue) }
            // Most changes move an entry on (fired, switched): its recipient stays, and so does its place.
            if old?.recipient != newValue?.recipient {
                if let old { byRecipient.remove(id, of: old.recipient) }
                if let newValue { byRecipient.insert(id, of: newValue.recipient) }
            }
            let oldPlace = old?.nextFirePlace(of: id)
            let newPlace = newValue?.nextFirePlace(of: id)
            if oldPlace != newPlace {
                if let oldPlace { byNextFire.remove(oldPlace) }
                if let newPlace { byNextFire.insert(newPlace) }
            }
        }
    }

    /// Removes and returns the entry of `id`.
    @discardableResult
    mutating func removeValue(forKey id: ReminderKey) -> ReminderEntry? {
        let old = byID.removeValue(forKey: id)
        if let old {
            stateCounts[old.state, default: 0] -= 1
            byRecipient.remove(id, of: old.recipient)
            byNextFire.remove(old.nextFirePlace(of: id))
        }
        if !tenants.isEmpty { tenants.replace(old, with: nil) }
        return old
    }

    var count: Int { byID.count }
    var isEmpty: Bool { byID.isEmpty }
    var values: LazyMapSequence<FlattenSequence<[[ReminderKey: ReminderEntry]]>, ReminderEntry> { byID.values }
    var keys: LazyMapSequence<FlattenSequence<[[ReminderKey: ReminderEntry]]>, ReminderKey> { byID.keys }

    /// Whether the derived indexes (``byRecipient``, ``byNextFire``) equal those built from
    /// scratch from the entries (what a recovery, a slice and a merge must leave; checked by
    /// the simulations).
    var hasConsistentIndexes: Bool {
        byRecipient == RecipientIndex(rebuiltFrom: byID)
            && byNextFire == SortedKeySet(byID.lazy.map { $0.value.nextFirePlace(of: $0.key) })
    }

    mutating func reserveCapacity(_ capacity: Int) { byID.reserveCapacity(capacity) }

    func makeIterator() -> FlattenSequence<[[ReminderKey: ReminderEntry]]>.Iterator { byID.makeIterator() }
}
