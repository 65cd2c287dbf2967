import Foundation

/// What subscribers that fall behind hold in the forwarder's XPUB, estimated, and the bound on
/// all of them together (`events.subscriberQueueBytesTotal`, issue 37 item 1).
///
/// One subscriber's queue is bounded by the XPUB's high-water mark (`events.subscriberQueueBytes`),
/// but every further subscriber could hold as much again, and libzmq counts nothing across
/// pipes. Nor can the forwarder count what each pipe received without matching every event
/// against every connection's topics. What it can see is the kernel: libzmq's I/O thread
/// writes a connection's queue into the socket until the kernel refuses more, so a pipe holds
/// events only while the kernel's send queue is full, and then that queue has bytes it has
/// not sent (`tcp_info.tcpi_notsent_bytes` > 0: the peer's receive window is closed). The
/// forwarder samples each subscriber's descriptor every ``sampleIntervalSeconds``; from the
/// sample before the one that found it behind, its queue can hold at most the events
/// forwarded since (their bytes, plus ``frameOverheadBytes`` each), and never more than the
/// per-subscriber bound. A sample that finds nothing unsent clears it.
///
/// Past the total, the subscribers behind longest (the larger first among equals) are cut
/// off (``ConnectionSocket/cut(_:ifStill:)``) until the rest fit; libzmq frees each one's
/// queue, and the subscriber reconnects and catches up with `events`. The estimate never
/// counts low for a subscriber that stopped reading (an event it was not sent is counted
/// anyway), so the bound holds; it can count high, so the default leaves room for four
/// subscribers full to the per-subscriber bound.
///
/// Not measured: `ipc://` subscribers (a Unix socket has no such count; local peers behind the
/// socket file's permissions) and `inproc://` ones (this process's own). A subscriber behind a
/// link whose bandwidth-delay product is larger than its send buffer can hold events while the
/// kernel has sent everything it holds; it is counted only while bytes stay unsent.
///
/// Pure bookkeeping: the system calls come through a ``ConnectionProbe``.
struct SubscriberBacklog {
    /// Events forwarded so far, in bytes and messages.
    struct Forwarded: Equatable {
        var bytes: UInt64 = 0
        var messages: UInt64 = 0
    }

    /// One subscriber connection the XPUB accepted.
    struct Connection: Equatable {
        /// The socket's identity when accepted (`nil`: it was gone already; never cut).
        var socket: ConnectionSocket.Identity?
        /// What had been forwarded when it may have begun to fall behind; `nil`: it keeps up.
        var behindSince: Forwarded?
    }

    /// The XPUB's connections, by descriptor.
    private(set) var connections: [Int32: Connection] = [:]
    /// The bound on all subscribers' estimated queues together.
    let totalBytes: UInt64
    /// The most one subscriber's queue holds (its high-water mark × the largest event with
    /// its frames' bookkeeping).
    let perConnectionBytes: UInt64
    /// Seconds between two samples.
    let sampleIntervalSeconds: Double
    /// What was forwarded so far.
    private(set) var forwarded = Forwarded()
    /// What had been forwarded at the last sample.
    private var forwardedAtSample = Forwarded()
    /// When (monotonic seconds) the last sample ran.
    private(set) var sampledAt = -Double.infinity
    /// The estimate at the last sample, all subscribers together (`chime_subscriber_backlog_bytes`).
    private(set) var estimatedTotal: UInt64 = 0

    /// What a queued event costs beyond its frames' bytes (as `events.subscriberQueueBytes` counts).
    static let frameOverheadBytes: UInt64 = 128

    /// An empty book.
    /// - Parameters:
    ///   - totalBytes: the bound on all subscribers' queues together.
    ///   - perConnectionBytes: the most one subscriber's queue holds.
    ///   - sampleIntervalSeconds: seconds between two samples.
    init(totalBytes: Int, perConnectionBytes: Int, sampleIntervalSeconds: Double = 0.1) {
        self.totalBytes = UInt64(max(0, totalBytes))
        self.perConnectionBytes = UInt64(max(0, perConnectionBytes))
        self.sampleIntervalSeconds = sampleIntervalSeconds
    }

    /// An event of `bytes` (all its frames) was forwarded to the XPUB.
    mutating func onForwarded(bytes: Int) {
        forwarded.bytes &+= UInt64(max(0, bytes))
        forwarded.messages &+= 1
    }

    /// The XPUB accepted a connection on `descriptor`, the socket `socket` (`fstat` at once).
    mutating func onAccepted(_ descriptor: Int32, socket: ConnectionSocket.Identity?) {
        connections[descriptor] = Connection(socket: socket)
    }

    /// The connection on `descriptor` ended.
    mutating func onDisconnected(_ descriptor: Int32) {
        connections[descriptor] = nil
    }

    /// Whether a sample is due at `now` (monotonic seconds).
    func isSampleDue(at now: Double) -> Bool {
        !connections.isEmpty && now - sampledAt >= sampleIntervalSeconds
    }

    /// The most `connection`'s queue can hold now.
    func estimate(_ connection: Connection) -> UInt64 {
        guard let since = connection.behindSince else { return 0 }
        let messages = forwarded.messages &- since.messages
        let bytes = (forwarded.bytes &- since.bytes) &+ messages &* Self.frameOverheadBytes
        return min(bytes, perConnectionBytes)
    }

    /// Samples every connection's unsent bytes, then cuts off the ones with the largest
    /// estimate until the rest fit within ``totalBytes``. A descriptor that is gone or now
    /// another socket is forgotten (its disconnect follows, or came already).
    /// - Returns: the descriptors cut off, with the estimate each had.
    mutating func sample(at now: Double, probe: some ConnectionProbe) -> [(descriptor: Int32, bytes: UInt64)] {
        sampledAt = now
        var total: UInt64 = 0
        var behind: [(descriptor: Int32, since: UInt64, bytes: UInt64)] = []
        for (descriptor, connection) in connections {
            guard let socket = connection.socket, probe.identity(of: descriptor) == socket else {
                connections[descriptor] = nil
                continue
            }
            guard let notSent = probe.bytesNotSent(descriptor), notSent > 0 else {
                if connection.behindSince != nil { connections[descriptor]?.behindSince = nil }
                continue
            }
            var updated = connection
            // It may have filled up any time since the last sample.
            if updated.behindSince == nil { updated.behindSince = forwardedAtSample }
            connections[descriptor] = updated
            let bytes = estimate(updated)
            total &+= bytes
            behind.append((descriptor, updated.behindSince?.messages ?? 0, bytes))
        }
        forwardedAtSample = forwarded
        var cut: [(descriptor: Int32, bytes: UInt64)] = []
        if total > totalBytes {
            // Behind longest first (the fewest events forwarded when it fell behind), then the
            // larger: estimates stop at the per-subscriber bound, so size alone would tie a
            // reader that lagged for one sample with subscribers stuck for minutes.
            let order = behind.sorted { $0.since != $1.since ? $0.since < $1.since : $0.bytes > $1.bytes }
            for (descriptor, _, bytes) in order {
                guard total > totalBytes else { break }
                guard let socket = connections[descriptor]?.socket else { continue }
                connections[descriptor] = nil
                total -= bytes
                if probe.cut(descriptor, ifStill: socket) { cut.append((descriptor, bytes)) }
            }
        }
        estimatedTotal = total
        return cut
    }
}
