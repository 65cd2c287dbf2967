import Foundation
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// The coordinator's helper threads (journal writer, reply encoder, snapshot writer) wake the
/// loop the same way: each owns a PUSH socket connected to the loop's inproc PULL endpoint and
/// sends an empty message when it has something for it (ZeroMQ Guide ch. 2, "Signaling
/// Between Threads"). This starts such a thread.
enum SignalingThread {
    /// Connects a PUSH socket (linger 0) to `signalEndpoint` and starts a thread named `name`
    /// that runs `body` with it, then closes it and signals `finished`.
    /// - Parameter lowerPriority: nice +10 for the thread (see `lowerPriorityOfCurrentThread`).
    /// - Throws: `ZeroMQError` when the socket cannot be made or connected.
    static func start(
        name: String, context: Context, signalEndpoint: String, lowerPriority: Bool = false, finished: DispatchSemaphore,
        body: @escaping @Sendable (Socket) -> Void
    ) throws {
        let signal = try Socket(.push, context: context)
        try signal.set(.linger(milliseconds: 0))
        try signal.connect(to: signalEndpoint)
        // The socket moves to the new thread here; the thread's start is a full barrier.
        let box = SocketBox(signal)
        let thread = Thread {
            if lowerPriority { lowerPriorityOfCurrentThread() }
            body(box.socket)
            box.socket.close()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Nice +10 for the calling thread only: on Linux the nice value is a per-thread attribute
    /// and `setpriority(PRIO_PROCESS, 0, …)` sets the calling thread's (setpriority(2), NOTES).
    /// Best effort: failing leaves the default priority.
    static func lowerPriorityOfCurrentThread() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }
}

/// Carries a socket to the thread that takes it over.
final class SocketBox: @unchecked Sendable {
    let socket: Socket
    init(_ socket: Socket) { self.socket = socket }
}

/// A thread that works through submitted inputs in order, keeps each output under its
/// submission number, and wakes the loop after each (`SignalingThread`): the reply encoder's
/// pages and the snapshot writer's snapshots.
///
/// Thread safety: the queue and the outputs are guarded by one condition lock; the signal
/// socket is used by the worker thread only.
final class BackgroundQueue<Input: Sendable, Output: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [(number: UInt64, input: Input)] = []
    private var outputs: [UInt64: Output] = [:]
    private var submitted: UInt64 = 0
    /// How many inputs were worked through (outputs taken back or not).
    private var done: UInt64 = 0
    private var isStopping = false
    private let stopped = DispatchSemaphore(value: 0)
    private let work: @Sendable (Input) -> Output

    /// Starts the thread (see `SignalingThread.start` for the parameters); `work` turns each
    /// input into its output on that thread.
    /// - Throws: `ZeroMQError` when the signal socket cannot be made or connected.
    init(
        name: String, context: Context, signalEndpoint: String, lowerPriority: Bool,
        work: @escaping @Sendable (Input) -> Output
    ) throws {
        self.work = work
        try SignalingThread.start(
            name: name, context: context, signalEndpoint: signalEndpoint, lowerPriority: lowerPriority, finished: stopped
        ) { [self] signal in run(signal: signal) }
    }

    /// Queues `input`; returns the number `take` and `wait` hand its output back by.
    func submit(_ input: Input) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        submitted += 1
        queue.append((submitted, input))
        condition.signal()
        return submitted
    }

    /// The output of `number` once done (removed from the queue), else `nil`.
    func take(_ number: UInt64) -> Output? {
        condition.lock()
        defer { condition.unlock() }
        return outputs.removeValue(forKey: number)
    }

    /// Waits until `number` is done, then takes its output (`nil` when it was taken already).
    func wait(for number: UInt64) -> Output? {
        condition.lock()
        defer { condition.unlock() }
        while done < number { condition.wait() }
        return outputs.removeValue(forKey: number)
    }

    /// Waits until every submitted input is done.
    func drain() {
        condition.lock()
        defer { condition.unlock() }
        while done < submitted { condition.wait() }
    }

    /// Works through what is queued, then stops the thread and waits for it.
    func stop() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        condition.unlock()
        stopped.wait()
    }

    private func run(signal: Socket) {
        while true {
            condition.lock()
            while queue.isEmpty && !isStopping { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            let (number, input) = queue.removeFirst()
            condition.unlock()
            let output = work(input)
            condition.lock()
            outputs[number] = output
            done += 1
            condition.broadcast()
            condition.unlock()
            // A full signal queue already holds a wake-up for the loop.
            _ = try? signal.send(Data(), dontWait: true)
        }
    }
}
