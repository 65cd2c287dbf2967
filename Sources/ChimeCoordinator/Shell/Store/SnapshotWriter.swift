import ChimeCore
import ChimeStore
import Foundation
import HelperThreads
import ZeroMQ

/// Writes the coordinator's snapshots on a thread of its own, so the loop never pauses for
/// one: the loop hands over a copy of its state (`CoordinatorState` is a value of
/// copy-on-write collections, so the copy is O(1) and the loop's next changes copy only the
/// collections they touch) with the journal position it covers (`JournalWriter.submittedPosition`:
/// the loop does not wait for the journal either); this thread builds the records, encodes
/// them, streams them to `snapshot/` (writeback started chunk by chunk, fsync), waits until
/// the journal has every entry the copy reflects on disk (a snapshot must never cover an entry
/// the journal could lose), renames the file into place, fsyncs the directory, applies the
/// store's retention to the snapshot files, and wakes the loop through `signalEndpoint`
/// (inproc PUSH → the loop's PULL, as `JournalWriter` does). The loop then asks the journal
/// writer to remove the segments the oldest kept snapshot covers: only that thread touches
/// the journal.
///
/// At most one snapshot is under way. The thread runs at a lower scheduling priority
/// (nice +10): on a busy machine the loop's turns win the core and the snapshot waits.
///
/// Before it writes, and again before it renames the finished file into place, the thread
/// checks that the store's `LOCK` still names the file this coordinator locked, so a
/// coordinator that lost the store (SIGSTOP, then a takeover) adds nothing to it.
///
/// Thread safety: the snapshot thread is a `BackgroundQueue`; `start`, `take`, `wait` and
/// `isBusy` are the loop's (one caller thread).
final class SnapshotWriter: @unchecked Sendable {
    /// What the loop hands over.
    struct Job: Sendable {
        /// The state as of `coveringThrough`.
        var state: CoordinatorState
        /// The wall-clock instant the snapshot is taken at (`CoordinatorSnapshot.takenAt`).
        var takenAt: Date
        /// The journal sequence number the state reflects every entry through.
        var coveringThrough: UInt64
        /// The journal writer's ticket of that entry: the file is renamed into place only once
        /// it is durable.
        var ticket: UInt64
    }

    /// How a snapshot went.
    struct Outcome: Sendable {
        /// The file written, or the error that stopped it.
        var result: Result<SnapshotStore.File, any Error>
        /// The snapshot files kept after retention, oldest first (empty when it failed).
        var files: [SnapshotStore.File] = []
        /// The payload's size in bytes (0 when it failed before counting).
        var bytes: Int
        /// Milliseconds spent building the records from the state copy.
        var makeMilliseconds: Double
        /// Milliseconds spent on the payload's JSON part.
        var jsonMilliseconds: Double
        /// Milliseconds spent counting, streaming and syncing the file.
        var writeMilliseconds: Double
        /// From the hand-over to the renamed file, in milliseconds.
        var totalMilliseconds: Double { makeMilliseconds + jsonMilliseconds + writeMilliseconds }
    }

    /// The snapshot thread.
    private let jobs: BackgroundQueue<Job, Outcome>
    /// The number of the snapshot under way or finished and not yet taken (the loop's only).
    private var current: UInt64?

    /// Starts the snapshot thread.
    /// - Parameters:
    ///   - store: the store; only its `snapshot/` directory and its lock are touched here.
    ///   - journalWriter: the store's journal writer, waited on before a rename.
    ///   - context: the ZeroMQ context the loop's PULL socket lives in.
    ///   - signalEndpoint: the inproc endpoint the loop has bound a PULL socket to.
    /// - Throws: `ZeroMQError` when the signal socket cannot be made or connected.
    init(store: FileStore, journalWriter: JournalWriter, context: Context, signalEndpoint: String) throws {
        let (snapshots, lock, retainedSnapshots) = (store.snapshots, store.lock, store.retainedSnapshots)
        jobs = try BackgroundQueue(name: "chime-snapshot", context: context, signalEndpoint: signalEndpoint, priority: .lowered) {
            job in
            Self.write(job, snapshots: snapshots, lock: lock, retainedSnapshots: retainedSnapshots, journalWriter: journalWriter)
        }
    }

    /// Whether a snapshot is under way or finished and not yet taken.
    var isBusy: Bool { current != nil }

    /// Starts writing a snapshot of `job`; `false` (nothing started) while another is busy.
    func start(_ job: Job) -> Bool {
        guard current == nil else { return false }
        current = jobs.submit(job)
        return true
    }

    /// The finished snapshot's outcome (taken: the writer is free again), else `nil`.
    func take() -> Outcome? {
        guard let current, let outcome = jobs.take(current) else { return nil }
        self.current = nil
        return outcome
    }

    /// Waits until the snapshot under way (if any) has finished, then takes its outcome.
    func wait() -> Outcome? {
        guard let current else { return nil }
        self.current = nil
        return jobs.wait(for: current)
    }

    /// Finishes the snapshot under way, then stops the thread and waits for it.
    func stop() { jobs.stop() }

    /// Builds, encodes and writes the snapshot of `job` (streamed in chunks: the payload is
    /// never held whole).
    private static func write(
        _ job: Job, snapshots: SnapshotStore, lock: StoreLock, retainedSnapshots: Int, journalWriter: JournalWriter
    ) -> Outcome {
        let started = ContinuousClock.now
        func milliseconds(since instant: ContinuousClock.Instant) -> Double {
            let elapsed = ContinuousClock.now - instant
            return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        }
        var outcome = Outcome(result: .failure(CancellationError()), bytes: 0, makeMilliseconds: 0, jsonMilliseconds: 0, writeMilliseconds: 0)
        do {
            try lock.verifyOwnership()
            let durable = job.state.durable
            outcome.makeMilliseconds = milliseconds(since: started)
            let json = durable.snapshotHeader(takenAt: job.takenAt)
            outcome.jsonMilliseconds = milliseconds(since: started) - outcome.makeMilliseconds
            var counter = ByteCounter()
            durable.encodeSnapshot(header: json, into: &counter)
            outcome.bytes = counter.count
            let file = try snapshots.write(
                payloadLength: counter.count, coveringThrough: job.coveringThrough,
                beforeRename: {
                    try journalWriter.waitUntilDurable(ticket: job.ticket)
                    try lock.verifyOwnership()
                }
            ) { sink in
                durable.encodeSnapshot(header: json, into: &sink)
            }
            outcome.result = .success(file)
            // Retention deletes files: only while the store is still this coordinator's (a
            // stop between the rename and here must not let it delete a successor's).
            try lock.verifyOwnership()
            outcome.files = try snapshots.retainNewest(retainedSnapshots)
        } catch {
            outcome.result = .failure(error)
        }
        outcome.writeMilliseconds = milliseconds(since: started) - outcome.makeMilliseconds - outcome.jsonMilliseconds
        return outcome
    }
}
