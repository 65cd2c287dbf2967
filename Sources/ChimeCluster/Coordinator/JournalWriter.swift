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
/// **A full disk is a mode** (`isStoreFull`): when a write finds no space, the journal keeps
/// every record it had buffered (`FileJournal.sync` undoes the partial write), the writer
/// keeps them and everything submitted after them, in order, and calls `sync` again every
/// `noSpaceRetryInterval` until one succeeds; then the mode ends by itself. No entry the loop
/// submitted is dropped or reordered while the process lives; `durableTicket` simply does not
/// move. Only a stop while the disk is still full gives up on them (as a crash would).
///
/// Before each write, at most every `ownershipCheckInterval`, the writer checks that the
/// store's `LOCK` still names the file it locked, so after a stall (SIGSTOP) it does not
/// write into a store another coordinator took over before the loop has looked.
///
/// It also removes the journal segments a snapshot covers (`removeSegments(through:)`), so
/// the snapshot thread and the loop never touch the journal.
///
/// Thread safety: `FileStore` is touched by the writer thread only, except while the writer
/// is idle after `drain()` (store reports), which the lock orders.
final class JournalWriter: @unchecked Sendable {
    /// How long the writer waits between attempts while the disk is full, in seconds.
    static let noSpaceRetryInterval = 0.25
    /// The most time between two ownership checks before a write, in seconds.
    static let ownershipCheckInterval = 0.1

    private let store: FileStore
    private let condition = NSCondition()
    private var queue: [JournalEntry] = []
    /// Entries submitted and not yet durable (queued, being written, or kept for a retry).
    private var undurable = 0
    private var submitted: UInt64 = 0
    private var durable: UInt64 = 0
    /// The journal sequence number of the last entry submitted: `FileJournal.append` numbers
    /// entries consecutively in the order they are submitted.
    private var submittedSequence: UInt64
    /// The journal's figures after the newest write or segment removal, for readers on other
    /// threads (the journal itself is the writer thread's).
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
    private var failure: (any Error)?
    /// The write error while the disk is full (`JournalError.noSpace`), else `nil`.
    private var noSpace: JournalError?
    private var isStopping = false
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
    /// - Throws: `ZeroMQError` when the signal socket cannot be made or connected.
    init(
        store: FileStore, context: Context, signalEndpoint: String, unwrittenEntries: Int = 0, probe: CoordinatorProbe? = nil
    ) throws {
        self.store = store
        self.probe = probe
        submittedSequence = store.journal.lastSequence
        published = store.journal.statistics
        if unwrittenEntries > 0 {
            undurable = unwrittenEntries
            noSpace = JournalError(.noSpace, path: store.journal.directory.path, message: "the store was full at start")
        }
        let signal = try Socket(.push, context: context)
        try signal.set(.linger(milliseconds: 0))
        try signal.connect(to: signalEndpoint)
        // The socket moves to the writer thread here; the thread's start is a full barrier.
        let box = SocketBox(signal)
        let thread = Thread { [self] in
            self.run(signal: box.socket, carried: unwrittenEntries)
            box.socket.close()
            self.finished.signal()
        }
        thread.name = "chime-journal"
        thread.start()
    }

    /// Queues entries for the next write; returns the ticket that `durableTicket()` reaches
    /// once they are written (and fsynced under `always`).
    func submit(_ entries: [JournalEntry]) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        queue.append(contentsOf: entries)
        undurable += entries.count
        submittedSequence += UInt64(entries.count)
        submitted += 1
        condition.signal()
        return submitted
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

    /// How removal `number` went (how many segments were removed), once it is done; `nil`
    /// before. A later removal done first answers for it too.
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

    /// Waits until everything submitted is durable (the writer is then idle).
    /// - Throws: the error a write or fsync failed with; `JournalError.noSpace` at once
    ///   while the disk is full (what is submitted stays queued and is retried).
    func drain() throws {
        condition.lock()
        defer { condition.unlock() }
        while durable < submitted && failure == nil && noSpace == nil { condition.wait() }
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

    /// - Parameter carried: entries the store holds buffered from a write that found no
    ///   space; they are written before (with) the next batch.
    private func run(signal: Socket, carried initiallyCarried: Int) {
        var carried = initiallyCarried
        var lastOwnershipCheck = ContinuousClock.now
        var reported = store.journal.statistics
        while true {
            condition.lock()
            var isRetryDue = false
            while queue.isEmpty && requestedRemoval == nil && !isStopping && !isRetryDue {
                if carried > 0 {
                    isRetryDue = !condition.wait(until: Date(timeIntervalSinceNow: Self.noSpaceRetryInterval))
                } else {
                    condition.wait()
                }
            }
            if queue.isEmpty && carried == 0 && requestedRemoval == nil {
                condition.unlock()
                return
            }
            let removal = requestedRemoval.map { (through: $0, number: removalsRequested) }
            requestedRemoval = nil
            let isLastAttempt = isStopping
            let batch = queue
            let through = submitted
            queue.removeAll(keepingCapacity: true)
            condition.unlock()
            do {
                let now = ContinuousClock.now
                if now - lastOwnershipCheck >= .seconds(Self.ownershipCheckInterval) || removal != nil {
                    try store.lock.verifyOwnership()
                    lastOwnershipCheck = now
                }
                if let removal {
                    // Old segments only: the tail and what is buffered are never removed, so
                    // this is safe while the disk is full (and frees space).
                    let outcome = Result {
                        SegmentRemoval(
                            removed: try store.journal.removeSegments(through: removal.through), statistics: store.journal.statistics)
                    }
                    if case .success(let done) = outcome {
                        probe?.updateStore { $0.journalBytes = done.statistics.journalBytes }
                    }
                    condition.lock()
                    if case .success(let done) = outcome { published = done.statistics }
                    removalsDone = removal.number
                    removalOutcome = outcome
                    condition.broadcast()
                    condition.unlock()
                    _ = try? signal.send(Data(), dontWait: true)
                }
                if !batch.isEmpty { try store.append(batch) }
                // Entries appended are the journal's now: if the write below finds no space it
                // keeps them buffered, in order, and a later `sync` writes them.
                carried += batch.count
                try store.sync()
            } catch let error as JournalError where error.code == .noSpace {
                condition.lock()
                let wasFull = noSpace != nil
                noSpace = error
                condition.broadcast()
                condition.unlock()
                if !wasFull { _ = try? signal.send(Data(), dontWait: true) }
                if isLastAttempt { return }
                continue
            } catch {
                condition.lock()
                failure = error
                condition.broadcast()
                condition.unlock()
                _ = try? signal.send(Data(), dontWait: true)
                return
            }
            let current = store.journal.statistics
            if let probe { report(current, to: probe, since: reported) }
            reported = current
            condition.lock()
            published = current
            durable = through
            undurable -= carried
            carried = 0
            noSpace = nil
            condition.broadcast()
            condition.unlock()
            // A full signal queue already holds a wake-up for the loop.
            _ = try? signal.send(Data(), dontWait: true)
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

/// Carries a socket to the thread that takes it over.
final class SocketBox: @unchecked Sendable {
    let socket: Socket
    init(_ socket: Socket) { self.socket = socket }
}
