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
/// Thread safety: `FileStore` is touched by the writer thread only, except while the writer
/// is idle after `drain()` (snapshots, store reports), which the lock orders.
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
            while queue.isEmpty && !isStopping && !isRetryDue {
                if carried > 0 {
                    isRetryDue = !condition.wait(until: Date(timeIntervalSinceNow: Self.noSpaceRetryInterval))
                } else {
                    condition.wait()
                }
            }
            if queue.isEmpty && carried == 0 {
                condition.unlock()
                return
            }
            let isLastAttempt = isStopping
            let batch = queue
            let through = submitted
            queue.removeAll(keepingCapacity: true)
            condition.unlock()
            do {
                let now = ContinuousClock.now
                if now - lastOwnershipCheck >= .seconds(Self.ownershipCheckInterval) {
                    try store.lock.verifyOwnership()
                    lastOwnershipCheck = now
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
            if let probe { reported = report(to: probe, since: reported) }
            condition.lock()
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
    /// Tells `probe` the fsyncs since `previous` (the last one's duration; the mean when one
    /// write made several) and the journal's size; returns the statistics now.
    private func report(to probe: CoordinatorProbe, since previous: JournalStatistics) -> JournalStatistics {
        let current = store.journal.statistics
        let fsyncs = current.fsyncCount - previous.fsyncCount
        probe.updateStore { figures in
            if fsyncs == 1, let latency = current.lastFsyncLatency {
                figures.fsyncDuration.observe(latency)
            } else if fsyncs > 1 {
                figures.fsyncDuration.observe((current.totalFsyncSeconds - previous.totalFsyncSeconds) / Double(fsyncs), times: fsyncs)
            }
            figures.journalBytes = current.journalBytes
        }
        return current
    }
}

/// Carries a socket to the thread that takes it over.
final class SocketBox: @unchecked Sendable {
    let socket: Socket
    init(_ socket: Socket) { self.socket = socket }
}
