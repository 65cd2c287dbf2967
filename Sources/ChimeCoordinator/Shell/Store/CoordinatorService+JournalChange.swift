import ChimeCore
import ChimeStore
import Foundation

extension CoordinatorService {
    /// A coordinator whose journal changed under it (its last segment truncated, replaced or
    /// deleted: `.journalChanged`) stops writing the journal at once, but its state still
    /// holds every entry it acknowledged. So before it lets the store go it writes that state
    /// as a snapshot covering every entry it submitted (`through`), then starts an empty
    /// segment after it: the next start loads the snapshot and reads neither the damaged
    /// segment (it lies behind the snapshot) nor anything lost from it. Nothing acknowledged
    /// is lost; the damage is logged with what was done.
    func keepStateAfterJournalChange(_ fileStore: FileStore, through sequence: UInt64) {
        let started = ContinuousClock.now
        do {
            let durable = state.durable
            let header = durable.snapshotHeader(takenAt: clock.now)
            var counter = ByteCounter()
            durable.encodeSnapshot(header: header, into: &counter)
            let file = try fileStore.snapshots.write(
                payloadLength: counter.count, coveringThrough: sequence, beforeRename: { try fileStore.lock.verifyOwnership() }
            ) { sink in
                durable.encodeSnapshot(header: header, into: &sink)
            }
            try FileJournal.startSegment(in: fileStore.journal.directory, at: sequence + 1)
            let elapsed = ContinuousClock.now - started
            logger.error(
                "the journal changed under this coordinator: wrote its whole state as a snapshot and started a new segment after it, so nothing acknowledged is lost; stopping",
                ["snapshotSequence": .integer(file.sequence), "newSegment": .integer(sequence + 1), "bytes": .int(counter.count),
                 "milliseconds": .integer(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)])
        } catch {
            logger.error(
                "the journal changed under this coordinator and its state could not be written as a snapshot; a start will find the damage ('chime store verify' names what is lost)",
                ["error": "\(error)"])
        }
    }
}
