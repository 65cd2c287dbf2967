import ChimeJournal
import ChimeStore
import Foundation

/// The decisions of the journal's group commit, as a value: which submissions are durable,
/// when the loop may write inline, what the writer thread does next, when an `interval`
/// fsync is due, how a full disk is retried. No locks, no threads, no clock of its own:
/// ``JournalWriter`` holds one under its lock, feeds it events with the time, and carries
/// out what it answers (write, fsync, remove segments, signal the loop, wait, exit).
///
/// Tickets number submissions from 1; the entries of ticket `t` and every earlier one are
/// durable once `durable >= t`. One party writes at a time (`isWriting`): the writer thread
/// with a batch, or the loop inline.
struct GroupCommit {
    /// How long the loop can spare for writing inline under `always`.
    enum InlineAllowance: Equatable {
        /// Never fsync on the loop (writes under `interval`/`never` still may be inline).
        case none
        /// Up to this many seconds: the loop fsyncs inline when twice the recent fsync
        /// latency plus `fsyncMargin` fits.
        case seconds(Double)
        /// Any time (nothing else waits on the loop).
        case unlimited

        /// Seconds added to twice the recent fsync latency before it counts as fitting.
        static let fsyncMargin = 0.001
    }

    /// What `submit` decided.
    enum Submission: Equatable {
        /// Queued for the writer thread.
        case queued(ticket: UInt64)
        /// To be written by the caller now (`fsync`: `sync`, else `write`); report how it
        /// went with `finishInlineWrite`.
        case inline(ticket: UInt64, fsync: Bool)
    }

    /// One batch the writer thread takes: the submissions queued, the ticket they complete,
    /// and a segment removal to do first.
    struct Batch {
        /// The entries of each submission, in order: each is appended to the journal as one
        /// unit, so a segment roll never falls between a request's entries.
        var submissions: [[JournalEntry]]
        /// Every entry of the batch, in order.
        var entries: [JournalEntry] { submissions.flatMap { $0 } }
        /// How many entries the batch holds.
        var entryCount: Int { submissions.reduce(0) { $0 + $1.count } }
        /// The newest ticket submitted when the batch was taken.
        var through: UInt64
        /// Remove the segments through this sequence first, reported as removal `number`.
        var removal: (through: UInt64, number: UInt64)?
        /// The writer stops after this batch whatever happens (it was asked to stop).
        var isLastAttempt: Bool
        /// The disk was full when the batch was taken.
        var wasFull: Bool
    }

    /// What the writer thread does next.
    enum WriterStep {
        /// Wait to be woken, or until the instant (a no-space retry).
        case wait(until: ContinuousClock.Instant?)
        /// Write (and `sync`) this batch.
        case write(Batch)
        /// End the thread.
        case exit
    }

    /// How a write ended.
    enum WriteOutcome {
        /// Written (and fsynced when asked); `fsyncSeconds`, the journal's latest fsync
        /// latency; whether records still wait for an fsync; `writeSeconds`, how long its
        /// `write(2)` calls took, fsyncs left out.
        case written(fsyncSeconds: Double?, hasUnsyncedWrites: Bool, writeSeconds: Double = 0)
        /// The disk is full; the journal keeps what it buffered, in order.
        case noSpace(JournalError)
        /// Any other failure: the journal takes nothing more.
        case failed(any Error)
    }

    /// What the writer thread does after a batch.
    struct Aftermath: Equatable {
        /// Wake the loop (something it waits on changed).
        var signalsLoop: Bool
        /// End the thread.
        var exits: Bool
    }

    /// How long the writer waits between attempts while the disk is full.
    static let noSpaceRetryInterval: Duration = .milliseconds(250)
    /// The most entries a submission may hold to be written inline: a lone request's few;
    /// a burst's or a bulk request's go to the writer thread, whose encoding and writing
    /// then overlap the loop's work.
    static let maxInlineEntries = 64
    /// The slowest recent journal `write` (seconds, fsyncs left out) for which the loop still
    /// writes inline: a write normally takes tens of microseconds (page cache), but a disk
    /// busy with another process's writeback can hold one for tens of milliseconds (the
    /// kernel's dirty-page throttling), and the loop must not wait on that (issue 28).
    static let defaultInlineWriteLimit = 0.002

    /// The store's policy.
    let policy: FsyncPolicy
    /// Under `always`, the slowest recent `fdatasync` (seconds) for which the loop still
    /// fsyncs inline.
    let inlineFsyncLimit: Double
    /// The slowest recent `write` (seconds) for which the loop still writes inline
    /// (`defaultInlineWriteLimit` unless a test raises it).
    let inlineWriteLimit: Double

    /// The submissions queued for the writer thread, each kept whole.
    private(set) var queue: [[JournalEntry]] = []
    private(set) var submitted: UInt64 = 0
    private(set) var durable: UInt64 = 0
    /// Entries submitted and not yet durable (queued, being written, or kept for a retry).
    private(set) var undurable = 0
    /// Entries the journal holds buffered from writes that found no space.
    private(set) var carried = 0
    /// The journal sequence number of the last entry submitted (`FileJournal.append`
    /// numbers entries consecutively in submission order).
    private(set) var submittedSequence: UInt64
    private(set) var failure: (any Error)?
    /// The write error while the disk is full, else `nil`.
    private(set) var noSpace: JournalError?
    private(set) var isStopping = false
    /// Whether someone is using the store: the writer thread or the loop inline.
    private(set) var isWriting = false
    /// Whether the loop asked the writer thread for an `interval` fsync.
    private(set) var isFsyncRequested = false
    /// With `interval`: since when written records have waited for an `fdatasync`.
    private(set) var unsyncedSince: ContinuousClock.Instant?
    /// The latest `fdatasync` latency, in seconds (0 before the first).
    private(set) var recentFsyncSeconds = 0.0
    /// How long the latest write took, in seconds, fsyncs left out (0 before the first).
    private(set) var recentWriteSeconds = 0.0
    /// While the disk is full: when the writer tries again.
    private(set) var retryAt: ContinuousClock.Instant?
    /// Submissions written inline since start.
    private(set) var inlineWrites = 0
    /// The newest segment removal asked for and not yet taken: through this sequence.
    private(set) var requestedRemoval: UInt64?
    private(set) var removalsRequested: UInt64 = 0

    /// A commit with nothing submitted; `lastSequence` is the journal's.
    /// - Parameter unwrittenEntries: entries the journal already holds buffered because its
    ///   last `sync` found no space (a start on a full store): the writer retries them first.
    init(
        policy: FsyncPolicy, lastSequence: UInt64, inlineFsyncLimit: Double,
        inlineWriteLimit: Double = GroupCommit.defaultInlineWriteLimit, unwrittenEntries: Int = 0,
        noSpace: JournalError? = nil, now: ContinuousClock.Instant
    ) {
        self.policy = policy
        self.inlineFsyncLimit = inlineFsyncLimit
        self.inlineWriteLimit = inlineWriteLimit
        submittedSequence = lastSequence
        if unwrittenEntries > 0 {
            undurable = unwrittenEntries
            carried = unwrittenEntries
            self.noSpace = noSpace
            retryAt = now + Self.noSpaceRetryInterval
        }
    }

    private var fsyncsEveryWrite: Bool { policy == .always }

    private var fsyncInterval: Duration? {
        if case .interval(let milliseconds) = policy { return .milliseconds(milliseconds) }
        return nil
    }

    // MARK: The loop's side

    /// Takes a submission: queued for the writer, or to be written inline when the writer is
    /// idle and the store healthy (`mayWriteInline`).
    mutating func submit(_ entries: [JournalEntry], allowance: InlineAllowance) -> Submission {
        submitted += 1
        undurable += entries.count
        submittedSequence += UInt64(entries.count)
        guard mayWriteInline(entries.count, allowance: allowance) else {
            queue.append(entries)
            return .queued(ticket: submitted)
        }
        isWriting = true
        inlineWrites += 1
        return .inline(ticket: submitted, fsync: fsyncsEveryWrite)
    }

    /// Whether a submission of `count` entries, just counted, may be written by the loop:
    /// small; nothing queued, written, carried or asked of the writer; no error; every
    /// earlier ticket durable; the latest write fast (`inlineWriteLimit`); and under
    /// `always` a recent fsync fast enough for the time the loop can spare.
    func mayWriteInline(_ count: Int, allowance: InlineAllowance) -> Bool {
        let isWriterIdle = queue.isEmpty && !isWriting && !isFsyncRequested && !isStopping && carried == 0
        let isHealthy = noSpace == nil && failure == nil
        guard count <= Self.maxInlineEntries, isWriterIdle, isHealthy, durable == submitted - 1 else { return false }
        guard recentWriteSeconds <= inlineWriteLimit else { return false }
        guard fsyncsEveryWrite else { return true }
        guard recentFsyncSeconds <= inlineFsyncLimit else { return false }
        switch allowance {
        case .none: return false
        case .unlimited: return true
        case .seconds(let spare): return 2 * recentFsyncSeconds + InlineAllowance.fsyncMargin <= spare
        }
    }

    /// Records how an inline write of `count` entries for `ticket` ended.
    /// - Returns: whether to wake the writer thread (only a full disk changes what it
    ///   waits for: its retry timer).
    mutating func finishInlineWrite(_ outcome: WriteOutcome, count: Int, ticket: UInt64, now: ContinuousClock.Instant) -> Bool {
        finish(outcome, count: count, through: ticket, now: now)
        if case .noSpace = outcome { return true }
        return false
    }

    /// Under `interval`: asks for the `fdatasync` of written records once they have waited
    /// `interval` and the writer is idle.
    /// - Returns: whether to wake the writer thread.
    mutating func requestFsyncIfDue(now: ContinuousClock.Instant) -> Bool {
        guard let fsyncInterval, let since = unsyncedSince, !isFsyncRequested, !isWriting, queue.isEmpty, carried == 0,
            now - since >= fsyncInterval
        else { return false }
        isFsyncRequested = true
        return true
    }

    /// Asks for the segments through `sequence` to be removed; returns the removal's number.
    mutating func requestRemoval(through sequence: UInt64) -> UInt64 {
        requestedRemoval = max(requestedRemoval ?? 0, sequence)
        removalsRequested += 1
        return removalsRequested
    }

    /// Asks the writer to write what is queued and end.
    mutating func stop() { isStopping = true }

    /// Asks the writer to drop what is queued and end (the store is someone else's now).
    mutating func abandon() {
        queue.removeAll()
        isStopping = true
    }

    /// Whether `ticket` is decided: durable, or never going to be while the error stands.
    func isSettled(ticket: UInt64) -> Bool { durable >= ticket || failure != nil || noSpace != nil }

    /// Whether everything submitted is durable and the writer idle (no write or requested
    /// fsync under way), or an error stops that from happening.
    var isDrained: Bool {
        !isWriting && (durable >= submitted && !isFsyncRequested || failure != nil || noSpace != nil)
    }

    // MARK: The writer thread's side

    /// What the writer thread does next at `now`: wait while someone writes or there is
    /// nothing to do (until the no-space retry, if one is pending); end once stopping with
    /// nothing left (the store's close fsyncs what a requested fsync would have); else take
    /// a batch — the queue, a requested fsync (an empty batch: `sync` still fsyncs), a
    /// no-space retry, a segment removal — and write it.
    mutating func nextStep(now: ContinuousClock.Instant) -> WriterStep {
        if isWriting { return .wait(until: nil) }
        let isRetryDue = carried > 0 && (isStopping || retryAt.map { now >= $0 } ?? true)
        let hasWork = !queue.isEmpty || isFsyncRequested || requestedRemoval != nil || isRetryDue
        if isStopping && queue.isEmpty && carried == 0 && requestedRemoval == nil {
            isFsyncRequested = false
            return .exit
        }
        guard hasWork else { return .wait(until: carried > 0 ? retryAt : nil) }
        let batch = Batch(
            submissions: queue, through: submitted, removal: requestedRemoval.map { ($0, removalsRequested) },
            isLastAttempt: isStopping, wasFull: noSpace != nil)
        queue.removeAll(keepingCapacity: true)
        isFsyncRequested = false
        requestedRemoval = nil
        isWriting = true
        return .write(batch)
    }

    /// Records how the writer thread's `batch` ended and says what the thread does next.
    mutating func finishBatch(_ outcome: WriteOutcome, batch: Batch, now: ContinuousClock.Instant) -> Aftermath {
        finish(outcome, count: batch.entryCount, through: batch.through, now: now)
        switch outcome {
        case .written: return Aftermath(signalsLoop: true, exits: false)
        // The loop learns of a full disk once; a retry that still finds none changes nothing.
        case .noSpace: return Aftermath(signalsLoop: !batch.wasFull, exits: batch.isLastAttempt)
        case .failed: return Aftermath(signalsLoop: true, exits: true)
        }
    }

    /// Records how a write of `count` entries through ticket `through` ended and releases
    /// `isWriting`.
    private mutating func finish(_ outcome: WriteOutcome, count: Int, through: UInt64, now: ContinuousClock.Instant) {
        isWriting = false
        switch outcome {
        case .written(let fsyncSeconds, let hasUnsyncedWrites, let writeSeconds):
            recentWriteSeconds = writeSeconds
            durable = through
            undurable -= carried + count
            carried = 0
            noSpace = nil
            retryAt = nil
            recentFsyncSeconds = fsyncSeconds ?? 0
            if !hasUnsyncedWrites {
                unsyncedSince = nil
            } else if unsyncedSince == nil || count == 0 {
                // After a requested fsync the journal's own clock said "not yet": ask again
                // one interval later.
                unsyncedSince = now
            }
        case .noSpace(let error):
            carried += count
            noSpace = error
            retryAt = now + Self.noSpaceRetryInterval
        case .failed(let error):
            failure = error
        }
    }
}
