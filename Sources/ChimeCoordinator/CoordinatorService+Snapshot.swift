import ChimeCore
import ChimeStore
import ChimeWire
import Foundation
import ZeroMQ

extension CoordinatorService {
    /// What the loop knows of the snapshot its `SnapshotWriter` is writing.
    struct SnapshotInFlight {
        /// The entries journaled since the previous snapshot that this one covers (counted
        /// again if it fails, so the next attempt comes as soon as it would have).
        var records: Int
        /// The `snapshot` and `compact` requests answered once it is written.
        var requests: [(ControlRequest, ClientAddress)]
    }

    /// How long after a failed automatic snapshot the next one may start, in seconds.
    static let snapshotRetryInterval = 10.0

    /// `compact` requests whose snapshot is written, waiting for the journal writer to remove
    /// the segments it covers.
    struct PendingCompaction {
        /// The journal writer's number of the removal (`JournalWriter.segmentRemoval(_:)`).
        var removal: UInt64
        /// The snapshot's sequence number.
        var sequence: UInt64
        /// How long the snapshot took, in milliseconds.
        var snapshotMilliseconds: Double
        var requests: [(ControlRequest, ClientAddress)]
    }

    /// Starts a snapshot on the snapshot thread when one is due, takes in a finished one, and
    /// answers the compactions whose segments are removed.
    ///
    /// Due: when `snapshot`/`compact` requests wait for one, or once `snapshotEveryRecords`
    /// entries (and at least half as many as there are reminders, so snapshots cost O(1)
    /// amortized per entry however large the schedule) were journaled since the last one.
    /// The loop pauses only to hand over a copy of the state (O(1), copy-on-write; the
    /// collections its next turns change are copied then) and never waits for the journal;
    /// the snapshot still takes a core and the disk, so an automatic one waits until nothing
    /// has been due, waiting or in flight for a second (the events of a burst are still on
    /// their way to subscribers when its last firing is acknowledged), unless the journal has
    /// grown 4× past the threshold.
    func snapshotIfDue(control: Socket) {
        guard case .file(let store) = storage, let snapshotWriter, let journalWriter else { return }
        if snapshotInFlight != nil, let outcome = snapshotWriter.take() {
            finishSnapshot(outcome, in: store, journalWriter: journalWriter, control: control)
        }
        answerCompactions(in: store, journalWriter: journalWriter, control: control)
        let monotonic = clock.monotonic
        if state.isQuiet(at: clock.now) {
            quietSince = quietSince ?? monotonic
        } else {
            quietSince = nil
        }
        guard snapshotInFlight == nil else { return }
        if !snapshotRequests.isEmpty {
            beginSnapshot()
            return
        }
        let threshold = max(configuration.store.snapshotEveryRecords, state.reminderCount / 2)
        guard recordsSinceSnapshot >= threshold, monotonic >= snapshotRetryAt ?? -.infinity else { return }
        // No snapshot while the store is full: it could not be written.
        guard !isStoreFull else { return }
        if quietSince.map({ monotonic - $0 >= 1 }) ?? false || recordsSinceSnapshot >= 4 * threshold {
            beginSnapshot()
        }
    }

    /// Hands a copy of the state, with the journal position it reflects, to the snapshot
    /// thread, with the waiting `snapshot`/`compact` requests.
    func beginSnapshot() {
        guard let snapshotWriter, let journalWriter, snapshotInFlight == nil else { return }
        // Every entry the state reflects was submitted in `carryOut`, before this.
        let position = journalWriter.submittedPosition
        let job = SnapshotWriter.Job(
            state: state, takenAt: clock.now, coveringThrough: position.sequence, ticket: position.ticket)
        guard snapshotWriter.start(job) else { return }
        snapshotInFlight = SnapshotInFlight(records: recordsSinceSnapshot, requests: snapshotRequests)
        snapshotRequests.removeAll()
        recordsSinceSnapshot = 0
    }

    /// Takes in a finished snapshot: the store's figures, the journal segments it lets go
    /// (removed by the journal writer), the log line, and the requests that waited for it.
    func finishSnapshot(_ outcome: SnapshotWriter.Outcome, in store: FileStore, journalWriter: JournalWriter, control: Socket) {
        guard let inFlight = snapshotInFlight else { return }
        snapshotInFlight = nil
        switch outcome.result {
        case .success(let file):
            snapshotRetryAt = nil
            // A snapshot comes after a burst or an ingest (and once things are quiet): give the
            // pages they left free back (`malloc_trim`), at the end of this turn.
            isMemoryTrimDue = true
            store.noteSnapshots(outcome.files)
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
            let compactions = inFlight.requests.filter { $0.0.operation == .compact }
            if !compactions.isEmpty {
                pendingCompactions.append(PendingCompaction(
                    removal: journalWriter.removeSegments(through: file.sequence), sequence: file.sequence,
                    snapshotMilliseconds: outcome.totalMilliseconds, requests: compactions))
            } else if let bound = store.segmentRemovalBound {
                _ = journalWriter.removeSegments(through: bound)
            }
            let body = { (request: ControlRequest) in
                self.codec.encode(ControlReply(
                    requestId: request.requestId, result: self.storeReport(snapshotMilliseconds: outcome.totalMilliseconds)))
            }
            for (request, client) in inFlight.requests where request.operation != .compact {
                sendReply(body(request), to: client, on: control)
            }
        case .failure(let error):
            recordsSinceSnapshot += inFlight.records
            snapshotRetryAt = clock.monotonic + Self.snapshotRetryInterval
            if let error = error as? JournalError, error.code == .noSpace {
                logger.warning("snapshot postponed: the store is full", ["error": "\(error)"])
            } else {
                logger.error("snapshot failed", ["error": "\(error)"])
            }
            for (request, client) in inFlight.requests {
                let reply = ControlReply<EmptyResult>(
                    requestId: request.requestId, error: WireError(.internal, "snapshot failed: \(error)"))
                sendReply(codec.encode(reply), to: client, on: control)
            }
        }
    }

    /// Answers the `compact` requests whose journal segments the writer has removed.
    func answerCompactions(in store: FileStore, journalWriter: JournalWriter, control: Socket) {
        while let compaction = pendingCompactions.first, let result = journalWriter.segmentRemoval(compaction.removal) {
            pendingCompactions.removeFirst()
            for (request, client) in compaction.requests {
                let body: Data
                switch result {
                case .success(let removal):
                    logger.info("journal compacted", [
                        "segmentsRemoved": .int(removal.removed), "snapshotSequence": .integer(compaction.sequence),
                        "journalBytes": .integer(removal.statistics.journalBytes),
                    ])
                    // The journal's figures as the writer left them (the loop does not read the
                    // journal while that thread may write).
                    var report = storeReport(snapshotMilliseconds: compaction.snapshotMilliseconds)
                    report.journalBytes = removal.statistics.journalBytes
                    report.segments = removal.statistics.segmentCount
                    body = codec.encode(ControlReply(requestId: request.requestId, result: report))
                case .failure(let error):
                    logger.error("compaction failed", ["error": "\(error)"])
                    body = codec.encode(ControlReply<EmptyResult>(
                        requestId: request.requestId, error: WireError(.internal, "compact failed: \(error)")))
                }
                sendReply(body, to: client, on: control)
            }
        }
    }

    /// At shutdown: finishes the snapshot under way (and one that requests wait for), so
    /// their replies go out and the next start reads the newest state.
    func finishSnapshotsAtStop(control: Socket) {
        guard case .file(let store) = storage, let snapshotWriter, let journalWriter, !hasLostOwnership else { return }
        for _ in 0..<2 {
            if snapshotInFlight == nil && !snapshotRequests.isEmpty && !isStoreFull { beginSnapshot() }
            guard snapshotInFlight != nil, let outcome = snapshotWriter.wait() else { break }
            finishSnapshot(outcome, in: store, journalWriter: journalWriter, control: control)
        }
        if !pendingCompactions.isEmpty {
            try? journalWriter.drain()
            answerCompactions(in: store, journalWriter: journalWriter, control: control)
        }
        for (request, client) in snapshotRequests + pendingCompactions.flatMap(\.requests) {
            let error = WireError(.unavailable, "the coordinator is stopping: no snapshot was written")
            sendReply(codec.encode(ControlReply<EmptyResult>(requestId: request.requestId, error: error)), to: client, on: control)
        }
        snapshotRequests.removeAll()
        pendingCompactions.removeAll()
    }
}
