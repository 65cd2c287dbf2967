import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// Snapshots of format 3 (marker byte 2), written before the durable state was one value:
/// read into a `DurableState` so a store written by an earlier version opens as it was.
/// Their jobs restart at attempt 1 and their finished jobs were not kept; their badge event
/// seq starts again at 0; their settings were not recorded (`seed` stands for them).
extension DurableState {
    static func decodeLegacySnapshot(_ payload: Data, seed: DurableSettings) throws(WireError) -> DecodedSnapshot {
        let snapshot = try CoordinatorSnapshot.decode(payload: payload)
        guard snapshot.formatVersion <= CoordinatorSnapshot.currentFormatVersion else {
            throw WireError(
                .invalidArgument,
                "snapshot format \(snapshot.formatVersion) is newer than this coordinator's \(CoordinatorSnapshot.currentFormatVersion)")
        }
        var state = DurableState(settings: seed)
        state.highestRecordedEpoch = snapshot.epoch ?? 0
        // Delivered lists name firings by their legacy ids: each takes its ledger's recipient.
        var ledgers: [String: BadgeLedger] = [:]
        for (recipient, ledger) in snapshot.ledgers {
            ledgers[recipient] = BadgeLedger(
                badge: ledger.badge,
                delivered: ledger.delivered.map { delivered in
                    var delivered = delivered
                    if delivered.firingId.isLegacy { delivered.firingId = delivered.firingId.resolved(to: RecipientID(recipient)) }
                    return delivered
                }, deliveredLimit: ledger.deliveredLimit)
        }
        state.recipients = Recipients(Recipients.Record(recipients: snapshot.recipients, ledgers: ledgers, badgeEventSeq: 0))
        state.deliveries = try Deliveries(
            Deliveries.Record(
                unsettled: snapshot.unsettled, deadLetters: snapshot.deadLetters, nags: snapshot.pendingNags,
                events: snapshot.events, eventSeqReserved: snapshot.nextEventSeq - min(snapshot.nextEventSeq, 1)),
            eventRetention: seed.eventRetention)
        state.actionJobs = ActionJobs(unfinished: snapshot.pendingJobs.map { ActionJobs.Record(job: $0) }, finished: [])
        let skipped = try state.restore(snapshot.reminders.map { record in
            RestoredReminder(
                id: ReminderKey(legacy: record.id), bytes: record.reminderBytes,
                next: record.nextIndex.flatMap { index in record.nextFireAt.map { Occurrence(index: index, instant: $0) } },
                state: record.state, deliveredCount: record.deliveredCount, lastFiredAt: record.lastFiredAt)
        })
        for (id, count) in snapshot.lateFirings {
            if let key = state.resolve(ReminderKey(legacy: ReminderID(id))) { state.schedule.lateFirings[key] = count }
        }
        for answer in snapshot.answered { state.requestLog.remember(answer.reply, for: answer.requestId) }
        return DecodedSnapshot(state: state, takenAt: snapshot.takenAt, skippedReminders: skipped)
    }
}
