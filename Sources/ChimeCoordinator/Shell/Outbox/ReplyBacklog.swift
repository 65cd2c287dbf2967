import Foundation

/// What ``ReplyBacklog`` and ``SubscriberBacklog`` ask of a connection's descriptor: the calls of ``ConnectionSocket``
/// in the service, a table in tests.
protocol ConnectionProbe {
    /// The socket's identity at `descriptor`, `nil` when it is not an open socket.
    func identity(of descriptor: Int32) -> ConnectionSocket.Identity?
    /// The bytes of the stream the peer has acknowledged, `nil` when it is not a TCP socket.
    func bytesAcknowledged(_ descriptor: Int32) -> UInt64?
    /// The bytes the kernel holds and has not sent, `nil` when it is not a TCP socket.
    func bytesNotSent(_ descriptor: Int32) -> UInt32?
    /// Shuts the connection down if `descriptor` is still the socket `identity`; whether it did.
    func cut(_ descriptor: Int32, ifStill identity: ConnectionSocket.Identity) -> Bool
}

/// The system's answers (`fstat(2)`, `TCP_INFO`, `shutdown(2)`).
struct SystemConnectionProbe: ConnectionProbe {
    func identity(of descriptor: Int32) -> ConnectionSocket.Identity? { ConnectionSocket.identity(of: descriptor) }
    func bytesAcknowledged(_ descriptor: Int32) -> UInt64? { ConnectionSocket.bytesAcknowledged(descriptor) }
    func bytesNotSent(_ descriptor: Int32) -> UInt32? { ConnectionSocket.bytesNotSent(descriptor) }
    func cut(_ descriptor: Int32, ifStill identity: ConnectionSocket.Identity) -> Bool {
        ConnectionSocket.cut(descriptor, ifStill: identity)
    }
}

/// The replies every control connection has not taken yet, in bytes, and the bound on all of
/// them together (`limits.controlQueueBytesTotal`, issue 37 item 1).
///
/// One connection's unread replies are bounded by the control ROUTER's high-water mark
/// (``UnreadReplies``), but every further connection could hold as much again, and libzmq
/// counts nothing across pipes. So the coordinator measures: for each TCP connection it counts
/// the reply bytes it handed to libzmq, and the kernel says how many bytes of the stream the
/// peer has acknowledged (`tcp_info.tcpi_bytes_acked`, read at the connection's first request
/// and again at each measurement). The difference is what waits in libzmq's pipe, its
/// encoder and the kernel's send buffer, all memory a reader that stops reading leaves
/// behind. ZMTP framing (2–9 bytes a frame, 33 more with CURVE) and heartbeats make the
/// peer acknowledge a little more than was counted, so the measure errs low by tens of bytes
/// a message, and a measure of 0 starts the count afresh so that error does not add up.
///
/// Measuring costs two system calls per connection that was sent replies, so it runs only when
/// the bytes measured last plus those handed over since could pass the bound, at most every
/// ``measureIntervalSeconds`` unless a quarter of the bound was handed over since (the shell
/// asks after every reply). Past the bound, the connections holding the most are cut off
/// (``ConnectionSocket/cut(_:ifStill:)``), the largest first, until the rest fit: libzmq ends
/// each one's session and frees its pipe. A reader that keeps up holds next to nothing, so the
/// ones cut are those that stopped reading; their clients reconnect and send again (same
/// `requestId`, applied once).
///
/// `ipc://` and `inproc://` connections have no acknowledged count: they are bounded per
/// connection only (local peers, behind the socket file's permissions).
///
/// Pure bookkeeping: the system calls come through a ``ConnectionProbe``.
struct ReplyBacklog {
    /// One connection that sent a request.
    struct Connection: Equatable {
        /// Its descriptor (libzmq's `__fd`) and the socket's identity when first seen.
        var descriptor: Int32
        var socket: ConnectionSocket.Identity?
        /// The acknowledged bytes when the count began (`nil`: not TCP, never measured).
        var acknowledgedBase: UInt64?
        /// Reply bytes handed to libzmq since the count began.
        var handedOver: UInt64 = 0
        /// Unread bytes at the last measurement.
        var measured: UInt64 = 0
        /// When (monotonic seconds) its last request was read.
        var lastRequest: Double
    }

    /// The connections that sent a request, by their reply routing.
    private(set) var connections: [[Data]: Connection] = [:]
    /// The bound on all connections' unread reply bytes together (`limits.controlQueueBytesTotal`).
    let totalBytes: UInt64
    /// The most connections tracked; past it the ones that asked least recently and hold
    /// nothing are forgotten first.
    let maxTracked: Int
    /// Seconds after which a connection that holds nothing and asks nothing is forgotten.
    let forgetAfterSeconds: Double
    /// The shortest time between two measurements, in seconds.
    let measureIntervalSeconds: Double
    /// The unread bytes at the last measurement, all connections together
    /// (`chime_control_reply_backlog_bytes`).
    private(set) var measuredTotal: UInt64 = 0
    /// Reply bytes handed over since the last measurement.
    private(set) var handedOverSinceMeasure: UInt64 = 0
    /// When (monotonic seconds) the last measurement ran.
    private(set) var measuredAt = -Double.infinity
    /// Connections cut off since start (`chime_control_connections_dropped_total`).
    private(set) var connectionsCut = 0

    /// An empty book.
    /// - Parameters:
    ///   - totalBytes: the bound on all connections' unread reply bytes.
    ///   - maxTracked: the most connections kept (at least 1).
    ///   - forgetAfterSeconds: seconds after which an idle connection holding nothing is forgotten.
    ///   - measureIntervalSeconds: the shortest time between two measurements.
    init(totalBytes: Int, maxTracked: Int = 65_536, forgetAfterSeconds: Double = 60, measureIntervalSeconds: Double = 0.01) {
        self.totalBytes = UInt64(max(0, totalBytes))
        self.maxTracked = max(1, maxTracked)
        self.forgetAfterSeconds = forgetAfterSeconds
        self.measureIntervalSeconds = measureIntervalSeconds
    }

    /// What a reply costs beyond its body in the estimate (its routing and delimiter frames'
    /// headers, as libzmq frames them on the wire).
    static let replyOverheadBytes: UInt64 = 16

    /// A request was read from `routing` on `descriptor` (`nil`: an `inproc://` peer, not
    /// tracked). A connection first seen, or seen on another descriptor than before (the
    /// routing id a client chose, on a new connection), starts its count here.
    mutating func onRequest(from routing: [Data], descriptor: Int32?, at now: Double, probe: some ConnectionProbe) {
        guard let descriptor, descriptor >= 0 else { return }
        if let known = connections[routing], known.descriptor == descriptor {
            connections[routing]?.lastRequest = now
            return
        }
        if connections[routing] == nil, connections.count >= maxTracked { makeRoom(at: now) }
        let socket = probe.identity(of: descriptor)
        connections[routing] = Connection(
            descriptor: descriptor, socket: socket,
            acknowledgedBase: socket == nil ? nil : probe.bytesAcknowledged(descriptor), lastRequest: now)
    }

    /// A reply of `bytes` to `routing` was handed to libzmq.
    mutating func onReplySent(to routing: [Data], bytes: Int) {
        guard let known = connections[routing], known.acknowledgedBase != nil else { return }
        let counted = UInt64(max(0, bytes)) &+ Self.replyOverheadBytes
        connections[routing]?.handedOver = known.handedOver &+ counted
        handedOverSinceMeasure &+= counted
    }

    /// The connection at `routing` is gone (libzmq said `EHOSTUNREACH`).
    mutating func onDisconnected(_ routing: [Data]) {
        guard let gone = connections.removeValue(forKey: routing) else { return }
        measuredTotal -= min(measuredTotal, gone.measured)
    }

    /// Whether a measurement is due at `now`: what was measured plus what was handed over
    /// since could pass the bound, and the last one ran ``measureIntervalSeconds`` ago or a
    /// quarter of the bound was handed over since (one loop turn can send 1,000 pages).
    func isMeasureDue(at now: Double) -> Bool {
        measuredTotal &+ handedOverSinceMeasure > totalBytes
            && (now - measuredAt >= measureIntervalSeconds || handedOverSinceMeasure >= totalBytes / 4)
    }

    /// Measures every connection sent replies since its count began and cuts off the ones
    /// holding the most, the largest first, until the rest fit within ``totalBytes``.
    /// Connections whose descriptor is gone or now another socket are forgotten.
    /// - Returns: the routings of the connections cut off, with the bytes each held.
    mutating func measure(at now: Double, probe: some ConnectionProbe) -> [(routing: [Data], bytes: UInt64)] {
        measuredAt = now
        handedOverSinceMeasure = 0
        var total: UInt64 = 0
        var holding: [([Data], UInt64)] = []
        for (routing, known) in connections {
            guard let base = known.acknowledgedBase, known.handedOver > 0 || known.measured > 0 else { continue }
            guard let socket = known.socket, probe.identity(of: known.descriptor) == socket,
                let acknowledged = probe.bytesAcknowledged(known.descriptor)
            else {
                connections[routing] = nil
                continue
            }
            let taken = acknowledged >= base ? acknowledged - base : 0
            if taken >= known.handedOver {
                // Everything was taken (and framing besides): the count starts again here.
                connections[routing]?.acknowledgedBase = acknowledged
                connections[routing]?.handedOver = 0
                connections[routing]?.measured = 0
            } else {
                let unread = known.handedOver - taken
                connections[routing]?.measured = unread
                total &+= unread
                holding.append((routing, unread))
            }
        }
        var cut: [(routing: [Data], bytes: UInt64)] = []
        if total > totalBytes {
            for (routing, bytes) in holding.sorted(by: { $0.1 > $1.1 }) {
                guard total > totalBytes else { break }
                guard let known = connections[routing], let socket = known.socket else { continue }
                connections[routing] = nil
                total -= bytes
                if probe.cut(known.descriptor, ifStill: socket) {
                    connectionsCut += 1
                    cut.append((routing, bytes))
                }
            }
        }
        measuredTotal = total
        return cut
    }

    /// Forgets the connections that hold nothing measured and sent no request for
    /// ``forgetAfterSeconds`` (libzmq does not say when a peer goes).
    mutating func forgetIdle(at now: Double) {
        connections = connections.filter { $0.value.handedOver > 0 || now - $0.value.lastRequest < forgetAfterSeconds }
    }

    /// At ``maxTracked``: forgets an eighth of the connections, those holding nothing that
    /// asked least recently first (then the rest by the same age), so each new connection
    /// costs O(log n) amortized.
    private mutating func makeRoom(at now: Double) {
        let victims = connections.sorted { left, right in
            let leftIdle = left.value.handedOver == 0, rightIdle = right.value.handedOver == 0
            if leftIdle != rightIdle { return leftIdle }
            return left.value.lastRequest < right.value.lastRequest
        }.prefix(max(1, maxTracked / 8))
        for (routing, known) in victims {
            connections[routing] = nil
            measuredTotal -= min(measuredTotal, known.measured)
        }
    }
}
