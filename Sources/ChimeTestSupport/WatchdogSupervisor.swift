import Foundation
import HelperThreads
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A small stand-in for systemd's watchdog in tests: listens on an `AF_UNIX` datagram socket
/// (a child's `NOTIFY_SOCKET`) and kills the process with SIGKILL, by its pid, when more than
/// `timeout` passes after its `READY=1` (or first ping) without a `WATCHDOG=1` (systemd's
/// `WatchdogSec=`).
///
/// One supervisor watches one process: give each child its own socket (`environment`).
/// The pid is attached after the spawn (`watch(pid:)`), and a restart attaches the new one.
public final class WatchdogSupervisor: Sendable {
    /// The socket path, for `NOTIFY_SOCKET`.
    public let socketPath: String
    /// How long the process may stay silent after its last ping before it is killed.
    public let timeout: Duration
    private let descriptor: Int32
    private let state = Mutex(State())
    private let stop = Atomic<Bool>(false)
    private let thread = HelperThread(name: "watchdog-supervisor")

    struct State {
        var pid: Int32?
        var isReady = false
        /// Whether any `READY=1` or `WATCHDOG=1` arrived yet (`lastPing` is then its time).
        var hasPinged = false
        var lastPing = ContinuousClock.now
        var messages: [String] = []
        var kills: [Int32] = []
    }

    /// Binds `socketPath` (removing a leftover file) and starts listening on a thread.
    /// - Parameters:
    ///   - socketPath: where to bind (shorter than 108 bytes).
    ///   - timeout: the watchdog timeout (what `WATCHDOG_USEC` tells the child).
    /// - Throws: `POSIXError` when the socket cannot be made or bound.
    public init(socketPath: String, timeout: Duration) throws {
        self.socketPath = socketPath
        self.timeout = timeout
        unlink(socketPath)
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(descriptor)
            throw POSIXError(.ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        self.descriptor = descriptor
        thread.start { [self] in listen() }
    }

    /// The environment that points a child at this supervisor: `NOTIFY_SOCKET` and
    /// `WATCHDOG_USEC`.
    public var environment: [String: String] {
        let microseconds = timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000
        return ["NOTIFY_SOCKET": socketPath, "WATCHDOG_USEC": String(microseconds)]
    }

    /// Watches the process `pid` from now on, giving it a whole `timeout` from now: its
    /// `READY=1` or first ping arms the watchdog. A `READY=1` or ping that came within the
    /// last `timeout` — the child's own, sent between its spawn and this call — arms it at
    /// once: disarming here let a child paused right after its first ping live forever.
    public func watch(pid: Int32) {
        let timeout = timeout
        state.withLock {
            $0.pid = pid
            $0.isReady = $0.hasPinged && ContinuousClock.now - $0.lastPing < timeout
            $0.lastPing = .now
        }
    }

    /// Every message received, in order.
    public var messages: [String] { state.withLock { $0.messages } }
    /// The pids killed for a missed watchdog, in order.
    public var kills: [Int32] { state.withLock { $0.kills } }

    /// Stops listening and closes the socket.
    public func close() {
        guard !stop.exchange(true, ordering: .acquiringAndReleasing) else { return }
        thread.join()
        Glibc.close(descriptor)
        unlink(socketPath)
    }

    deinit { close() }

    private func listen() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stop.load(ordering: .acquiring) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 20) > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0 { received(String(decoding: buffer[0..<count], as: UTF8.self)) }
            }
            let overdue: Int32? = state.withLock { state in
                guard let pid = state.pid, state.isReady, ContinuousClock.now - state.lastPing > timeout else { return nil }
                state.kills.append(pid)
                state.pid = nil
                return pid
            }
            if let overdue { kill(overdue, SIGKILL) }
        }
    }

    private func received(_ message: String) {
        state.withLock { state in
            state.messages.append(message)
            let lines = message.split(separator: "\n")
            if lines.contains("READY=1") {
                state.isReady = true
                state.hasPinged = true
                state.lastPing = .now
            }
            // A ping arms the watchdog too: a READY=1 sent before `watch(pid:)` is not lost.
            if lines.contains("WATCHDOG=1") {
                state.isReady = true
                state.hasPinged = true
                state.lastPing = .now
            }
        }
    }
}
