import ChimeJournal
import ChimeStore
import Foundation
import HelperThreads
import ZeroMQ

/// Writes and fsyncs the coordinator's journal on a thread of its own, so the coordinator's
/// loop never waits for the disk: while one batch is being fsynced the loop keeps firing,
/// and everything submitted meanwhile goes to disk with the next fsync (group commit across
/// loop turns).
///
/// The loop `submit`s each turn's entries and gets a ticket; replies that depend on them wait
/// until `durableTicket()` reaches it. After each write (and fsync, per the store's policy)
/// the writer sends an empty message to `signalEndpoint` (inproc PUSH → the loop's PULL,
/// ZeroMQ Guide ch. 2, "Signaling Between Threads"), which wakes the loop's poll.
///
/// **Writing on the caller's thread.** A hand-off to the writer thread and the signal back
/// cost two thread wake-ups, which dominate a lone request's round trip. So when the writer
/// is idle (nothing queued, nothing being written or fsynced, the disk not full), a small
/// submission (`GroupCommit.maxInlineEntries`) is written by the caller itself: under `interval` and
/// `never` with one `write` (the `fdatasync` stays with the writer thread, which the loop
/// asks for once `interval` has passed — `requestFsyncIfDue()`), under `always` with `write` and
/// `fdatasync`, only when the caller says it can spare that long (`InlineAllowance`). The
/// ticket is then durable when `submit` returns. Who uses the store is decided under the
/// writer's lock (`GroupCommit.isWriting`), so the store has one writer at a time and
/// entries reach it in submission order.
///
/// **A full disk is a mode** (`isStoreFull`): when a write finds no space, the journal keeps
/// every record it had buffered (`FileJournal.sync` undoes the partial write), the writer
/// keeps them and everything submitted after them, in order, and calls `sync` again every
/// `noSpaceRetryInterval` until one succeeds; then the mode ends by itself. No entry the loop
/// submitted is dropped or reordered while the process lives; `durableTicket` simply does not
/// move. Only a stop while the disk is still full gives up on them (as a crash would).
///
/// Before each write, at most every `ownershipCheckInterval`, the writer checks that the
/// store's `LOCK` still names the file it locked, and before every write that the store's
/// lease has not lapsed, so after a stall (SIGSTOP) it does not write into a store another
/// coordinator took over before the loop has looked.
///
/// It also removes the journal segments a snapshot covers (`removeSegments(through:)`), so
/// the snapshot thread and the loop never touch the journal for that.
///
/// The decisions — when to write and fsync, which tickets are durable, when the loop may
/// write inline, how a full disk is retried — are ``GroupCommit``'s, a value with its own
/// tests; this class is its shell: one lock, one thread, the store, the signal socket.
///
/// Thread safety: `FileStore` is touched only by whoever `GroupCommit` let write (the
/// writer thread or, inline, the caller), and by the caller while the writer is idle after
/// `drain()` (snapshots, store reports): the writer thread acts only on what the caller
/// asked under the lock (a submission, an fsync, a removal) and on no-space retries, which
/// `drain()` refuses to return through.
final class JournalWriter: @unchecked Sendable {
    /// How long the writer waits between attempts while the disk is full.
    static let noSpaceRetryInterval = GroupCommit.noSpaceRetryInterval
    /// The most time between two ownership checks before a write, in seconds.
    static let ownershipCheckInterval = 0.1
    /// Under `always`, the slowest recent `fdatasync` (seconds) for which the caller still
    /// fsyncs inline; a slower disk leaves every fsync to the writer thread.
    static let maxInlineFsyncSeconds = 0.005

    /// How long the caller can spare for writing inline under `always`.
    typealias InlineAllowance = GroupCommit.InlineAllowance

    private let store: FileStore
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var commit: GroupCommit
    /// Guarded by `condition`: the journal's figures after the newest write or segment
    /// removal, for readers on other threads (the journal belongs to whoever writes).
    private var published: JournalStatistics
    /// Guarded by `condition`: the newest removal done and how it went.
    private var removalsDone: UInt64 = 0
    private var removalOutcome: Result<SegmentRemoval, any Error> = .success(SegmentRemoval(removed: 0, statistics: JournalStatistics()))
    // Used only by whoever `commit` let write.
    private var lastOwnershipCheck = ContinuousClock.now
    private var reported: JournalStatistics
    private let thread = HelperThread(name: "chime-journal")
    /// Told the fsync durations and journal size after each write; `nil` tells nobody.
    private let probe: CoordinatorProbe?

    /// What a segment removal did.
    struct SegmentRemoval: Sendable {
        /// How many segment files were removed.
        var removed: Int
        /// The journal's figures just after (sizes, segment count).
        var statistics: JournalStatistics
    }

    /// What the loop reads once a turn.
    struct Status {
        /// The newest ticket whose entries are durable.
        var durableTicket: UInt64
        /// Whether the last write found the disk full (entries are kept and retried).
        var isStoreFull: Bool
    }

    /// Starts the writer thread.
    /// - Parameters:
    ///   - store: the open store; only the writer appends to it from now on.
    ///   - context: the ZeroMQ context the loop's PULL socket lives in.
    ///   - signalEndpoint: the inproc endpoint the loop has bound a PULL socket to.
    ///   - unwrittenEntries: entries the store already holds buffered because its last
    ///     `sync` found no space (a start on a full store); the writer retries them first.
    ///   - probe: told each fsync's duration and the journal's size after each write.
    ///   - maxInlineFsyncSeconds: the slowest recent `fdatasync` for which a caller with time to
    ///     spare still fsyncs inline (`maxInlineFsyncSeconds` by default; tests raise it so a
    ///     loaded machine's slow disk does not change what they check).
    /// - Throws: `ZeroMQError` when the signal socket cannot be made or connected.
    ///   - maxInlineWriteSeconds: the slowest recent `write` for which the caller still writes
    ///     inline (`GroupCommit.defaultInlineWriteLimit`; tests raise it likewise).
    init(
        store: FileStore, context: Context, signalEndpoint: String, unwrittenEntries: Int = 0, probe: CoordinatorProbe? = nil,
        maxInlineFsyncSeconds: Double = JournalWriter.maxInlineFsyncSeconds,
        maxInlineWriteSeconds: Double = GroupCommit.defaultInlineWriteLimit
    ) throws {
        self.store = store
        self.probe = probe
        reported = store.journal.statistics
        published = reported
        commit = GroupCommit(
            policy: store.journal.fsyncPolicy, lastSequence: store.journal.lastSequence, inlineFsyncLimit: maxInlineFsyncSeconds,
            inlineWriteLimit: maxInlineWriteSeconds, unwrittenEntries: unwrittenEntries,
            noSpace: JournalError(.noSpace, path: store.journal.directory.path, message: "the store was full at start"),
            now: .now)
        try thread.startSignaling(context: context, signalEndpoint: signalEndpoint) { [self] signal in run(signal: signal) }
    }

    /// Queues entries for the writer thread, or writes them on the caller's thread when the
    /// writer is idle (see the type's doc); returns the ticket that `durableTicket()` reaches
    /// once they are written (and fsynced under `always`) — at once when written inline.
    /// A failed inline write is reported as the writer thread's would be, by `status()`.
    /// - Parameter allowance: how long the caller can spare for an inline `fdatasync`
    ///   (`always` only); `.none` leaves every fsync to the writer thread.
    func submit(_ entries: [JournalEntry], allowance: InlineAllowance = .none) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        switch commit.submit(entries, allowance: allowance) {
        case .queued(let ticket):
            condition.signal()
            return ticket
        case .inline(let ticket, let fsync):
            // The lock stays held: the writer thread is idle and the caller is the one who
            // would otherwise take it, so no one waits on it during the write.
            let outcome = write([entries], fsync: fsync)
            if commit.finishInlineWrite(outcome, count: entries.count, ticket: ticket, now: .now) { condition.broadcast() }
            if case .written = outcome { published = reported }
            return ticket
        }
    }

    /// The newest ticket submitted (what a reply must wait for to follow every earlier entry).
    var lastSubmitted: UInt64 { locked { $0.submitted } }

    /// The newest ticket submitted and the journal sequence number of its last entry: a copy
    /// of the state taken now reflects every entry through that sequence number, which is
    /// on disk once `waitUntilDurable(ticket:)` returns.
    var submittedPosition: (ticket: UInt64, sequence: UInt64) { locked { ($0.submitted, $0.submittedSequence) } }

    /// Waits until the entries of `ticket` (and every earlier one) are durable.
    /// - Throws: the error a write or fsync failed with; `JournalError.noSpace` while the
    ///   disk is full and they are not written yet.
    func waitUntilDurable(ticket: UInt64) throws {
        condition.lock()
        defer { condition.unlock() }
        while !commit.isSettled(ticket: ticket) { condition.wait() }
        if let failure = commit.failure { throw failure }
        if commit.durable < ticket, let noSpace = commit.noSpace { throw noSpace }
    }

    /// Asks the writer thread to remove the journal segments whose entries are all at or
    /// below `sequence` (`FileJournal.removeSegments(through:)`), after checking the store's
    /// `LOCK`; returns the number `segmentRemoval(_:)` reports it by.
    func removeSegments(through sequence: UInt64) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        let number = commit.requestRemoval(through: sequence)
        condition.signal()
        return number
    }

    /// How removal `number` went, once it is done; `nil` before. A later removal done first
    /// answers for it too.
    func segmentRemoval(_ number: UInt64) -> Result<SegmentRemoval, any Error>? {
        condition.lock()
        defer { condition.unlock() }
        return removalsDone >= number ? removalOutcome : nil
    }

    /// The journal's figures after the newest write or segment removal (sizes, segment count,
    /// fsync latency), safe to read from any thread.
    var statistics: JournalStatistics {
        condition.lock()
        defer { condition.unlock() }
        return published
    }

    /// How many submissions were written on the caller's thread since start.
    var inlineWriteCount: Int { locked { $0.inlineWrites } }

    /// How many submitted entries are not durable yet.
    var undurableCount: Int { locked { $0.undurable } }

    /// The newest ticket whose entries are durable.
    /// - Throws: the error a write or fsync failed with; the journal takes nothing more then.
    func durableTicket() throws -> UInt64 { try status().durableTicket }

    /// The durable ticket and whether the disk is full, under one lock.
    /// - Throws: the error a write or fsync failed with (never `.noSpace`, which is a mode).
    func status() throws -> Status {
        condition.lock()
        defer { condition.unlock() }
        if let failure = commit.failure { throw failure }
        return Status(durableTicket: commit.durable, isStoreFull: commit.noSpace != nil)
    }

    /// Under `interval`: asks the writer thread for the `fdatasync` of written records once
    /// they have waited `interval` and the writer is idle. The loop calls it once a turn (at
    /// least every 100 ms), never between a `drain()` and its own use of the store.
    func requestFsyncIfDue() {
        guard case .interval = commit.policy else { return }
        condition.lock()
        defer { condition.unlock() }
        if commit.requestFsyncIfDue(now: .now) { condition.signal() }
    }

    /// Waits until everything submitted is durable and the writer is idle (no write or
    /// requested fsync under way), so the caller may use the store until its next call.
    /// - Throws: the error a write or fsync failed with; `JournalError.noSpace` at once
    ///   while the disk is full (what is submitted stays queued and is retried).
    func drain() throws {
        condition.lock()
        defer { condition.unlock() }
        while !commit.isDrained { condition.wait() }
        if let failure = commit.failure { throw failure }
        if let noSpace = commit.noSpace, commit.undurable > 0 { throw noSpace }
    }

    /// Writes what is queued, then stops the thread and waits for it. While the disk is full
    /// it tries once more and then gives up on what it could not write (lost as in a crash:
    /// no reply waited on it was sent).
    func stop() {
        condition.lock()
        commit.stop()
        condition.broadcast()
        condition.unlock()
        thread.join()
    }

    /// Drops what is queued, lets a write under way finish, then stops the thread and waits
    /// for it: for a coordinator that lost the store, whose entries must not reach it.
    func abandon() {
        condition.lock()
        commit.abandon()
        condition.broadcast()
        condition.unlock()
        thread.join()
    }

    private func locked<Value>(_ read: (GroupCommit) -> Value) -> Value {
        condition.lock()
        defer { condition.unlock() }
        return read(commit)
    }

    /// The writer thread: carries out `GroupCommit.nextStep` until it says to end.
    private func run(signal: Socket) {
        while true {
            condition.lock()
            var step = commit.nextStep(now: .now)
            while case .wait(let deadline) = step {
                if let deadline {
                    let seconds = Self.seconds(deadline - .now)
                    _ = condition.wait(until: Date(timeIntervalSinceNow: max(0, seconds)))
                } else {
                    condition.wait()
                }
                step = commit.nextStep(now: .now)
            }
            guard case .write(let batch) = step else {
                condition.unlock()
                return
            }
            condition.unlock()
            if let removal = batch.removal { removeSegments(removal.through, number: removal.number, signal: signal) }
            // With nothing queued this is a retry or an `interval` fsync: `sync` still fsyncs.
            let outcome = write(batch.submissions, fsync: true)
            condition.lock()
            let aftermath = commit.finishBatch(outcome, batch: batch, now: .now)
            if case .written = outcome { published = reported }
            condition.broadcast()
            condition.unlock()
            // A full signal queue already holds a wake-up for the loop.
            if aftermath.signalsLoop { _ = try? signal.send(Data(), dontWait: true) }
            if aftermath.exits { return }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// Removes the segments through `sequence` (old segments only: the tail and what is
    /// buffered never go, so this is safe while the disk is full, and frees space), after an
    /// ownership check; records the outcome as removal `number`. Called only by the writer.
    private func removeSegments(_ sequence: UInt64, number: UInt64, signal: Socket) {
        let outcome = Result {
            try store.lock.verifyOwnership()
            lastOwnershipCheck = ContinuousClock.now
            return SegmentRemoval(removed: try store.journal.removeSegments(through: sequence), statistics: store.journal.statistics)
        }
        if case .success(let done) = outcome { probe?.updateStore { $0.journalBytes = done.statistics.journalBytes } }
        condition.lock()
        if case .success(let done) = outcome { published = done.statistics }
        removalsDone = number
        removalOutcome = outcome
        condition.broadcast()
        condition.unlock()
        _ = try? signal.send(Data(), dontWait: true)
    }

    /// Appends `batch`, one journal append per submission (so a submission's entries share a
    /// segment), and writes it (`fsync`: with `sync`, which fsyncs per the policy; else
    /// `write`). Called only by the writer, without needing the lock.
    private func write(_ batch: [[JournalEntry]], fsync: Bool) -> GroupCommit.WriteOutcome {
        do {
            let now = ContinuousClock.now
            if now - lastOwnershipCheck >= .seconds(Self.ownershipCheckInterval) {
                try store.lock.verifyOwnership()
                try store.journal.verifyTailUnchanged()
                lastOwnershipCheck = now
            } else {
                // Every write: a writer that was stopped past its lease writes nothing more.
                try store.lock.verifyLease(at: now)
            }
            // One append per submission: its entries share a journal segment.
            for submission in batch where !submission.isEmpty { try store.append(submission) }
        } catch {
            return .failed(error)
        }
        // The write(2) calls alone: encoding is CPU, what the loop must not wait on is the disk.
        let started = ContinuousClock.now
        do {
            if fsync { try store.sync() } else { try store.write() }
        } catch let error as JournalError where error.code == .noSpace {
            // Entries appended are the journal's now: it keeps them buffered, in order, and a
            // later `sync` writes them.
            return .noSpace(error)
        } catch {
            return .failed(error)
        }
        let statistics = store.journal.statistics
        let fsyncSeconds = statistics.totalFsyncSeconds - reported.totalFsyncSeconds
        let writeSeconds = max(0, Self.seconds(ContinuousClock.now - started) - fsyncSeconds)
        if let probe { report(statistics, to: probe, since: reported, writeSeconds: batch.isEmpty ? nil : writeSeconds) }
        reported = statistics
        return .written(
            fsyncSeconds: statistics.lastFsyncLatency, hasUnsyncedWrites: store.journal.hasUnsyncedWrites,
            writeSeconds: writeSeconds)
    }
}

extension JournalWriter {
    /// Tells `probe` the fsyncs between `previous` and `current` (the last one's duration; the
    /// mean when one write made several), the write's own duration (`writeSeconds`, fsyncs
    /// left out; `nil` for an fsync alone) and the journal's size.
    private func report(
        _ current: JournalStatistics, to probe: CoordinatorProbe, since previous: JournalStatistics, writeSeconds: Double?
    ) {
        let fsyncs = current.fsyncCount - previous.fsyncCount
        probe.updateStore { figures in
            if let writeSeconds { figures.writeDuration.observe(writeSeconds) }
            if fsyncs == 1, let latency = current.lastFsyncLatency {
                figures.fsyncDuration.observe(latency)
            } else if fsyncs > 1 {
                figures.fsyncDuration.observe((current.totalFsyncSeconds - previous.totalFsyncSeconds) / Double(fsyncs), times: fsyncs)
            }
            figures.journalBytes = current.journalBytes
        }
    }
}

