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
