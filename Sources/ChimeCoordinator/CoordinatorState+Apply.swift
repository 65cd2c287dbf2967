import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

/// What folding one journal entry changed that a live caller acts on.
public struct AppliedEntry: Sendable, Equatable {
    /// The badge update of `.acknowledged`, `.badgeSet`, `.handled` and `.deliveredRemoved`:
    /// published when it changed the number.
    public var badge: BadgeUpdate?
    /// The firing `.fired`, `.nagFired` or `.retried` made unsettled: it waits for a worker.
    let made: CoordinatorState.SharedFiring?

    /// The id of the firing the entry made unsettled, if any.
    public var madeFiring: FiringID? { made?.firing.firingId }

    init(badge: BadgeUpdate? = nil, made: CoordinatorState.SharedFiring? = nil) {
        self.badge = badge
        self.made = made
    }

    /// Equal when the badge updates are and the same firing (by id) was made.
    public static func == (lhs: AppliedEntry, rhs: AppliedEntry) -> Bool {
        lhs.badge == rhs.badge && lhs.madeFiring == rhs.madeFiring
    }
}

/// The fold: every change to the coordinator's durable state is one `JournalEntry` applied
/// here. Handlers (requests, ticks, worker messages, recovery's misfires) validate and decide,
/// then `record` each entry they decided, which appends it to the journal and applies it;
/// recovery applies the journal's entries with the same function. No second interpretation
/// of an entry exists anywhere, so a crash at any entry boundary leaves a state equal to the
/// live one (`CrashEquivalenceTests`).
///
/// Durable state is what `makeSnapshot` writes: reminders and their positions, unsettled
/// firings and their attempts, dead letters, recipients, badges and delivered lists, nags,
/// action jobs, remembered replies, retained events, late-firing counts and the reserved event
/// seqs. Everything else (the waiting line, leases, workers, metrics) is volatile: a recovery
/// rebuilds it from the durable state (`finishRecovery`).
extension CoordinatorState {
    /// Appends `entry` to the turn's directives and folds it into the state.
    ///
    /// `firing` and `recurrence` are values the caller already derived from the same state
    /// (the firing a `.fired` entry makes, a `.scheduled` reminder's occurrences): passing them
    /// changes nothing but speed.
    /// - Returns: what the entry changed that the caller acts on.
    @discardableResult
    mutating func record(
        _ entry: JournalEntry, into directives: inout [CoordinatorDirective], firing: SharedFiring? = nil,
        recurrence: Recurrence? = nil
    ) -> AppliedEntry {
        directives.append(.append(entry))
        return apply(entry, firing: firing, recurrence: recurrence)
    }

    /// Folds one journal entry into the state, exactly as the live coordinator did when it
    /// decided the entry. Recovery calls it for every entry after the snapshot.
    ///
    /// An entry that no longer validates (a zone removed from tzdata) is skipped and counted
    /// in `skippedEntries`; an entry naming something already gone changes nothing.
    /// - Parameters:
    ///   - firing: the firing a `.fired` entry makes, when the caller built it (speed only:
    ///     it equals what the reminder gives, so recovery builds it here).
    ///   - recurrence: a `.scheduled` reminder's occurrences, when the caller built them.
    /// - Returns: what the entry changed that a live caller acts on (a badge update to
    ///   publish, a firing to put in the waiting line).
    @discardableResult
    public mutating func apply(_ entry: JournalEntry, recurrence: Recurrence? = nil) -> AppliedEntry {
        apply(entry, firing: nil, recurrence: recurrence)
    }

    /// `apply(_:recurrence:)` with the firing a live `.fired` handler already built.
    mutating func apply(_ entry: JournalEntry, firing made: SharedFiring?, recurrence prepared: Recurrence?)
        -> AppliedEntry
    {
        switch entry {
        case .scheduled(let reminder, let at):
            if let prepared {
                place(reminder, recurrence: prepared, at: at)
            } else if let built = try? validate(reminder, maximumUserInfoBytes: Int.max) {
                place(reminder, recurrence: built, at: at)
            } else {
                skippedEntries += 1
            }
        case .cancelled(let ids, _):
            for id in ids { removeEntry(id) }
        case .fired(let id, let dueAt, let next, let late, let missed, _):
            guard var entry = entries[id] else { return AppliedEntry() }
            let shared = made ?? SharedFiring(makeFiring(of: entry, dueAt: dueAt, late: late, missed: missed))
            let firingId = shared.firing.firingId
            // An unsettled firing of this very occurrence (recovered, or a repeat) is kept: one
            // hash for the common case, a second only to put the old one back.
            let previous = unsettled.updateValue(shared, forKey: firingId)
            if let previous { unsettled[firingId] = previous }
            if late {
                lateFirings[id, default: 0].saturatingIncrement()
            } else if !lateFirings.isEmpty {
                lateFirings[id] = nil
            }
            advance(&entry, id, to: next, endingAs: .delivered)
            entries[id] = entry
            return AppliedEntry(made: previous == nil ? shared : nil)
        case .skipped(let id, _, let next, _):
            guard var entry = entries[id] else { return AppliedEntry() }
            // A reminder whose last occurrence was skipped ends `finished`, not `delivered`.
            advance(&entry, id, to: next, endingAs: .finished)
            entries[id] = entry
        case .suppressed(let id, _, let next, _, _):
            suppressedCount += 1
            guard var entry = entries[id] else { return AppliedEntry() }
            advance(&entry, id, to: next, endingAs: .suppressed)
            entries[id] = entry
        case .nagFired(let firingId, _):
            nags.remove(firingId)
            if let nag = nagFirings.removeValue(forKey: firingId), unsettled[firingId] == nil {
                let shared = SharedFiring(nag)
                unsettled[firingId] = shared
                return AppliedEntry(made: shared)
            }
        case .leaseExpired(let firingId, _):
            if var firing = unsettled[firingId]?.firing {
                firing.attempt.saturatingIncrement()
                unsettled[firingId] = SharedFiring(firing)
            }
        case .seqReserved(let through):
            eventSeqReserved = max(eventSeqReserved, through)
        case .acknowledged(let firingId, let seq, let worker, let firedAt):
            guard let shared = unsettled.removeValue(forKey: firingId) else { return AppliedEntry() }
            let firing = shared.firing
            if var entry = entries[firing.reminderId] {
                entry.deliveredCount += 1
                entry.lastFiredAt = max(entry.lastFiredAt ?? firedAt, firedAt)
                entries[firing.reminderId] = entry
            }
            armNags(after: firing, deliveredAt: firedAt)
            let update = ledgers[firing.recipient, default: BadgeLedger()].onDelivered(
                firing, at: firedAt, badge: firing.content.badgeChange)
            var event = FireEvent(seq: seq, publisher: worker, firing: firing, firedAt: firedAt)
            event.firing.seq = seq
            eventLog.retain(event)
            return AppliedEntry(badge: update)
        case .deadLettered(let firingId, _):
            if let firing = unsettled.removeValue(forKey: firingId)?.firing {
                deadLetters[firingId] = firing
                deadLetterIndex.insert(DeadLetterKey(firingId))
            }
        case .retried(let firingId, _):
            if var firing = deadLetters.removeValue(forKey: firingId) {
                deadLetterIndex.remove(DeadLetterKey(firingId))
                firing.attempt = 1
                let shared = SharedFiring(firing)
                unsettled[firingId] = shared
                return AppliedEntry(made: shared)
            }
        case .registered(let recipient, let at):
            let zoneChanged = recipients[recipient.id]?.zone != recipient.zone
            recipients[recipient.id] = recipient
            updateCap(of: recipient.id)
            if zoneChanged { followZoneChange(of: recipient.id, at: at) }
        case .badgeSet(let recipient, let value, _):
            return AppliedEntry(badge: ledgers[recipient, default: BadgeLedger()].setBadge(value))
        case .handled(let firingId, _, _):
            cancelNags(of: firingId)
            guard let recipient = recipient(of: firingId) else { return AppliedEntry() }
            return AppliedEntry(badge: ledgers[recipient, default: BadgeLedger()].onHandled(firingId.nagBase))
        case .deliveredRemoved(let recipient, let firingId, _):
            return AppliedEntry(badge: ledgers[recipient, default: BadgeLedger()].removeDelivered(firingId))
        case .switched(let ids, let enabled, let at):
            switchReminders(ids, enabled, at: at)
        case .acted(let job, _):
            accept(job)
        case .actionFinished(let outcome, _):
            // Its effects were decided as entries of their own (a snooze's `.scheduled`).
            jobs[outcome.jobId]?.outcome = outcome
            jobLeases.remove(outcome.jobId)
            waitingJobs.removeAll { $0 == outcome.jobId }
        case .answered(let requestId, let reply, _):
            requestLog.remember(reply, for: requestId)
        case .started(let epoch, _):
            highestRecordedEpoch = max(highestRecordedEpoch, epoch)
        }
        return AppliedEntry()
    }

    /// Moves a reminder on to `next` after one of its occurrences fired, was suppressed or
    /// skipped: arms it there, or ends it (`finished` when repeating, else `endingAs`).
    mutating func advance(_ entry: inout Entry, _ id: ReminderID, to next: Occurrence?, endingAs end: ReminderState) {
        entry.next = next
        if let next {
            if entry.state == .pending { arm(id, of: entry.recipient, at: Self.fireInstant(of: entry, next)) }
        } else {
            if entry.state == .pending { entry.state = entry.isRepeating ? .finished : end }
            disarm(id, of: entry.recipient)
        }
    }

    /// The firing of `entry`'s occurrence due at `dueAt`, with what the recipient's settings
    /// let through (all of it when they let nothing through: the decision was `.fired`).
    func makeFiring(of entry: Entry, dueAt: Date, late: Bool, missed: Int) -> Firing {
        let reminder = entry.reminder
        let trigger = reminder.trigger
        // The coalesced newest of several missed occurrences is not `entry.next`.
        let event = entry.next.flatMap { Self.fireInstant(of: entry, $0) == dueAt ? $0.instant : nil }
            ?? trigger.eventInstant(fireInstant: dueAt)
        return Firing(
            reminderId: reminder.id, recipient: reminder.recipient, dueAt: dueAt,
            content: deliveryPlan(reminder.content, for: reminder.recipient).deliveredContent ?? reminder.content,
            late: late, missed: late ? missed : nil, eventAt: trigger.offset == nil ? nil : event)
    }

    /// Puts a validated reminder into the schedule at `now`, replacing any with the same id.
    ///
    /// A one-shot keeps its only occurrence even when it is past (it fires at once); a
    /// repeating reminder starts at its first occurrence firing at or after `now` (no burst of
    /// past occurrences).
    mutating func place(_ reminder: Reminder, recurrence: Recurrence, at now: Date) {
        removeEntry(reminder.id)
        var next: Occurrence?
        var state = ReminderState.pending
        if !reminder.trigger.isRepeating, let only = recurrence.occurrence(at: 0) {
            next = Occurrence(index: 0, instant: only)
        } else {
            next = firstFiring(of: reminder, in: recurrence, onOrAfter: now)
        }
        if !reminder.enabled {
            state = .disabled
        } else if let next {
            arm(reminder.id, of: reminder.recipient, at: fireInstant(of: reminder, next))
        } else {
            state = .finished
        }
        entries[reminder.id] = Entry(reminder: reminder, next: next, state: state)
        reminderIndex.insert(reminder.id)
        if reminder.trigger.isRepeating { recurrences[reminder.id] = recurrence }
    }

    /// Removes a reminder from the schedule (and its recipient's cap) and returns its entry.
    @discardableResult
    mutating func removeEntry(_ id: ReminderID) -> Entry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        reminderIndex.remove(id)
        recurrences[id] = nil
        if !lateFirings.isEmpty { lateFirings[id] = nil }
        disarm(id, of: entry.recipient)
        return entry
    }
}
