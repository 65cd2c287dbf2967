import ChimeCore
import ChimeStore
import ChimeWire
import Foundation
import ZeroMQ

/// Snapshots and compactions as the shell carries them out: the state decides when one is due
/// and what each answers (`CoordinatorState+Store.swift`); the shell hands a copy of the state
/// to the snapshot thread (`.writeSnapshot`), asks the journal writer to remove segments
/// (`.removeSegments`), and hands their outcomes back as inputs.
extension CoordinatorService {
    /// The store's upkeep after a turn: a snapshot the snapshot thread finished and the
    /// compactions' segment removals the journal writer finished, taken in; then the state's
    /// decision whether a snapshot is due.
    func storeUpkeep() -> [CoordinatorDirective] {
        guard case .file(let fileStore) = store.storage, let snapshotWriter = store.snapshotWriter,
            let journalWriter = store.journalWriter
        else { return [] }
        var directives: [CoordinatorDirective] = []
        if let outcome = snapshotWriter.take() { directives += takeSnapshotOutcome(outcome, in: fileStore) }
        directives += takeSegmentRemovals(from: journalWriter)
        directives += state.onStoreUpkeep(at: clock.now, monotonic: clock.monotonic)
        return directives
    }

    /// Hands a copy of the state, with the journal position it reflects, to the snapshot
    /// thread (`.writeSnapshot`). The loop pauses only for the copy (O(1), copy-on-write).
    func startSnapshot() {
        guard let snapshotWriter = store.snapshotWriter, let journalWriter = store.journalWriter else { return }
        // Every entry the state reflects was submitted in `carryOut`, before this.
        let position = journalWriter.submittedPosition
        let job = SnapshotWriter.Job(state: state, takenAt: clock.now, coveringThrough: position.sequence, ticket: position.ticket)
        let isStarted = snapshotWriter.start(job)
        precondition(isStarted, "the state asked for a snapshot while the snapshot writer was busy")
    }

    /// Takes in a finished snapshot: the store's figures, the log line, and the state's
    /// decisions on the requests that waited for it and the segments it lets go.
    func takeSnapshotOutcome(_ outcome: SnapshotWriter.Outcome, in fileStore: FileStore) -> [CoordinatorDirective] {
        switch outcome.result {
        case .success(let file):
            // A snapshot comes after a burst or an ingest (and once things are quiet): give the
            // pages they left free back (`malloc_trim`), at the end of this turn.
            telemetry.isMemoryTrimDue = true
            fileStore.noteSnapshots(outcome.files)
            publishSnapshotFigures(writtenAt: clock.now)
            // The parts say where the time went, all of it on the snapshot thread: the
            // records built from the state's copy, the JSON part (events, dead letters,
            // recipients), the binary part counted and streamed with the file's fsyncs.
            logger.info("snapshot written", [
                "sequence": .integer(file.sequence), "bytes": .int(outcome.bytes),
                "milliseconds": .rounded(outcome.totalMilliseconds, digits: 1),
                "makeMilliseconds": .rounded(outcome.makeMilliseconds, digits: 1),
                "jsonMilliseconds": .rounded(outcome.jsonMilliseconds, digits: 1),
                "writeMilliseconds": .rounded(outcome.writeMilliseconds, digits: 1),
            ])
            return state.onSnapshotWritten(
                .written(sequence: file.sequence, milliseconds: outcome.totalMilliseconds, segmentRemovalBound: fileStore.segmentRemovalBound),
                monotonic: clock.monotonic)
        case .failure(let error):
            let isNoSpace = (error as? JournalError)?.code == .noSpace
            if isNoSpace {
                logger.warning("snapshot postponed: the store is full", ["error": "\(error)"])
            } else {
                logger.error("snapshot failed", ["error": "\(error)"])
            }
            return state.onSnapshotWritten(.failed(reason: "\(error)", isNoSpace: isNoSpace), monotonic: clock.monotonic)
        }
    }

    /// Asks the journal writer to remove the segments through `sequence` (`.removeSegments`);
    /// a compaction's removal number goes to the state, which waits for it.
    func removeSegments(through sequence: UInt64, isCompaction: Bool) {
        guard let journalWriter = store.journalWriter else { return }
        let removal = journalWriter.removeSegments(through: sequence)
        if isCompaction { state.onSegmentRemovalQueued(removal) }
    }

    /// The compactions whose segments the journal writer has removed, taken in, oldest first.
    func takeSegmentRemovals(from journalWriter: JournalWriter) -> [CoordinatorDirective] {
        var directives: [CoordinatorDirective] = []
        for removal in state.awaitedSegmentRemovals {
            guard let outcome = journalWriter.segmentRemoval(removal) else { break }
            switch outcome {
            case .success(let done):
                logger.info("journal compacted", [
                    "segmentsRemoved": .int(done.removed), "snapshotSequence": .integer(state.oldestCompactionSequence ?? 0),
                    "journalBytes": .integer(done.statistics.journalBytes),
                ])
                let figures = JournalFigures(bytes: done.statistics.journalBytes, segments: done.statistics.segmentCount)
                directives += state.onSegmentsRemoved(removal, result: .removed(figures))
            case .failure(let error):
                logger.error("compaction failed", ["error": "\(error)"])
                directives += state.onSegmentsRemoved(removal, result: .failed(reason: "\(error)"))
            }
        }
        return directives
    }

    /// At shutdown: finishes the snapshot under way (and one that requests wait for), so
    /// their replies go out and the next start reads the newest state; what still waits is
    /// answered `unavailable`.
    func finishSnapshotsAtStop(_ sockets: LoopSockets) {
        guard case .file(let fileStore) = store.storage, let snapshotWriter = store.snapshotWriter,
            let journalWriter = store.journalWriter, !store.hasLostOwnership
        else { return }
        for _ in 0..<2 {
            carryOutAtStop(state.onStoreStopping(), sockets)
            guard let outcome = snapshotWriter.wait() else { break }
            carryOutAtStop(takeSnapshotOutcome(outcome, in: fileStore), sockets)
        }
        if !state.awaitedSegmentRemovals.isEmpty {
            // Its error, if any, is the compaction's answer (`takeSegmentRemovals`).
            try? journalWriter.drain()
            carryOutAtStop(takeSegmentRemovals(from: journalWriter), sockets)
        }
        carryOutAtStop(state.onStoreStopped(), sockets)
    }

    /// Carries out directives at the stop, when a failure only loses replies.
    private func carryOutAtStop(_ directives: [CoordinatorDirective], _ sockets: LoopSockets) {
        do {
            try carryOut(directives, sockets)
        } catch {
            logger.warning("replies not sent at shutdown", ["error": "\(error)"])
        }
    }
}
