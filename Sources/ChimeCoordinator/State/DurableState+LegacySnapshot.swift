import ChimeCore
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
        state.recipients = Recipients(Recipients.Record(recipients: snapshot.recipients, ledgers: snapshot.ledgers, badgeEventSeq: 0))
        state.deliveries = try Deliveries(
            Deliveries.Record(
                unsettled: snapshot.unsettled, deadLetters: snapshot.deadLetters, nags: snapshot.pendingNags,
                events: snapshot.events, eventSeqReserved: snapshot.nextEventSeq - min(snapshot.nextEventSeq, 1)),
            eventRetention: seed.eventRetention)
        state.actionJobs = ActionJobs(unfinished: snapshot.pendingJobs.map { ActionJobs.Record(job: $0) }, finished: [])
        let skipped = try state.restore(snapshot.reminders.map { record in
            RestoredReminder(
                id: record.id, bytes: record.reminderBytes,
                next: record.nextIndex.flatMap { index in record.nextFireAt.map { Occurrence(index: index, instant: $0) } },
                state: record.state, deliveredCount: record.deliveredCount, lastFiredAt: record.lastFiredAt)
        })
        for (id, count) in snapshot.lateFirings where state.schedule.entries[ReminderID(id)] != nil {
            state.schedule.lateFirings[ReminderID(id)] = count
        }
        for answer in snapshot.answered { state.requestLog.remember(answer.reply, for: answer.requestId) }
        return DecodedSnapshot(state: state, takenAt: snapshot.takenAt, skippedReminders: skipped)
    }
}
