import ChimeCore
import ChimeJournal
import ChimeStore
import Foundation

/// Naming reminders: a request names ids, with or without a recipient; entries and firing ids
/// of earlier versions name them by id alone. Reminder ids are unique per recipient, so a
/// bare id stands for every recipient's reminder of that id (in a store written before ids
/// were per recipient there is at most one).
extension DurableState {
    /// The keys of the reminders `ids` names — `recipient`'s when given, else every
    /// recipient's — in key order after `after`, existing ones only. Walks each id's run of
    /// the index lazily, so an id every recipient uses costs what is read of it.
    /// - Parameter ids: sorted, without duplicates.
    func keys(named ids: [ReminderID], of recipient: RecipientID?, after: ReminderKey?) -> AnySequence<ReminderKey> {
        if let recipient {
            let keys = ids.lazy.map { ReminderKey($0, of: recipient) }
                .filter { key in (after.map { key > $0 } ?? true) && schedule.entries[key] != nil }
            return AnySequence(keys)
        }
        let index = schedule.index
        let start = after.map { after in ids.firstIndex { $0 >= after.id } ?? ids.endIndex } ?? ids.startIndex
        return AnySequence(ids[start...].lazy.flatMap { id in
            index.keys(after: after.flatMap { $0.hasID(id) ? $0 : nil } ?? ReminderKey.first(of: id))
                .lazy.prefix { $0.hasID(id) }
        })
    }

    /// The one existing key of a legacy key's id (the first, should an id have several
    /// recipients since), or `nil` when no reminder has that id.
    func resolve(_ key: ReminderKey) -> ReminderKey? {
        guard key.isLegacy else { return schedule.entries[key] != nil ? key : nil }
        return schedule.index.keys(after: key).first { _ in true }.flatMap { $0.hasID(key.id) ? $0 : nil }
    }

    /// A firing id with its recipient: its reminder's, else found among the firings held
    /// (unsettled, dead letters, nags) and the delivered lists; `nil` when none is known. A
    /// firing id that names its recipient is returned as it is.
    func resolve(_ firingId: FiringID) -> FiringID? {
        guard firingId.isLegacy else {
            // `cal/1@…` may be recipient `cal`'s `1` or, from an earlier version, the id `cal/1`.
            if schedule.entries[firingId.key] == nil, !isKnown(firingId), let legacy = firingId.legacyReading,
                let resolved = resolve(legacy)
            {
                return resolved
            }
            return firingId
        }
        if let key = resolve(firingId.key) { return firingId.resolved(to: key.recipient) }
        func matches(_ candidate: FiringID) -> Bool {
            candidate.reminder == firingId.reminder && candidate.dueAtMilliseconds == firingId.dueAtMilliseconds
                && candidate.nag == firingId.nag
        }
        if let found = deliveries.unsettled.keys.first(where: matches)
            ?? deliveries.deadLetters.keys.first(where: matches) ?? deliveries.nagFirings.keys.first(where: matches)
        {
            return found
        }
        for (recipient, ledger) in recipients.ledgers where ledger.isDelivered(firingId.nagBase.resolved(to: recipient)) {
            return firingId.resolved(to: recipient)
        }
        return nil
    }

    /// Whether a firing of this id is held (unsettled, dead-lettered, a pending nag) or delivered.
    private func isKnown(_ firingId: FiringID) -> Bool {
        deliveries.unsettled[firingId] != nil || deliveries.deadLetters[firingId] != nil
            || deliveries.nagFirings[firingId] != nil || (recipients.ledgers[firingId.recipient]?.isDelivered(firingId.nagBase) ?? false)
    }

    /// `entry` with every legacy reminder key and firing id resolved (`resolve`); a name that
    /// resolves to nothing stays as it is and changes nothing when folded, as an entry naming
    /// something already gone.
    func resolvingLegacyIdentities(_ entry: JournalEntry) -> JournalEntry {
        func key(_ key: ReminderKey) -> ReminderKey { resolve(key) ?? key }
        func id(_ id: FiringID) -> FiringID { resolve(id) ?? id }
        switch entry {
        case .cancelled(let keys, let at): return .cancelled(keys.map(key), at: at)
        case .switched(let keys, let enabled, let at): return .switched(keys.map(key), enabled: enabled, at: at)
        case .fired(let k, let dueAt, let next, let late, let missed, let at):
            return .fired(key(k), dueAt: dueAt, next: next, late: late, missed: missed, at: at)
        case .skipped(let k, let dueAt, let next, let at): return .skipped(key(k), dueAt: dueAt, next: next, at: at)
        case .suppressed(let k, let dueAt, let next, let reason, let at):
            return .suppressed(key(k), dueAt: dueAt, next: next, reason: reason, at: at)
        case .nagFired(let f, let at): return .nagFired(id(f), at: at)
        case .leaseExpired(let f, let at): return .leaseExpired(id(f), at: at)
        case .acknowledged(let f, let seq, let worker, let firedAt):
            return .acknowledged(id(f), seq: seq, worker: worker, firedAt: firedAt)
        case .deadLettered(let f, let at): return .deadLettered(id(f), at: at)
        case .retried(let f, let at): return .retried(id(f), at: at)
        case .deadLetterDeleted(let f, let at): return .deadLetterDeleted(id(f), at: at)
        case .handled(let f, let action, let at): return .handled(id(f), action: action, at: at)
        case .deliveredRemoved(let recipient, let f, let at): return .deliveredRemoved(recipient, f.resolved(to: recipient), at: at)
        default: return entry
        }
    }
}
