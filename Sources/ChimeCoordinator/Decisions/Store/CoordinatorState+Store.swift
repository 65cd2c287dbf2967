import ChimeWire
import Foundation

/// The store's upkeep, decided here and carried out by the service: when a snapshot is due,
/// which requests each snapshot and segment removal answers, and how the store-full mode
/// shows in `status`.
///
/// A snapshot is due when `snapshot`/`compact` requests wait for one, or once
/// `snapshotEveryRecords` entries (and at least half as many as there are reminders, so
/// snapshots cost O(1) amortized per entry however large the schedule) were journaled since
/// the last one. The loop pauses only to hand over a copy of the state (O(1), copy-on-write)
/// and never waits for the journal; the snapshot still takes a core and the disk, so an
/// automatic one waits until nothing has been due, waiting or in flight for a second (the
/// events of a burst are still on their way to subscribers when its last firing is
/// acknowledged), unless the journal has grown 4× past the threshold (8× while a burst is
/// backlogged, ``forcedSnapshotFactor``); and none starts while
/// the store is full (it could not be written), or within `StoreUpkeep.retryInterval` of one
/// that failed.
extension CoordinatorState {
    /// The store is open: a file store (snapshots, compactions) or memory only, with the
    /// entries journaled since the newest snapshot (those a restart replayed), which count
    /// toward the next one so a coordinator that keeps restarting still snapshots.
    public mutating func onStoreOpened(isFileStore: Bool, entriesSinceSnapshot: Int) {
        upkeep.isFileStore = isFileStore
        upkeep.recordsSinceSnapshot = entriesSinceSnapshot
    }

    /// The journal writer entered (`true`) or left the store-full mode: while full, changes
    /// and store operations are refused `store_full` and reads answered at once
    /// (``admitWhileStoreFull(_:from:at:monotonic:)``), and no automatic snapshot starts.
    public mutating func onStoreMode(isFull: Bool) { upkeep.isFull = isFull }

    /// Whether the store is in the store-full mode.
    public var isStoreFull: Bool { upkeep.isFull }

    /// A `snapshot` or `compact` request the service served with a file store (its entries
    /// durable, the disk not full): it waits for the next snapshot to start.
    public mutating func onSnapshotAwaited(_ request: ControlRequest, from client: ClientAddress) {
        upkeep.waiting.append((request, client))
    }

    /// The store's decisions after a turn was carried out: a snapshot when one is due
    /// (see the extension's doc), with `now` for the quiet check and `monotonic` seconds for
    /// the quiet second and the retry.
    /// - Returns: `.writeSnapshot`, or nothing.
    public mutating func onStoreUpkeep(at now: Date, monotonic: Double) -> [CoordinatorDirective] {
        guard upkeep.isFileStore else { return [] }
        if isQuiet(at: now) {
            upkeep.quietSince = upkeep.quietSince ?? monotonic
        } else {
            upkeep.quietSince = nil
        }
        guard upkeep.inFlight == nil else { return [] }
        if !upkeep.waiting.isEmpty { return beginSnapshot() }
        let threshold = max(configuration.snapshotEveryRecords, reminderCount / 2)
        guard upkeep.recordsSinceSnapshot >= threshold, monotonic >= upkeep.retryAt ?? -.infinity else { return [] }
        guard !upkeep.isFull else { return [] }
        let hasBeenQuiet = upkeep.quietSince.map { monotonic - $0 >= 1 } ?? false
        return hasBeenQuiet || upkeep.recordsSinceSnapshot >= forcedSnapshotFactor * threshold ? beginSnapshot() : []
    }

    /// How many times past its threshold the journal may grow before a snapshot starts without
    /// a quiet second: 4, or 8 while a burst outruns the workers' credit (a schedule backlog,
    /// or firings taken from it still waiting for credit), so the snapshot's core goes to the
    /// burst (issue 43: a forced snapshot ran in the last 2 s of every W1 1,000,000) and still
    /// comes by 8 × the threshold if the backlog never ends.
    var forcedSnapshotFactor: Int { dispatch.isScheduleBacklogged || waitingCount > 0 ? 8 : 4 }

    /// The coordinator is stopping: a snapshot for the requests waiting for one, if none is
    /// under way and the disk is not full (their replies then go out before the stop).
    public mutating func onStoreStopping() -> [CoordinatorDirective] {
        guard upkeep.isFileStore, upkeep.inFlight == nil, !upkeep.waiting.isEmpty, !upkeep.isFull else { return [] }
        return beginSnapshot()
    }

    /// The coordinator stopped serving the store: every request still waiting for a snapshot
    /// or a removal is answered `unavailable`.
    public mutating func onStoreStopped() -> [CoordinatorDirective] {
        let waiting = upkeep.waiting + upkeep.compactions.flatMap(\.requests)
        upkeep.waiting.removeAll()
        upkeep.compactions.removeAll()
        let error = WireError(.unavailable, "the coordinator is stopping: no snapshot was written")
        return waiting.map { .replyAtOnce(ControlOutcome.failed(error).encodedReply(requestId: $0.request.requestId), to: $0.client) }
    }

    /// A snapshot of this state is to be written now, answering the waiting requests.
    private mutating func beginSnapshot() -> [CoordinatorDirective] {
        upkeep.inFlight = StoreUpkeep.SnapshotInFlight(records: upkeep.recordsSinceSnapshot, requests: upkeep.waiting)
        upkeep.waiting.removeAll()
        upkeep.recordsSinceSnapshot = 0
        return [.writeSnapshot]
    }

    /// The snapshot under way ended: its `snapshot` requests are answered with the store's
    /// figures, its `compact` requests wait for their segments to go (a removal the journal
    /// writer makes); without a compaction, the segments older than the oldest kept snapshot
    /// go. A failure answers every request `internal` and retries an automatic snapshot after
    /// `StoreUpkeep.retryInterval` (`monotonic` seconds).
    public mutating func onSnapshotWritten(_ result: SnapshotResult, monotonic: Double) -> [CoordinatorDirective] {
        guard let inFlight = upkeep.inFlight else { return [] }
        upkeep.inFlight = nil
        switch result {
        case .written(let sequence, let milliseconds, let bound):
            upkeep.retryAt = nil
            var directives: [CoordinatorDirective] = []
            let compactions = inFlight.requests.filter { $0.request.operation == .compact }
            if !compactions.isEmpty {
                upkeep.compactions.append(StoreUpkeep.Compaction(
                    removal: nil, sequence: sequence, snapshotMilliseconds: milliseconds, requests: compactions))
                directives.append(.removeSegments(through: sequence, isCompaction: true))
            } else if let bound {
                directives.append(.removeSegments(through: bound, isCompaction: false))
            }
            for (request, client) in inFlight.requests where request.operation != .compact {
                directives.append(.reportStore(requestId: request.requestId, to: client, snapshotMilliseconds: milliseconds, journal: nil))
            }
            return directives
        case .failed(let reason, _):
            upkeep.recordsSinceSnapshot += inFlight.records
            upkeep.retryAt = monotonic + StoreUpkeep.retryInterval
            let error = WireError(.internal, "snapshot failed: \(reason)")
            return inFlight.requests.map {
                .replyAtOnce(ControlOutcome.failed(error).encodedReply(requestId: $0.request.requestId), to: $0.client)
            }
        }
    }

    /// The journal writer took the oldest compaction's removal as number `removal`.
    public mutating func onSegmentRemovalQueued(_ removal: UInt64) {
        guard let index = upkeep.compactions.firstIndex(where: { $0.removal == nil }) else { return }
        upkeep.compactions[index].removal = removal
    }

    /// The journal writer's numbers of the removals compactions wait for, oldest first.
    public var awaitedSegmentRemovals: [UInt64] { upkeep.awaitedRemovals }

    /// The sequence number of the snapshot the oldest waiting compaction covers.
    public var oldestCompactionSequence: UInt64? { upkeep.compactions.first?.sequence }

    /// Removal `removal` ended: its compaction's requests are answered with the journal's
    /// figures after it, or `internal` when it failed.
    public mutating func onSegmentsRemoved(_ removal: UInt64, result: SegmentRemovalResult) -> [CoordinatorDirective] {
        guard let compaction = upkeep.compactions.first, compaction.removal == removal else { return [] }
        upkeep.compactions.removeFirst()
        return compaction.requests.map { request, client in
            switch result {
            case .removed(let journal):
                .reportStore(
                    requestId: request.requestId, to: client, snapshotMilliseconds: compaction.snapshotMilliseconds, journal: journal)
            case .failed(let reason):
                .replyAtOnce(
                    ControlOutcome.failed(WireError(.internal, "compact failed: \(reason)")).encodedReply(requestId: request.requestId),
                    to: client)
            }
        }
    }
}
