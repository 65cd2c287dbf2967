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

    /// Starts a snapshot on the snapshot thread when one is due, and takes in a finished one.
    ///
    /// Due: when `snapshot`/`compact` requests wait for one, or once `snapshotEveryRecords`
    /// entries (and at least half as many as there are reminders, so snapshots cost O(1)
    /// amortized per entry however large the schedule) were journaled since the last one.
    /// The loop pauses only to hand over a copy of the state (O(1), copy-on-write); the
    /// snapshot still takes a core, so an automatic one waits until nothing has been due,
    /// waiting or in flight for a second (the events of a burst are still on their way to
    /// subscribers when its last firing is acknowledged), unless the journal has grown 4×
    /// past the threshold.
    func snapshotIfDue(control: Socket) {
        guard case .file(let store) = storage, snapshotWriter != nil else { return }
        if snapshotInFlight != nil, let outcome = snapshotWriter?.take() {
            finishSnapshot(outcome, in: store, control: control)
        }
        if isSnapshotAdoptionPending && !isStoreFull { adoptSnapshots(of: store) }
        let monotonic = clock.monotonic
        if state.isQuiet(at: clock.now) {
            quietSince = quietSince ?? monotonic
        } else {
            quietSince = nil
        }
        guard snapshotInFlight == nil else { return }
        if !snapshotRequests.isEmpty {
            beginSnapshot(of: store)
            return
        }
        let threshold = max(configuration.store.snapshotEveryRecords, state.reminderCount / 2)
        guard recordsSinceSnapshot >= threshold, monotonic >= snapshotRetryAt ?? -.infinity else { return }
        // No snapshot while the store is full: it could not be written, and it needs a
        // drained (idle) journal writer, which a full store does not have.
        guard !isStoreFull else { return }
        if quietSince.map({ monotonic - $0 >= 1 }) ?? false || recordsSinceSnapshot >= 4 * threshold {
            beginSnapshot(of: store)
        }
    }

    /// Hands a copy of the state, covering every entry journaled so far, to the snapshot
    /// thread, with the waiting `snapshot`/`compact` requests.
    func beginSnapshot(of store: FileStore) {
        guard let snapshotWriter, snapshotInFlight == nil else { return }
        do {
            // The state reflects every entry submitted; once they are written the journal's
            // last sequence number is the one the copy covers.
            try journalWriter?.drain()
        } catch {
            // A full store (or a failed journal, which stops the loop): nothing to cover yet.
            return
        }
        let job = SnapshotWriter.Job(state: state, takenAt: clock.now, coveringThrough: store.journal.lastSequence)
        guard snapshotWriter.start(job) else { return }
        snapshotInFlight = SnapshotInFlight(records: recordsSinceSnapshot, requests: snapshotRequests)
        snapshotRequests.removeAll()
        recordsSinceSnapshot = 0
    }

    /// Takes in a finished snapshot: adopts the file (retention, journal segments), logs it,
    /// and answers the requests that waited for it.
    func finishSnapshot(_ outcome: SnapshotWriter.Outcome, in store: FileStore, control: Socket) {
        guard let inFlight = snapshotInFlight else { return }
        snapshotInFlight = nil
        let reply: (ControlRequest) -> Data
        switch outcome.result {
        case .success(let file):
            snapshotRetryAt = nil
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
            let isCompacting = inFlight.requests.contains { $0.0.operation == .compact }
            var compactError: (any Error)?
            if !adoptSnapshots(of: store) {
                if isCompacting {
                    compactError = JournalError(.noSpace, path: store.directory.path, message: "the journal could not be compacted: the store is full")
                }
            } else if isCompacting {
                do {
                    let removed = try store.journal.removeSegments(through: file.sequence)
                    logger.info("journal compacted", [
                        "segmentsRemoved": .int(removed), "snapshotSequence": .integer(file.sequence),
                        "journalBytes": .integer(store.statistics.journalBytes),
                    ])
                } catch {
                    compactError = error
                }
            }
            let report = storeReport(snapshotMilliseconds: outcome.totalMilliseconds)
            reply = { request in
                if request.operation == .compact, let compactError {
                    return self.codec.encode(ControlReply<EmptyResult>(
                        requestId: request.requestId, error: WireError(.internal, "compact failed: \(compactError)")))
                }
                return self.codec.encode(ControlReply(requestId: request.requestId, result: report))
            }
        case .failure(let error):
            recordsSinceSnapshot += inFlight.records
            snapshotRetryAt = clock.monotonic + Self.snapshotRetryInterval
            if let error = error as? JournalError, error.code == .noSpace {
                logger.warning("snapshot postponed: the store is full", ["error": "\(error)"])
            } else {
                logger.error("snapshot failed", ["error": "\(error)"])
            }
            reply = { request in
                self.codec.encode(ControlReply<EmptyResult>(
                    requestId: request.requestId, error: WireError(.internal, "snapshot failed: \(error)")))
            }
        }
        for (request, client) in inFlight.requests { sendReply(reply(request), to: client, on: control) }
    }

    /// Applies the store's retention to the snapshots written (and the journal segments they
    /// cover), once the journal writer is idle; returns whether it could (a full store
    /// postpones it to a later turn).
    @discardableResult
    func adoptSnapshots(of store: FileStore) -> Bool {
        do {
            try journalWriter?.drain()
            try store.adoptSnapshot()
            isSnapshotAdoptionPending = false
            publishSnapshotFigures()
            return true
        } catch let error as JournalError where error.code == .noSpace {
            isSnapshotAdoptionPending = true
            return false
        } catch {
            isSnapshotAdoptionPending = false
            logger.error("snapshot retention failed", ["error": "\(error)"])
            return false
        }
    }

    /// At shutdown: finishes the snapshot under way (and one that requests wait for), so
    /// their replies go out and the next start reads the newest state.
    func finishSnapshotsAtStop(control: Socket) {
        guard case .file(let store) = storage, let snapshotWriter, !hasLostOwnership else { return }
        for _ in 0..<2 {
            if snapshotInFlight == nil && !snapshotRequests.isEmpty { beginSnapshot(of: store) }
            guard snapshotInFlight != nil, let outcome = snapshotWriter.wait() else { break }
            finishSnapshot(outcome, in: store, control: control)
        }
        for (request, client) in snapshotRequests {
            let error = WireError(.unavailable, "the coordinator is stopping: no snapshot was written")
            sendReply(codec.encode(ControlReply<EmptyResult>(requestId: request.requestId, error: error)), to: client, on: control)
        }
        snapshotRequests.removeAll()
    }
}
