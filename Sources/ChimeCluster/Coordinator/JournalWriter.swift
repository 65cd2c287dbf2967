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
/// Thread safety: `FileStore` is touched by the writer thread only, except while the writer
/// is idle after `drain()` (snapshots, store reports), which the lock orders.
final class JournalWriter: @unchecked Sendable {
    private let store: FileStore
    private let condition = NSCondition()
    private var queue: [JournalEntry] = []
    /// Entries submitted and not yet durable (queued or being written).
    private var undurable = 0
    private var submitted: UInt64 = 0
    private var durable: UInt64 = 0
    private var failure: (any Error)?
    private var isStopping = false
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the writer thread.
    /// - Parameters:
    ///   - store: the open store; only the writer appends to it from now on.
    ///   - context: the ZeroMQ context the loop's PULL socket lives in.
    ///   - signalEndpoint: the inproc endpoint the loop has bound a PULL socket to.
    /// - Throws: `ZeroMQError` when the signal socket cannot be made or connected.
    init(store: FileStore, context: Context, signalEndpoint: String) throws {
        self.store = store
        let signal = try Socket(.push, context: context)
        try signal.set(.linger(milliseconds: 0))
        try signal.connect(to: signalEndpoint)
        // The socket moves to the writer thread here; the thread's start is a full barrier.
        let box = SocketBox(signal)
        let thread = Thread { [self] in
            self.run(signal: box.socket)
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
    func durableTicket() throws -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        return durable
    }

    /// Waits until everything submitted is durable (the writer is then idle).
    /// - Throws: the error a write or fsync failed with.
    func drain() throws {
        condition.lock()
        defer { condition.unlock() }
        while durable < submitted && failure == nil { condition.wait() }
        if let failure { throw failure }
    }

    /// Writes what is queued, then stops the thread and waits for it.
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
            while queue.isEmpty && !isStopping { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            let batch = queue
            let through = submitted
            queue.removeAll(keepingCapacity: true)
            condition.unlock()
            do {
                try store.append(batch)
                try store.sync()
            } catch {
                condition.lock()
                failure = error
                condition.broadcast()
                condition.unlock()
                _ = try? signal.send(Data(), dontWait: true)
                return
            }
            condition.lock()
            durable = through
            undurable -= batch.count
            condition.broadcast()
            condition.unlock()
            // A full signal queue already holds a wake-up for the loop.
            _ = try? signal.send(Data(), dontWait: true)
        }
    }
}

/// Carries a socket to the thread that takes it over.
private final class SocketBox: @unchecked Sendable {
    let socket: Socket
    init(_ socket: Socket) { self.socket = socket }
}
