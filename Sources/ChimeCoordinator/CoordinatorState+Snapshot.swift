import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

extension CoordinatorState {
    /// Ends recovery at `now`: firings made but not acknowledged wait for redelivery with
    /// their firing ids and attempt numbers, event seqs resume after the reserved block, and
    /// occurrences due before `now` count as misfires.
    ///
    /// Dispatch does not wait for the journal, so a firing handed out just before a crash may
    /// have no durable `fired` entry: its occurrence is then a misfire like any other due
    /// while the coordinator was down (fired late, same firing id, under `fireOnce`).
    public mutating func finishRecovery(at now: Date) {
        recoveredAt = now
        nextEventSeq = max(nextEventSeq, eventSeqReserved.saturatingAdding(1))
        let line = unsettled.values.filter { inFlight[$0.firing.firingId] == nil }
            .sorted { ($0.firing.dueAt, $0.firing.firingId) < ($1.firing.dueAt, $1.firing.firingId) }
        waiting.append(contentsOf: line)
    }
    /// The durable state, for a snapshot taken between loop turns at `now`.
    public func makeSnapshot(at now: Date = Date()) -> CoordinatorSnapshot {
        let unsettled = unsettled.values.map(\.firing).sorted { ($0.dueAt, $0.firingId) < ($1.dueAt, $1.firingId) }
        var reminders: [CoordinatorSnapshot.ReminderRecord] = []
        reminders.reserveCapacity(entries.count)
        // In id order (the paging index's), so a load rebuilds that index from sorted keys in
        // one linear pass instead of sorting a million ids (seconds of a restart).
        for id in reminderIndex {
            guard let entry = entries[id] else { continue }
            reminders.append(CoordinatorSnapshot.ReminderRecord(
                reminderBytes: entry.bytes, id: id, nextIndex: entry.next?.index, nextFireAt: entry.next?.instant,
                armedAt: schedule.deadline(of: id) ?? armedAt(of: id, entry), state: entry.state,
                deliveredCount: entry.deliveredCount, lastFiredAt: entry.lastFiredAt))
        }
        return CoordinatorSnapshot(
            reminders: reminders, unsettled: unsettled,
            deadLetters: deadLetters.values.sorted { $0.firingId < $1.firingId }, nextEventSeq: eventSeqReserved.saturatingAdding(1),
            events: Array(eventLog.events),
            recipients: recipients.values.sorted { $0.id < $1.id },
            ledgers: Dictionary(uniqueKeysWithValues: ledgers.map { ($0.key.rawValue, $0.value) }),
            pendingJobs: jobs.values.filter { $0.outcome == nil }.map(\.job).sorted { $0.jobId < $1.jobId },
            pendingNags: nagFirings.values.sorted { ($0.dueAt, $0.firingId) < ($1.dueAt, $1.firingId) },
            lateFirings: Dictionary(uniqueKeysWithValues: lateFirings.map { ($0.key.rawValue, $0.value) }),
            answered: requestLog.entries.map { AnsweredRequest(requestId: $0.requestId, reply: $0.reply) },
            takenAt: now, epoch: highestRecordedEpoch)
    }

    /// The fire instant of a pending reminder that is not in `schedule` (held back by its
    /// recipient's cap), computed from the reminder.
    func armedAt(of id: ReminderID, _ entry: Entry) -> Date? {
        guard entry.state == .pending, let next = entry.next else { return nil }
        return fireInstant(of: entry.reminder, next)
    }

    /// Loads a snapshot into an empty state; journal entries after it are then `apply`ed.
    /// - Throws: `WireError(.invalidArgument)` for a snapshot of a newer format version.
    public mutating func load(_ snapshot: CoordinatorSnapshot) throws(WireError) {
        guard snapshot.formatVersion <= CoordinatorSnapshot.currentFormatVersion else {
            throw WireError(
                .invalidArgument,
                "snapshot format \(snapshot.formatVersion) is newer than this coordinator's \(CoordinatorSnapshot.currentFormatVersion)")
        }
        // Recipients first: their zones resolve recipient-zone reminders and their
        // `maxPending` caps decide what is armed.
        for recipient in snapshot.recipients { recipients[recipient.id] = recipient }
        for (id, ledger) in snapshot.ledgers { ledgers[RecipientID(id)] = ledger }
        entries.reserveCapacity(snapshot.reminders.count)
        // Reminders of recipients without a cap are armed in one bulk build of the heap.
        var uncapped: [(key: ReminderID, deadline: Date)] = []
        uncapped.reserveCapacity(snapshot.reminders.count)
        var loadedIDs: [ReminderID] = []
        loadedIDs.reserveCapacity(snapshot.reminders.count)
        for record in snapshot.reminders {
            let next = zip(record.nextIndex, record.nextFireAt).map { Occurrence(index: $0, instant: $1) }
            guard let entry = try? Entry(
                bytes: record.reminderBytes, next: next, state: record.state, deliveredCount: record.deliveredCount,
                lastFiredAt: record.lastFiredAt)
            else {
                skippedEntries += 1
                continue
            }
            var armedAt = record.armedAt
            // Repeating reminders need their sequence (which also re-checks the zone); a
            // one-shot with its fire instant recorded is taken as it is, undecoded.
            if armedAt == nil || entry.isRepeating {
                let reminder = entry.reminder
                guard let recurrence = try? validate(reminder, maximumUserInfoBytes: Int.max) else {
                    skippedEntries += 1
                    continue
                }
                if reminder.trigger.isRepeating { recurrences[record.id] = recurrence }
                armedAt = armedAt ?? next.map { fireInstant(of: reminder, $0) }
            }
            entries[record.id] = entry
            loadedIDs.append(record.id)
            if record.state == .pending, let armedAt {
                if pendingLimit(for: entry.recipient) == nil {
                    uncapped.append((record.id, armedAt))
                } else {
                    arm(record.id, of: entry.recipient, at: armedAt)
                }
            }
        }
        schedule.schedule(contentsOf: uncapped)
        // Sorted already when the snapshot was written in id order: the sort is then one run.
        reminderIndex = SortedKeySet(loadedIDs)
        for var firing in snapshot.unsettled {
            firing.seq = nil
            unsettled[firing.firingId] = SharedFiring(firing)
        }
        for firing in snapshot.deadLetters { deadLetters[firing.firingId] = firing }
        deadLetterIndex = SortedKeySet(deadLetters.keys.map(DeadLetterKey.init))
        eventSeqReserved = max(eventSeqReserved, snapshot.nextEventSeq - min(snapshot.nextEventSeq, 1))
        for (id, count) in snapshot.lateFirings { lateFirings[ReminderID(id)] = count }
        for job in snapshot.pendingJobs { accept(job) }
        for answer in snapshot.answered { requestLog.remember(answer.reply, for: answer.requestId) }
        for nag in snapshot.pendingNags {
            nagFirings[nag.firingId] = nag
            nags.schedule(nag.firingId, at: nag.dueAt)
        }
        for event in snapshot.events { eventLog.retain(event) }
        highestRecordedEpoch = max(highestRecordedEpoch, snapshot.epoch ?? 0)
    }
}

private func zip<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
