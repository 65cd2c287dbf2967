internal import CMicroHTTPD
import Foundation
import Synchronization

/// Keeps the probes answerable whatever slow clients do: every open connection with the
/// time its current request began (its start, or the end of its previous request), so that
///
/// - a request's headers must arrive within ``HTTPServer/headerTimeoutSeconds`` of that time
///   (a deadline that does not restart with each byte, unlike libmicrohttpd's idle timeout:
///   a client trickling one header byte a second is closed all the same), and
/// - past ``HTTPServer/connectionLimit`` open connections, a new one closes the connection
///   that has waited longest for its request, so a `/healthz` probe always gets a slot.
///
/// Connections are closed with `shutdown(2)` on their socket: libmicrohttpd's thread for the
/// connection sees the error and cleans up as for any client that went away.
final class HTTPConnectionTracker: Sendable {
    private struct Open {
        var socket: Int32
        var requestBegan: ContinuousClock.Instant
        var isInHandler = false
        var isClosing = false
        /// The body read so far of a request that has one; `nil` once it passed the limit.
        var body: [UInt8]? = nil

        var isWaiting: Bool { !isInHandler && !isClosing }
    }

    private let open = Mutex<[UInt: Open]>([:])
    private let limit: Int
    private let headerTimeout: Duration
    private let stopped = DispatchSemaphore(value: 0)
    private let isStopping = Atomic<Bool>(false)

    init(limit: Int, headerTimeout: Duration) {
        self.limit = limit
        self.headerTimeout = headerTimeout
    }

    /// Connections closed for taking too long over their headers or to make room, so far.
    let closedSlow = Atomic<Int>(0)

    /// Starts the thread that enforces the header deadline (twice a second).
    func startWatchdog() {
        let thread = Thread { [self] in
            while !isStopping.load(ordering: .acquiring) {
                _ = stopped.wait(timeout: .now() + .milliseconds(250))
                closeOverdue(at: .now)
            }
        }
        thread.name = "chime-http-deadlines"
        thread.start()
    }

    func stop() {
        isStopping.store(true, ordering: .releasing)
        stopped.signal()
    }

    func connectionStarted(_ connection: OpaquePointer) {
        let socket = chime_mhd_connection_fd(connection)
        let now = ContinuousClock.now
        open.withLock { open in
            open[UInt(bitPattern: connection)] = Open(socket: socket, requestBegan: now)
            guard open.values.filter({ !$0.isClosing }).count > limit else { return }
            let waiting = open.filter { $0.value.isWaiting && $0.key != UInt(bitPattern: connection) }
            guard let oldest = waiting.min(by: { $0.value.requestBegan < $1.value.requestBegan }) else { return }
            close(oldest.key, in: &open)
        }
    }

    func connectionClosed(_ connection: OpaquePointer) {
        _ = open.withLock { $0.removeValue(forKey: UInt(bitPattern: connection)) }
    }

    /// The headers of a request are in: the handler runs now.
    func requestHeadersArrived(_ connection: OpaquePointer) {
        open.withLock { $0[UInt(bitPattern: connection)]?.isInHandler = true }
    }

    /// The response is queued: the next request's deadline starts now.
    func requestAnswered(_ connection: OpaquePointer) {
        let now = ContinuousClock.now
        open.withLock { open in
            open[UInt(bitPattern: connection)]?.isInHandler = false
            open[UInt(bitPattern: connection)]?.requestBegan = now
        }
    }

    /// A request with a body began on `connection`: its bytes are kept from now on.
    func beginBody(_ connection: OpaquePointer) {
        open.withLock { $0[UInt(bitPattern: connection)]?.body = [] }
    }

    /// Adds a chunk of the body; past `limit` bytes in all the body is dropped (and stays so).
    func appendBody(_ connection: OpaquePointer, _ chunk: UnsafeRawBufferPointer, limit: Int) {
        open.withLock { open in
            let key = UInt(bitPattern: connection)
            guard var body = open[key]?.body else { return }
            open[key]?.body = nil
            guard body.count + chunk.count <= limit else { return }
            body.append(contentsOf: chunk)
            open[key]?.body = body
        }
    }

    /// The whole body of the request on `connection`, or `nil` when it passed the limit.
    func takeBody(_ connection: OpaquePointer) -> [UInt8]? {
        open.withLock { open in
            let key = UInt(bitPattern: connection)
            defer { open[key]?.body = nil }
            return open[key]?.body
        }
    }

    private func closeOverdue(at now: ContinuousClock.Instant) {
        open.withLock { open in
            for (key, connection) in open where connection.isWaiting && now - connection.requestBegan > headerTimeout {
                close(key, in: &open)
            }
        }
    }

    /// Shuts the connection's socket down, under the lock: libmicrohttpd reports a connection
    /// closed (``connectionClosed(_:)`` takes the lock) before it closes the descriptor, so
    /// the descriptor cannot have been reused for another connection meanwhile.
    private func close(_ key: UInt, in open: inout [UInt: Open]) {
        guard let connection = open[key], connection.socket >= 0 else { return }
        open[key]?.isClosing = true
        closedSlow.add(1, ordering: .relaxed)
        _ = shutdown(connection.socket, Int32(SHUT_RDWR))
    }
}

/// libmicrohttpd's connection notification (`MHD_OPTION_NOTIFY_CONNECTION`): a file-level
/// function, as the request callback.
func connectionNotification(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    code: MHD_ConnectionNotificationCode
) {
    guard let context, let connection else { return }
    let tracker = Unmanaged<HTTPConnectionTracker>.fromOpaque(context).takeUnretainedValue()
    // MHD_CONNECTION_NOTIFY_STARTED is 0, MHD_CONNECTION_NOTIFY_CLOSED 1.
    if code.rawValue == 0 {
        tracker.connectionStarted(connection)
    } else {
        tracker.connectionClosed(connection)
    }
}
