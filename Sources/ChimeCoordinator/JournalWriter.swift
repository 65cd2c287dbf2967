import ChimeStore
import Foundation
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
/// submission (`maxInlineEntries`) is written by the caller itself: under `interval` and
/// `never` with one `write` (the `fdatasync` stays with the writer thread, which the loop
/// asks for once `interval` has passed — `requestFsyncIfDue()`), under `always` with `write` and
/// `fdatasync`, only when the caller says it can spare that long (`InlineAllowance`). The
/// ticket is then durable when `submit` returns. Who uses the store is decided under the
/// writer's lock (`isWriting`), so the store has one writer at a time and entries reach it
/// in submission order.
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
/// Thread safety: `FileStore` is touched only by whoever set `isWriting` under the lock (the
/// writer thread or, writing inline, the caller), and by the caller while the writer is idle
/// after `drain()` (snapshots, store reports): the writer thread acts only on what the caller
/// asked under the lock (a submission, an fsync) and on no-space retries, which `drain()`
/// refuses to return through.
final class JournalWriter: @unchecked Sendable {
    /// How long the writer waits between attempts while the disk is full, in seconds.
    static let noSpaceRetryInterval = 0.25
    /// The most time between two ownership checks before a write, in seconds.
    static let ownershipCheckInterval = 0.1
    /// The most entries a submission may hold to be written on the caller's thread: a lone
    /// request's few; a burst's or a bulk request's go to the writer thread, whose encoding
    /// and writing then overlap the loop's work.
    static let maxInlineEntries = 64
    /// Under `always`, the slowest recent `fdatasync` (seconds) for which the caller still
    /// fsyncs inline; a slower disk leaves every fsync to the writer thread.
    static let maxInlineFsyncSeconds = 0.005

    /// How long the caller can spare for writing inline under `always`.
    enum InlineAllowance: Equatable {
        /// Never fsync on the caller's thread (writes under `interval`/`never` still may).
        case none
        /// Up to this many seconds: the caller fsyncs inline when twice the recent fsync
        /// latency plus `fsyncMargin` fits.
        case seconds(Double)
        /// Any time (nothing else waits on the caller).
        case unlimited

        /// Seconds added to twice the recent fsync latency before it counts as fitting.
        static let fsyncMargin = 0.001
    }

    private let store: FileStore
    private let condition = NSCondition()
    private var queue: [JournalEntry] = []
    /// Entries submitted and not yet durable (queued, being written, or kept for a retry).
    private var undurable = 0
    private var submitted: UInt64 = 0
    private var durable: UInt64 = 0
    private var failure: (any Error)?
    /// The write error while the disk is full (`JournalError.noSpace`), else `nil`.
    private var noSpace: JournalError?
    private var isStopping = false
    /// Whether a thread is using the store: the writer thread with a batch or an fsync, or
    /// the caller writing inline.
    private var isWriting = false
    /// Entries the store holds buffered from writes that found no space; the writer thread
    /// retries them every `noSpaceRetryInterval`.
    private var carried = 0
    /// With `interval`: since when written records have waited for an `fdatasync`.
    private var unsyncedSince: ContinuousClock.Instant?
    /// Whether the caller asked the writer thread for an `interval` fsync.
    private var isFsyncRequested = false
    /// The latest `fdatasync` latency, in seconds (0 before the first).
    private var recentFsyncSeconds = 0.0
    /// Under `interval`, the time after which written records are fsynced; `nil` otherwise.
    private let fsyncInterval: Duration?
    /// Submissions written on the caller's thread since start.
    private var inlineWrites = 0
    /// Whether an inline write fsyncs (`always`).
    private let isFsyncingEveryWrite: Bool
    // Used only by whoever holds `isWriting`.
    private var lastOwnershipCheck = ContinuousClock.now
    private var reported: JournalStatistics
    /// The journal sequence number of the last entry submitted: `FileJournal.append` numbers
    /// entries consecutively in the order they are submitted.
    private var submittedSequence: UInt64
    /// The journal's figures after the newest write or segment removal, for readers on other
    /// threads (the journal itself belongs to the holder of `isWriting`).
    private var published: JournalStatistics
    /// The newest segment removal asked for and not yet done: remove through this sequence.
    private var requestedRemoval: UInt64?
    private var removalsRequested: UInt64 = 0
    private var removalsDone: UInt64 = 0
    /// What the newest removal done returned, or its error.
    private var removalOutcome: Result<SegmentRemoval, any Error> = .success(SegmentRemoval(removed: 0, statistics: JournalStatistics()))

    /// What a segment removal did.
    struct SegmentRemoval: Sendable {
        /// How many segment files were removed.
        var removed: Int
        /// The journal's figures just after (sizes, segment count).
        var statistics: JournalStatistics
    }
    /// The slowest recent `fdatasync` (seconds) for which the caller still fsyncs inline.
    private let inlineFsyncLimit: Double
    private let finished = DispatchSemaphore(value: 0)
    /// Told the fsync durations and journal size after each write; `nil` tells nobody.
    private let probe: CoordinatorProbe?

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
    init(
        store: FileStore, context: Context, signalEndpoint: String, unwrittenEntries: Int = 0, probe: CoordinatorProbe? = nil,
        maxInlineFsyncSeconds: Double = JournalWriter.maxInlineFsyncSeconds
    ) throws {
        self.store = store
        self.probe = probe
        inlineFsyncLimit = maxInlineFsyncSeconds
        reported = store.journal.statistics
        published = reported
        submittedSequence = store.journal.lastSequence
        switch store.journal.fsyncPolicy {
        case .always:
            fsyncInterval = nil
            isFsyncingEveryWrite = true
        case .interval(let milliseconds):
            fsyncInterval = .milliseconds(milliseconds)
            isFsyncingEveryWrite = false
        case .never:
            fsyncInterval = nil
            isFsyncingEveryWrite = false
        }
        if unwrittenEntries > 0 {
            undurable = unwrittenEntries
            carried = unwrittenEntries
            noSpace = JournalError(.noSpace, path: store.journal.directory.path, message: "the store was full at start")
        }
        try SignalingThread.start(name: "chime-journal", context: context, signalEndpoint: signalEndpoint, finished: finished) {
            [self] signal in run(signal: signal)
        }
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
        submitted += 1
        undurable += entries.count
        submittedSequence += UInt64(entries.count)
        guard isInlineWritePossible(entries.count, allowance: allowance) else {
            queue.append(contentsOf: entries)
            condition.signal()
            return submitted
        }
        isWriting = true
        inlineWrites += 1
        let ticket = submitted
        // The lock stays held: the writer thread is idle and the caller is the one who would
        // otherwise take it, so no one waits on it during the write.
        let outcome = write(entries, fsync: isFsyncingEveryWrite)
        finish(outcome, entries: entries.count, through: ticket)
        // Only a full disk changes what the idle writer thread waits for (its retry timer);
        // waking it for nothing would cost the context switch this path saves.
        if case .noSpace = outcome { condition.broadcast() }
        return ticket
    }

    /// Whether the writer thread is idle and a submission of `count` entries may be written
    /// by the caller. Called with the lock held.
    private func isInlineWritePossible(_ count: Int, allowance: InlineAllowance) -> Bool {
        guard count <= Self.maxInlineEntries, queue.isEmpty, !isWriting, !isFsyncRequested, !isStopping,
              carried == 0, noSpace == nil, failure == nil, durable == submitted - 1
        else { return false }
        guard isFsyncingEveryWrite else { return true }
        guard recentFsyncSeconds <= inlineFsyncLimit else { return false }
        switch allowance {
        case .none: return false
        case .unlimited: return true
        case .seconds(let spare): return 2 * recentFsyncSeconds + InlineAllowance.fsyncMargin <= spare
        }
    }

    /// The newest ticket submitted (what a reply must wait for to follow every earlier entry).
    var lastSubmitted: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return submitted
    }

    /// The newest ticket submitted and the journal sequence number of its last entry: a copy
    /// of the state taken now reflects every entry through that sequence number, which is
    /// on disk once `waitUntilDurable(ticket:)` returns.
    var submittedPosition: (ticket: UInt64, sequence: UInt64) {
        condition.lock()
        defer { condition.unlock() }
        return (submitted, submittedSequence)
    }

    /// Waits until the entries of `ticket` (and every earlier one) are durable.
    /// - Throws: the error a write or fsync failed with; `JournalError.noSpace` while the
    ///   disk is full and they are not written yet.
    func waitUntilDurable(ticket: UInt64) throws {
        condition.lock()
        defer { condition.unlock() }
        while durable < ticket && failure == nil && noSpace == nil { condition.wait() }
        if let failure { throw failure }
        if durable < ticket, let noSpace { throw noSpace }
    }

    /// Asks the writer thread to remove the journal segments whose entries are all at or
    /// below `sequence` (`FileJournal.removeSegments(through:)`), after checking the store's
    /// `LOCK`; returns the number `segmentRemoval(_:)` reports it by.
    func removeSegments(through sequence: UInt64) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        requestedRemoval = max(requestedRemoval ?? 0, sequence)
        removalsRequested += 1
        condition.signal()
        return removalsRequested
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
    var inlineWriteCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return inlineWrites
    }

    /// How many submitted entries are not durable yet.
    var undurableCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return undurable
    }

    /// The newest ticket whose entries are durable.
    /// - Throws: the error a write or fsync failed with; the journal takes nothing more then.
    func durableTicket() throws -> UInt64 { try status().durableTicket }

    /// The durable ticket and whether the disk is full, under one lock.
    /// - Throws: the error a write or fsync failed with (never `.noSpace`, which is a mode).
    func status() throws -> Status {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        return Status(durableTicket: durable, isStoreFull: noSpace != nil)
    }

    /// Under `interval`: asks the writer thread for the `fdatasync` of written records once
    /// they have waited `interval` and the writer is idle. The loop calls it once a turn (at
    /// least every 100 ms), never between a `drain()` and its own use of the store.
    func requestFsyncIfDue() {
        guard fsyncInterval != nil else { return }
        condition.lock()
        defer { condition.unlock() }
        if let fsyncInterval, let since = unsyncedSince, !isFsyncRequested, !isWriting, queue.isEmpty, carried == 0,
           ContinuousClock.now - since >= fsyncInterval {
            isFsyncRequested = true
            condition.signal()
        }
    }

    /// Waits until everything submitted is durable and the writer is idle (no write or
    /// requested fsync under way), so the caller may use the store until its next call.
    /// - Throws: the error a write or fsync failed with; `JournalError.noSpace` at once
    ///   while the disk is full (what is submitted stays queued and is retried).
    func drain() throws {
        condition.lock()
        defer { condition.unlock() }
        while isWriting || ((durable < submitted || isFsyncRequested) && failure == nil && noSpace == nil) {
            condition.wait()
        }
        if let failure { throw failure }
        if let noSpace, undurable > 0 { throw noSpace }
    }

    /// Writes what is queued, then stops the thread and waits for it. While the disk is full
    /// it tries once more and then gives up on what it could not write (lost as in a crash:
    /// no reply waited on it was sent).
    func stop() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
    }

    /// Drops what is queued, lets a write under way finish, then stops the thread and waits
    /// for it: for a coordinator that lost the store, whose entries must not reach it.
    func abandon() {
        condition.lock()
        queue.removeAll()
        isStopping = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
    }

    private func run(signal: Socket) {
        while true {
            condition.lock()
            var isRetryDue = false
            while isWriting || (queue.isEmpty && !isFsyncRequested && requestedRemoval == nil && !isStopping && !isRetryDue) {
                if carried > 0 && !isWriting {
                    isRetryDue = !condition.wait(until: Date(timeIntervalSinceNow: Self.noSpaceRetryInterval))
                } else {
                    condition.wait()
                }
            }
            // Stopping: the store's close fsyncs what a requested fsync would have.
            if queue.isEmpty && carried == 0 && requestedRemoval == nil && (isStopping || !isFsyncRequested) {
                isFsyncRequested = false
                condition.unlock()
                return
            }
            let isLastAttempt = isStopping
            let batch = queue
            let through = submitted
            let wasFull = noSpace != nil
            queue.removeAll(keepingCapacity: true)
            isFsyncRequested = false
            isWriting = true
            let removal = requestedRemoval.map { (through: $0, number: removalsRequested) }
            requestedRemoval = nil
            condition.unlock()
            if let removal { removeSegments(removal.through, number: removal.number, signal: signal) }
            // With nothing queued this is a retry or an `interval` fsync: `sync` still fsyncs.
            let outcome = write(batch, fsync: true)
            condition.lock()
            finish(outcome, entries: batch.count, through: through)
            condition.broadcast()
            condition.unlock()
            switch outcome {
            case .written:
                // A full signal queue already holds a wake-up for the loop.
                _ = try? signal.send(Data(), dontWait: true)
            case .noSpace:
                if !wasFull { _ = try? signal.send(Data(), dontWait: true) }
                if isLastAttempt { return }
            case .failed:
                _ = try? signal.send(Data(), dontWait: true)
                return
            }
        }
    }

    /// Removes the segments through `sequence` (old segments only: the tail and what is
    /// buffered never go, so this is safe while the disk is full, and frees space), after an
    /// ownership check; records the outcome as removal `number`. Called only by the holder of
    /// `isWriting`.
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

    /// How a write ended.
    private enum WriteOutcome {
        /// Written (and fsynced when asked); whether records still wait for an fsync.
        case written(hasUnsyncedWrites: Bool)
        case noSpace(JournalError)
        case failed(any Error)
    }

    /// Appends `batch` and writes it (`fsync`: with `sync`, which fsyncs per the policy;
    /// else `write`). Called only by the holder of `isWriting`, without needing the lock.
    private func write(_ batch: [JournalEntry], fsync: Bool) -> WriteOutcome {
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
            if !batch.isEmpty { try store.append(batch) }
        } catch {
            return .failed(error)
        }
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
        if let probe { report(statistics, to: probe, since: reported) }
        reported = statistics
        return .written(hasUnsyncedWrites: store.journal.hasUnsyncedWrites)
    }

    /// Records how a write of `count` entries through ticket `through` ended and releases
    /// `isWriting`; the caller wakes whoever waits on that. Called with the lock held.
    private func finish(_ outcome: WriteOutcome, entries count: Int, through: UInt64) {
        isWriting = false
        switch outcome {
        case .written(let hasUnsyncedWrites):
            durable = through
            undurable -= carried + count
            carried = 0
            noSpace = nil
            recentFsyncSeconds = reported.lastFsyncLatency ?? 0
            published = reported
            if !hasUnsyncedWrites {
                unsyncedSince = nil
            } else if unsyncedSince == nil || count == 0 {
                // After a requested fsync the journal's own clock said "not yet": ask again
                // one interval later.
                unsyncedSince = ContinuousClock.now
            }
        case .noSpace(let error):
            carried += count
            noSpace = error
        case .failed(let error):
            failure = error
        }
    }
}

extension JournalWriter {
    /// Tells `probe` the fsyncs between `previous` and `current` (the last one's duration; the
    /// mean when one write made several) and the journal's size.
    private func report(_ current: JournalStatistics, to probe: CoordinatorProbe, since previous: JournalStatistics) {
        let fsyncs = current.fsyncCount - previous.fsyncCount
        probe.updateStore { figures in
            if fsyncs == 1, let latency = current.lastFsyncLatency {
                figures.fsyncDuration.observe(latency)
            } else if fsyncs > 1 {
                figures.fsyncDuration.observe((current.totalFsyncSeconds - previous.totalFsyncSeconds) / Double(fsyncs), times: fsyncs)
            }
            figures.journalBytes = current.journalBytes
        }
    }
}

