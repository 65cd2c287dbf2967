import Foundation

/// What ``ConnectionBacklog`` and ``SubscriberBacklog`` ask of a connection's descriptor: the calls of ``ConnectionSocket``
/// in the service, a table in tests.
protocol ConnectionProbe {
    /// The socket's identity at `descriptor`, `nil` when it is not an open socket.
    func identity(of descriptor: Int32) -> ConnectionSocket.Identity?
    /// The bytes the kernel holds and has not sent, `nil` when it is not a TCP socket.
    func bytesNotSent(_ descriptor: Int32) -> UInt32?
    /// Shuts the connection down if `descriptor` is still the socket `identity`; whether it did.
    func cut(_ descriptor: Int32, ifStill identity: ConnectionSocket.Identity) -> Bool
}

/// The system's answers (`fstat(2)`, `TCP_INFO`, `shutdown(2)`).
struct SystemConnectionProbe: ConnectionProbe {
    func identity(of descriptor: Int32) -> ConnectionSocket.Identity? { ConnectionSocket.identity(of: descriptor) }
    func bytesNotSent(_ descriptor: Int32) -> UInt32? { ConnectionSocket.bytesNotSent(descriptor) }
    func cut(_ descriptor: Int32, ifStill identity: ConnectionSocket.Identity) -> Bool {
        ConnectionSocket.cut(descriptor, ifStill: identity)
    }
}

/// The bytes every TCP connection of one ROUTER has not taken yet, estimated, and the bound on
/// all of them together (issue 37 item 1): the control replies (`limits.controlQueueBytesTotal`)
/// and the batches handed to workers (`limits.dispatchQueueBytesTotal`), one book each.
///
/// libzmq bounds one connection's queue in messages (a send high-water mark) and counts nothing
/// across pipes. So the coordinator estimates, as the forwarder does for subscribers
/// (``SubscriberBacklog``): libzmq's I/O thread writes a connection's messages into the socket
/// until the kernel refuses more, so messages wait in libzmq only while the kernel's send queue
/// is full, and then it has bytes it has not sent (`tcp_info.tcpi_notsent_bytes` > 0: the
/// peer's receive window is closed). Every ``sampleIntervalSeconds`` (sooner once a quarter of
/// the bound was handed over since) the coordinator samples each connection that was sent
/// messages since it last caught up: one with nothing unsent has caught up; one with bytes
/// unsent may hold every byte handed to it since it last caught up, at most
/// `perConnectionBytes`.
///
/// The peer's acknowledged count (`tcpi_bytes_acked`) is not used: libzmq answers every ZMTP
/// PING with a PONG, so a peer can have the coordinator send (and acknowledge) bytes that are
/// no reply, and a count credited with them let a fresh attacker's unread pages pass for read.
///
/// Past the bound, the connections behind longest are cut off (``ConnectionSocket/cut(_:ifStill:)``),
/// the larger first among equals, until the rest fit: libzmq ends each one's session and frees
/// its pipe. A peer that reads catches up between samples, so it is found behind, if ever,
/// later than one that stopped reading, and is not the one cut; cut clients reconnect and
/// send again (same `requestId`, applied once), cut workers reconnect and their firings come
/// back when their leases run out.
///
/// One connection: the control ROUTER's high-water mark bounds it in replies of at most
/// `maxReplyBytes` (``UnreadReplies``). Dispatch batches have no such size, so the dispatch
/// book also holds one connection to `perConnectionBytes` (``mayHandOver(to:at:probe:)``): a
/// batch goes to a worker only while the bytes handed to it since it last caught up are below
/// the bound, so it holds at most the bound plus one batch.
///
/// `ipc://` and `inproc://` connections have no unsent count: they are bounded per connection
/// in messages only (local peers, behind the socket file's permissions).
///
/// Pure bookkeeping: the system calls come through a ``ConnectionProbe``.
struct ConnectionBacklog {
    /// One TCP connection that sent a message (a request, a worker's announcement).
    struct Connection: Equatable {
        /// Its descriptor (libzmq's `__fd`) and the socket's identity when first seen.
        var descriptor: Int32
        var socket: ConnectionSocket.Identity
        /// Bytes handed to libzmq since it was first seen.
        var handedOver: UInt64 = 0
        /// `handedOver` and the instant (monotonic seconds) when it was last found caught up
        /// (or first seen).
        var caughtUp: UInt64 = 0
        var caughtUpAt: Double
        /// Whether the last sample found bytes unsent.
        var isBehind = false
        /// When (monotonic seconds) its last message was read.
        var lastReceived: Double
    }

    /// The TCP connections that sent a message, by their routing (the reply routing of a
    /// control request, `[routing id]` on dispatch).
    private(set) var connections: [[Data]: Connection] = [:]
    /// The connections sent messages since they last caught up: the ones a sample reads.
    private(set) var active: Set<[Data]> = []
    /// The bound on all connections' untaken bytes together (`limits.controlQueueBytesTotal`,
    /// `limits.dispatchQueueBytesTotal`).
    let totalBytes: UInt64
    /// The most one connection can hold (`limits.controlQueueBytesPerConnection`,
    /// `limits.dispatchQueueBytesPerConnection`).
    let perConnectionBytes: UInt64
    /// The most the estimate counts for one connection: ``perConnectionBytes`` where a
    /// high-water mark holds each connection to it (control), unbounded where
    /// ``mayHandOver(to:at:probe:)`` does (dispatch: the last batch may pass it).
    let estimateCap: UInt64
    /// The most connections tracked; past it the ones not active that sent least recently go first.
    let maxTracked: Int
    /// Seconds after which a connection not active that sends nothing is forgotten.
    let forgetAfterSeconds: Double
    /// Seconds between two samples.
    let sampleIntervalSeconds: Double
    /// The estimate at the last sample, all connections together
    /// (`chime_control_reply_backlog_bytes`, `chime_dispatch_backlog_bytes`).
    private(set) var estimatedTotal: UInt64 = 0
    /// Bytes handed over since the last sample.
    private(set) var handedOverSinceSample: UInt64 = 0
    /// When (monotonic seconds) the last sample ran.
    private(set) var sampledAt = -Double.infinity
    /// Connections cut off since start (`chime_control_connections_dropped_total`,
    /// `chime_dispatch_connections_dropped_total`).
    private(set) var connectionsCut = 0
    /// Hand-overs refused since start because the connection held `perConnectionBytes`
    /// (``mayHandOver(to:at:probe:)``, `chime_dispatch_batches_held_total`).
    private(set) var handOversRefused = 0

    /// An empty book.
    /// - Parameters:
    ///   - totalBytes: the bound on all connections' untaken bytes.
    ///   - perConnectionBytes: the most one connection can hold.
    ///   - holdsToBound: whether the caller asks ``mayHandOver(to:at:probe:)`` before each
    ///     message (dispatch) rather than relying on a high-water mark (control).
    ///   - maxTracked: the most connections kept (at least 1).
    ///   - forgetAfterSeconds: seconds after which an idle connection is forgotten.
    ///   - sampleIntervalSeconds: seconds between two samples.
    init(
        totalBytes: Int, perConnectionBytes: Int = Int.max, holdsToBound: Bool = false, maxTracked: Int = 65_536,
        forgetAfterSeconds: Double = 60, sampleIntervalSeconds: Double = 0.1
    ) {
        self.totalBytes = UInt64(max(0, totalBytes))
        self.perConnectionBytes = UInt64(max(0, perConnectionBytes))
        self.estimateCap = holdsToBound ? UInt64.max : self.perConnectionBytes
        self.maxTracked = max(1, maxTracked)
        self.forgetAfterSeconds = forgetAfterSeconds
        self.sampleIntervalSeconds = sampleIntervalSeconds
    }

    /// What a message costs beyond its body in the estimate (its routing and delimiter frames'
    /// headers, as libzmq frames them on the wire).
    static let messageOverheadBytes: UInt64 = 16

    /// A message was read from `routing` on `descriptor` (`nil`: an `inproc://` peer, not
    /// tracked). A connection first seen, or seen on another descriptor than before (the
    /// routing id a peer chose, on a new connection), is recorded when it is a TCP socket.
    mutating func onReceived(from routing: [Data], descriptor: Int32?, at now: Double, probe: some ConnectionProbe) {
        guard let descriptor, descriptor >= 0 else { return }
        if let known = connections[routing], known.descriptor == descriptor {
            connections[routing]?.lastReceived = now
            return
        }
        // Only TCP sockets have an unsent count; the rest stay bounded per connection.
        guard let socket = probe.identity(of: descriptor), probe.bytesNotSent(descriptor) != nil else {
            forget(routing)
            return
        }
        if connections[routing] == nil, connections.count >= maxTracked { makeRoom() }
        connections[routing] = Connection(descriptor: descriptor, socket: socket, caughtUpAt: now, lastReceived: now)
        active.remove(routing)
    }

    /// A message of `bytes` to `routing` was handed to libzmq.
    mutating func onSent(to routing: [Data], bytes: Int) {
        guard let known = connections[routing] else { return }
        let counted = UInt64(max(0, bytes)) &+ Self.messageOverheadBytes
        connections[routing]?.handedOver = known.handedOver &+ counted
        handedOverSinceSample &+= counted
        active.insert(routing)
    }

    /// The connection at `routing` is gone (libzmq said `EHOSTUNREACH`).
    mutating func onDisconnected(_ routing: [Data]) {
        forget(routing)
    }

    /// Whether a sample is due at `now`: some connection was sent messages since it caught up,
    /// and the last sample ran ``sampleIntervalSeconds`` ago or a quarter of the bound was
    /// handed over since (one loop turn can send 1,000 pages).
    func isSampleDue(at now: Double) -> Bool {
        !active.isEmpty && (now - sampledAt >= sampleIntervalSeconds || handedOverSinceSample >= totalBytes / 4)
    }

    /// Whether a message may be handed to `routing` now (the dispatch book): yes unless the
    /// bytes handed to it since it last caught up reached ``perConnectionBytes``; then its
    /// unsent bytes are read at once, and it may when the kernel has sent everything (it caught
    /// up since the last sample). An untracked connection (`ipc://`, not heard from) may.
    /// A refusal is counted in ``handOversRefused``.
    mutating func mayHandOver(to routing: [Data], at now: Double, probe: some ConnectionProbe) -> Bool {
        guard var known = connections[routing], known.handedOver &- known.caughtUp >= perConnectionBytes else { return true }
        if probe.bytesNotSent(known.descriptor) == 0 {
            known.isBehind = false
            known.caughtUp = known.handedOver
            known.caughtUpAt = now
            connections[routing] = known
            active.remove(routing)
            return true
        }
        handOversRefused += 1
        return false
    }

    /// The most `connection` can hold now: nothing when it has caught up, else what it was
    /// handed since, at most ``estimateCap``.
    func estimate(_ connection: Connection) -> UInt64 {
        connection.isBehind ? min(connection.handedOver &- connection.caughtUp, estimateCap) : 0
    }

    /// Samples the active connections' unsent bytes, then cuts off the ones behind longest
    /// (the larger first among equals) until the rest fit within ``totalBytes``.
    /// - Returns: the routings of the connections cut off, with the bytes each was estimated to hold.
    mutating func sample(at now: Double, probe: some ConnectionProbe) -> [(routing: [Data], bytes: UInt64)] {
        sampledAt = now
        handedOverSinceSample = 0
        var total: UInt64 = 0
        var behind: [(routing: [Data], since: Double, bytes: UInt64)] = []
        for routing in active {
            guard var known = connections[routing] else {
                active.remove(routing)
                continue
            }
            guard let notSent = probe.bytesNotSent(known.descriptor) else {
                // Closed (its EHOSTUNREACH or a new message says so later): nothing to count.
                forget(routing)
                continue
            }
            if notSent == 0 {
                known.isBehind = false
                known.caughtUp = known.handedOver
                known.caughtUpAt = now
                connections[routing] = known
                active.remove(routing)
                continue
            }
            known.isBehind = true
            connections[routing] = known
            let bytes = estimate(known)
            total &+= bytes
            behind.append((routing, known.caughtUpAt, bytes))
        }
        var cut: [(routing: [Data], bytes: UInt64)] = []
        if total > totalBytes {
            let order = behind.sorted { $0.since != $1.since ? $0.since < $1.since : $0.bytes > $1.bytes }
            for (routing, _, bytes) in order {
                guard total > totalBytes else { break }
                guard let known = connections[routing] else { continue }
                forget(routing)
                total -= bytes
                if probe.cut(known.descriptor, ifStill: known.socket) {
                    connectionsCut += 1
                    cut.append((routing, bytes))
                }
            }
        }
        estimatedTotal = total
        return cut
    }

    /// Forgets the connections not active that sent no message for ``forgetAfterSeconds``
    /// (libzmq does not say when a peer goes).
    mutating func forgetIdle(at now: Double) {
        connections = connections.filter { active.contains($0.key) || now - $0.value.lastReceived < forgetAfterSeconds }
    }

    private mutating func forget(_ routing: [Data]) {
        connections[routing] = nil
        active.remove(routing)
    }

    /// At ``maxTracked``: forgets an eighth of the connections, those not active that sent
    /// least recently first, so each new connection costs O(log n) amortized.
    private mutating func makeRoom() {
        let victims = connections.sorted { left, right in
            let leftIdle = !active.contains(left.key), rightIdle = !active.contains(right.key)
            if leftIdle != rightIdle { return leftIdle }
            return left.value.lastReceived < right.value.lastReceived
        }.prefix(max(1, maxTracked / 8))
        for (routing, _) in victims { forget(routing) }
    }
}
