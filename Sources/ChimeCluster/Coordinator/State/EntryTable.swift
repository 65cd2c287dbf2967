import ChimeCore

extension CoordinatorState {
    /// The reminders by id, with how many are in each state (derived, kept as entries are
    /// set and removed): `status` reads the counts in O(1) instead of visiting every reminder.
    ///
    /// Every change of an entry goes through the subscript's setter or `removeValue`, which
    /// adjust the counts from the old and the new entry's state.
    struct EntryTable: Sendable, Sequence {
        private var byID: [ReminderID: Entry] = [:]
        /// How many entries are in each state (states with none may be absent).
        private(set) var stateCounts: [ReminderState: Int] = [:]

        /// The entry of `id`; setting `nil` removes it.
        subscript(id: ReminderID) -> Entry? {
            get { byID[id] }
            set {
                let old: Entry?
                if let newValue { old = byID.updateValue(newValue, forKey: id) } else { old = byID.removeValue(forKey: id) }
                if let old { stateCounts[old.state, default: 0] -= 1 }
                if let newValue { stateCounts[newValue.state, default: 0] += 1 }
            }
        }

        /// Removes and returns the entry of `id`.
        @discardableResult
        mutating func removeValue(forKey id: ReminderID) -> Entry? {
            let old = byID.removeValue(forKey: id)
            if let old { stateCounts[old.state, default: 0] -= 1 }
            return old
        }

        var count: Int { byID.count }
        var isEmpty: Bool { byID.isEmpty }
        var keys: Dictionary<ReminderID, Entry>.Keys { byID.keys }
        var values: Dictionary<ReminderID, Entry>.Values { byID.values }

        mutating func reserveCapacity(_ capacity: Int) { byID.reserveCapacity(capacity) }

        func makeIterator() -> Dictionary<ReminderID, Entry>.Iterator { byID.makeIterator() }
    }
}
