import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// What folding one journal entry changed that a live caller acts on.
public struct AppliedEntry: Sendable, Equatable {
    /// The badge update of `.acknowledged`, `.badgeSet`, `.handled` and `.deliveredRemoved`
    /// (published when it changed the number).
    public var badge: BadgeUpdate? { numberedBadge?.update }
    /// The badge update with the `seq` of the event that announces it.
    public var numberedBadge: NumberedBadgeUpdate?
    /// The firing `.fired`, `.nagFired`, `.retried` or `.attention(.released)` made unsettled:
    /// it waits for a worker.
    let made: SharedFiring?
    /// Whether the entry no longer validates (a zone removed from tzdata) and was skipped.
    public var wasSkipped = false
    /// Unsettled firings made ahead of their due instant that the entry (a cancel, switch-off
    /// or replace before they were due) took back: a worker holding one must drop it.
    var revoked: [FiringID] = []
    /// The firings a `.trigger` entry made unsettled (trigger now, backfill): they wait for a
    /// worker.
    var triggered: [SharedFiring] = []

    /// The id of the firing the entry made unsettled, if any.
    public var madeFiring: FiringID? { made?.firing.firingId }

    init(
        badge: NumberedBadgeUpdate? = nil, made: SharedFiring? = nil, wasSkipped: Bool = false, revoked: [FiringID] = []
    ) {
        numberedBadge = badge
        self.made = made
        self.wasSkipped = wasSkipped
        self.revoked = revoked
    }
}

/// Values a live caller already derived from the same state before it recorded an entry:
/// passing them changes nothing but speed (a replay derives them here).
struct ApplyHints {
    /// The reminder of a `.fired` entry, already decoded.
    var reminder: Reminder?
    /// A `.scheduled` reminder's occurrences, already validated.
    var recurrence: Recurrence?
}

extension DurableState {
    /// Folds one journal entry into the state, exactly as the live coordinator did when it
    /// decided the entry; recovery calls it for every entry after the snapshot. The only
    /// function that changes a `DurableState`.
    ///
    /// An entry that no longer validates (a zone removed from tzdata) is skipped
    /// (`wasSkipped`); an entry naming something already gone changes nothing.
    /// - Returns: what the entry changed that a live caller acts on (a badge update to
    ///   publish, a firing to put in the waiting line).
    @discardableResult
    mutating func apply(_ entry: JournalEntry, hints: ApplyHints = ApplyHints()) -> AppliedEntry {
        // Entries of earlier versions name reminders and firings without their recipient.
        let entry = entry.hasLegacyIdentities ? resolvingLegacyIdentities(entry) : entry
        switch entry {
        case .scheduled(let reminder, let at):
            guard let recurrence = hints.recurrence ?? (try? validate(reminder, maximumUserInfoBytes: Int.max)) else {
                return AppliedEntry(wasSkipped: true)
            }
            // A replaced reminder's firing made ahead of its due instant goes (the new one may
            // make it again, with the new content).
            let revoked = deliveries.takeBackAhead(of: reminder.key, before: at)
            triggers.forget(reminder.key)
            place(reminder, recurrence: recurrence, at: at)
            if schedule.entries[reminder.key]?.usesTriggerState ?? false { trackBeyondTheClock(reminder) }
            if !revoked.isEmpty { return AppliedEntry(revoked: revoked) }
        case .cancelled(let ids, let at):
            var revoked: [FiringID] = []
            for id in ids {
                schedule.remove(id)
                triggers.forget(id)
                deliveries.dropHeld(of: id)
                revoked += deliveries.takeBackAhead(of: id, before: at)
            }
            if !revoked.isEmpty { return AppliedEntry(revoked: revoked) }
        case .fired(let id, let dueAt, let next, let late, let missed, let at):
            guard var entry = schedule.entries[id] else { return AppliedEntry() }
            let reminder = hints.reminder ?? entry.reminder
            let shared = SharedFiring(makeFiring(of: entry, reminder: reminder, dueAt: dueAt, late: late, missed: missed))
            let firingId = shared.firing.firingId
            // An unsettled firing of this very occurrence (recovered, or a repeat) is kept: one
            // hash for the common case, a second only to put the old one back.
            let previous = deliveries.unsettled.updateValue(shared, forKey: firingId)
            if let previous { deliveries.unsettled[firingId] = previous }
            if late {
                schedule.lateFirings[id, default: 0].saturatingIncrement()
            } else if !schedule.lateFirings.isEmpty {
                schedule.lateFirings[id] = nil
            }
            if previous == nil && dueAt > at { deliveries.ahead[id, default: []].append(firingId) }
            // Levels that break through neither wait for the throttle nor count toward it.
            if !recipients.throttleSlots.isEmpty && !shared.firing.content.interruptionLevel.breaksThroughQuietHours {
                recipients.noteDelivery(of: id.recipient, content: shared.firing.content, at: max(dueAt, at), now: at)
            }
            countOccurrence(of: id)
            advance(&entry, id, to: next, endingAs: .delivered)
            schedule.entries[id] = entry
            return AppliedEntry(made: previous == nil ? shared : nil)
        case .skipped(let id, _, let next, _):
            guard var entry = schedule.entries[id] else { return AppliedEntry() }
            // A reminder whose last occurrence was skipped ends `finished`, not `delivered`.
            countOccurrence(of: id)
            advance(&entry, id, to: next, endingAs: .finished)
            schedule.entries[id] = entry
        case .suppressed(let id, _, let next, _, _):
            guard var entry = schedule.entries[id] else { return AppliedEntry() }
            countOccurrence(of: id)
            advance(&entry, id, to: next, endingAs: .suppressed)
            schedule.entries[id] = entry
        case .nagFired(let firingId, _):
            deliveries.nags.remove(firingId)
            if let nag = deliveries.nagFirings.removeValue(forKey: firingId), deliveries.unsettled[firingId] == nil {
                let shared = SharedFiring(nag)
                deliveries.unsettled[firingId] = shared
                return AppliedEntry(made: shared)
            }
        case .leaseExpired(let firingId, _):
            if var firing = deliveries.unsettled[firingId]?.firing {
                firing.attempt.saturatingIncrement()
                deliveries.unsettled[firingId] = SharedFiring(firing)
            }
        case .seqReserved(let through):
            deliveries.eventSeqReserved = max(deliveries.eventSeqReserved, through)
        case .acknowledged(let firingId, let seq, let worker, let firedAt):
            return acknowledge(firingId, seq: seq, worker: worker, firedAt: firedAt)
        case .deadLettered(let firingId, _):
            if let firing = deliveries.unsettled.removeValue(forKey: firingId)?.firing {
                deliveries.forgetAhead(firingId)
                deliveries.deadLetters[firingId] = firing
                deliveries.deadLetterIndex.insert(DeadLetterKey(firingId))
                moveOneShot(of: firing, from: .delivered, to: .undelivered)
            }
        case .deliveryFailed(let firingId, let failure, _):
            if let firing = deliveries.unsettled.removeValue(forKey: firingId)?.firing {
                deliveries.forgetAhead(firingId)
                deliveries.deadLetters[firingId] = firing
                deliveries.deadLetterFailures[firingId] = failure
                deliveries.deadLetterIndex.insert(DeadLetterKey(firingId))
                deliveries.noteRetrySkips(of: firingId, from: failure)
                moveOneShot(of: firing, from: .delivered, to: .undelivered)
            }
        case .retried(let firingId, _):
            deliveries.deadLetterFailures[firingId] = nil
            if var firing = deliveries.deadLetters.removeValue(forKey: firingId) {
                deliveries.deadLetterIndex.remove(DeadLetterKey(firingId))
                moveOneShot(of: firing, from: .undelivered, to: .delivered)
                firing.attempt = 1
                let shared = SharedFiring(firing)
                deliveries.unsettled[firingId] = shared
                return AppliedEntry(made: shared)
            }
        case .deadLetterDeleted(let firingId, _):
            deliveries.deadLetterFailures[firingId] = nil
            deliveries.retrySkips[firingId] = nil
            if deliveries.deadLetters.removeValue(forKey: firingId) != nil {
                deliveries.deadLetterIndex.remove(DeadLetterKey(firingId))
            }
        case .registered(let recipient, let at):
            let previous = recipients.registered[recipient.id]
            let zoneChanged = previous?.zone != recipient.zone
            recipients.store(recipient)
            if zoneChanged || previous?.quietHours != recipient.quietHours || previous?.breakThrough != recipient.breakThrough
                || previous?.summaryTimes != recipient.summaryTimes
            {
                retimeHolds(of: recipient.id, at: at)
            }
            if recipient.throttle == nil {
                recipients.throttleSlots[recipient.id] = nil
            } else if recipients.throttleSlots[recipient.id] == nil || previous?.throttle?.per != recipient.throttle?.per {
                // Another scope's allowances mean nothing to this one: it starts afresh.
                recipients.throttleSlots[recipient.id] = [:]
            }
            schedule.updateCap(of: recipient.id, limit: pendingLimit(for: recipient.id))
            if zoneChanged {
                followZoneChange(of: recipient.id, at: at)
                replanCalendarUsers(of: recipient.id, at: at)
            }
        case .badgeSet(let recipient, let value, _):
            return AppliedEntry(badge: recipients.changeLedger(of: recipient) { $0.setBadge(value) })
        case .handled(let firingId, _, _):
            deliveries.cancelNags(of: firingId)
            guard let recipient = recipient(of: firingId) else { return AppliedEntry() }
            return AppliedEntry(badge: recipients.changeLedger(of: recipient) { $0.onHandled(firingId.nagBase) })
        case .deliveredRemoved(let recipient, let firingId, _):
            return AppliedEntry(badge: recipients.changeLedger(of: recipient) { $0.removeDelivered(firingId) })
        case .switched(let ids, let enabled, let at):
            switchReminders(ids, enabled, at: at)
            if !enabled {
                let revoked = ids.flatMap { deliveries.takeBackAhead(of: $0, before: at) }
                if !revoked.isEmpty { return AppliedEntry(revoked: revoked) }
            }
        case .acted(let job, _):
            actionJobs.accept(job)
        case .actionFinished(let outcome, _):
            // Its effects were decided as entries of their own (a snooze's `.scheduled`).
            actionJobs.finish(outcome, retention: settings.finishedJobRetention)
        case .jobLeaseExpired(let jobId, _):
            actionJobs.leaseExpired(jobId)
        case .answered(let requestId, let reply, _, let recipient):
            requestLog.remember(reply, for: requestId, recipient: recipient)
        case .started(let epoch, _, let recorded):
            highestRecordedEpoch = max(highestRecordedEpoch, epoch)
            if let recorded, recorded != settings { adopt(recorded) }
        case .slotMove(let step):
            applySlotMove(step)
        case .trigger(let fact):
            var applied = AppliedEntry()
            applied.triggered = applyTrigger(fact)
            return applied
        case .attention(let fact):
            return AppliedEntry(made: applyAttention(fact))
        }
        return AppliedEntry()
    }

    /// The fold of `.acknowledged`: the firing is settled, its reminder counts a delivery,
    /// its nags are armed, its recipient's badge and delivered list follow, and the event is
    /// kept for catch-up.
    private mutating func acknowledge(_ firingId: FiringID, seq: UInt64, worker: WorkerID, firedAt: Date) -> AppliedEntry {
        guard let shared = deliveries.unsettled.removeValue(forKey: firingId) else { return AppliedEntry() }
        deliveries.forgetAhead(firingId)
        if !deliveries.retrySkips.isEmpty { deliveries.retrySkips[firingId] = nil }
        let firing = shared.firing
        let key = ReminderKey(firing.reminderId, of: firing.recipient)
        if var entry = schedule.entries[key] {
            entry.deliveredCount += 1
            entry.lastFiredAt = max(entry.lastFiredAt ?? firedAt, firedAt)
            schedule.entries[key] = entry
            if !firing.firingId.isNag, entry.hasNag, let policy = entry.reminder.nag {
                deliveries.armNags(after: firing, deliveredAt: firedAt, policy: policy)
            }
        }
        let update = recipients.changeLedger(of: firing.recipient) {
            $0.onDelivered(firing, at: firedAt, badge: firing.content.badgeChange)
        }
        var event = FireEvent(seq: seq, publisher: worker, firing: firing, firedAt: firedAt)
        event.firing.seq = seq
        deliveries.eventLog.retain(event)
        return AppliedEntry(badge: update)
    }

    /// Moves the one-shot `firing` belongs to from `old` to `new` (a dead letter made or
    /// retried); a nag, a repeating reminder or a one-shot replaced since keeps its state.
    private mutating func moveOneShot(of firing: Firing, from old: ReminderState, to new: ReminderState) {
        guard !firing.firingId.isNag else { return }
        let key = ReminderKey(firing.reminderId, of: firing.recipient)
        guard var entry = schedule.entries[key], !entry.isRepeating, entry.state == old else { return }
        entry.state = new
        schedule.entries[key] = entry
    }

    /// Takes on settings recorded by a `started` entry: caps, the event log's and the request
    /// log's bounds and the finished-job retention follow at once.
    private mutating func adopt(_ new: DurableSettings) {
        let old = settings
        settings = new
        if old.maxPendingPerRecipient != new.maxPendingPerRecipient {
            var affected = Set(schedule.caps.keys)
            for entry in schedule.entries.values where entry.state == .pending { affected.insert(entry.recipient) }
            for recipient in affected.sorted() where recipients.registered[recipient]?.maxPending == nil {
                schedule.updateCap(of: recipient, limit: pendingLimit(for: recipient))
            }
        }
        if old.eventRetention != new.eventRetention {
            var log = EventLog(capacity: new.eventRetention)
            for event in deliveries.eventLog.events { log.retain(event) }
            deliveries.eventLog = log
        }
        if Self.makeRequestLog(old) != Self.makeRequestLog(new) {
            var log = Self.makeRequestLog(new)
            for (requestId, reply) in requestLog.entries { log.remember(reply, for: requestId) }
            requestLog = log
        }
        if old.finishedJobRetention != new.finishedJobRetention { actionJobs.trim(to: new.finishedJobRetention) }
    }
}

extension Deliveries {
    /// Adds the destinations `failure` delivered (or removed as gone) to the firing's
    /// ``retrySkips``.
    mutating func noteRetrySkips(of firingId: FiringID, from failure: DeliveryFailure) {
        let done = failure.outcomes.filter { $0.outcome == .delivered || $0.outcome == .removed }.map(\.destination)
        guard !done.isEmpty else { return }
        retrySkips[firingId] = Set(retrySkips[firingId, default: []]).union(done).sorted()
    }
}
