import Foundation

/// The forwarder's count of what its XPUB holds: every subscriber connection's topics (as
/// libzmq keeps them: a set per connection, so a repeated subscribe costs nothing and an
/// unsubscribe of a topic not held changes nothing), how many connections hold each topic,
/// and per peer (a CURVE key over all its connections; without keys each connection is a peer
/// of its own, see ``SubscriberPeer``) the subscriptions and topic bytes. A pure value: the
/// forwarder's thread feeds it the XPUB's (un)subscription messages (`ZMQ_XPUB_VERBOSER`) and
/// the monitor's disconnects, and forwards to the publishers only the changes it returns (a
/// topic's first holder and its last), as a non-verbose XPUB would. A peer past a bound is
/// dropped (``drop(peer:)``): its connections leave the book at once.
///
/// A connection's messages can be read after its disconnect: libzmq moves them into the
/// XPUB's queue before the socket learns the pipe ended, and the monitor reports the
/// disconnect from the I/O thread at once. So a connection that was dropped or disconnected is
/// *ended* and what arrives from it is ignored: one with a ZAP serial (``ConnectionID``) for
/// good, a bare descriptor until the monitor reports a connection accepted on it again
/// (``accepted(descriptor:)``, which precedes every message of that connection). A serial
/// never seen whose descriptor was disconnected since the ZAP handler gave it out is ended too
/// (``endSerials(on:through:)``).
struct SubscriptionBook: Sendable, Equatable {
    /// Which connection a message came from: its descriptor (libzmq's `__fd` metadata, also
    /// the value of the monitor's `accepted` and `disconnected` events) and the serial the
    /// coordinator's ZAP handler gave it (a `#<serial>` word in its `User-Id`), or
    /// ``SubscriptionBook/inProcess``.
    ///
    /// The serial tells connections apart that a descriptor cannot: libzmq can hand over a
    /// connection's messages after its descriptor was closed and given to a new connection.
    /// Without a ZAP handler (`inproc://` events) it is `nil` and the descriptor alone is used.
    struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
        /// The connection's descriptor; -1 in process.
        var descriptor: Int32
        /// The ZAP handler's serial for it; `nil` without one.
        var serial: UInt64?

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.descriptor, lhs.serial ?? 0) < (rhs.descriptor, rhs.serial ?? 0)
        }

        var description: String { serial.map { "#\($0)" } ?? "fd \(descriptor)" }
    }

    /// Messages without a file descriptor (inproc subscribers of this process): counted as one
    /// connection whose topics are a multiset (libzmq's per-pipe sets cannot be told apart
    /// there), never cut off.
    static let inProcess = ConnectionID(descriptor: -1, serial: nil)
    /// The peer name of ``inProcess``.
    static let inProcessPeer = "inproc"
    /// Ended connections with a serial remembered at most (the oldest forgotten first): their
    /// stale messages come within milliseconds of the end.
    static let maxEndedRemembered = 65_536

    /// The bounds checked on each subscribe.
    struct Limits: Sendable, Equatable {
        /// Subscriptions one peer may hold over all its connections (`events.maxSubscriptionsPerPeer`).
        var maxPerPeer: Int
        /// Topic bytes all connections may hold together (`events.maxSubscriptionBytesTotal`).
        var maxTotalBytes: Int
    }

    /// What a subscribe did to the bounds.
    enum Verdict: Sendable, Equatable {
        /// Within both bounds.
        case within
        /// `peer` holds more than ``Limits/maxPerPeer`` subscriptions.
        case peerOverLimit(peer: String, subscriptions: Int)
        /// All connections hold more than ``Limits/maxTotalBytes``; `peer` is the one to cut
        /// off (`nil` when there is none): a CURVE key that subscribed past it names the key
        /// holding the most bytes; a connection without a key names itself (without keys the
        /// peer holding the most is any subscriber an attacker spreading over many
        /// connections chooses to outgrow); in process, the peer holding the most.
        case totalOverLimit(peer: String?, bytes: Int)
    }

    /// A change to pass on to the publishers: subscribe (`true`) or unsubscribe `topic`.
    struct Upstream: Sendable, Equatable {
        var subscribe: Bool
        var topic: Data
    }

    /// One peer's subscriptions over all its connections and their topic bytes.
    struct Usage: Sendable, Equatable {
        var subscriptions = 0
        var bytes = 0
    }

    private struct Connection: Sendable, Equatable {
        var peer: String
        /// The socket the descriptor named when the connection was first seen; `nil` for
        /// ``inProcess`` or when it was no socket by then.
        var socket: ConnectionSocket.Identity?
        /// Topic → how many times held (1 for network connections; a multiset for ``inProcess``).
        var topics: [Data: Int] = [:]
    }

    let limits: Limits
    private var connections: [ConnectionID: Connection] = [:]
    private var holders: [Data: Int] = [:]
    /// Connections dropped or disconnected: their (stale) subscribes are ignored. One without
    /// a serial (a bare descriptor) until a connection is accepted on the descriptor again;
    /// one with a serial for good (the oldest of ``maxEndedRemembered`` forgotten first).
    private var ended: Set<ConnectionID> = []
    private var endedOrder: [ConnectionID] = []
    private var endedHead = 0
    /// Per descriptor, the highest serial known to belong to a connection that ended on it
    /// (``endSerials(on:through:)``): a serial up to it without a record is stale, so a
    /// connection whose disconnect is read before its first subscription leaves no record.
    private var deadThrough: [Int32: UInt64] = [:]
    /// Per peer name.
    private(set) var usage: [String: Usage] = [:]
    /// Subscriptions held over every connection.
    private(set) var subscriptions = 0
    /// Topic bytes held over every connection.
    private(set) var bytes = 0

    init(limits: Limits) {
        self.limits = limits
    }

    /// The number of distinct topics some connection holds (what the publishers are subscribed to).
    var topicCount: Int { holders.count }

    /// Whether `connection` holds a record.
    func knows(_ connection: ConnectionID) -> Bool { connections[connection] != nil }

    /// Whether a subscribe under `connection` would start a record: the forwarder looks up
    /// the socket's identity only then (not for a known connection, nor for an ended one,
    /// whose stale messages can come by the thousand).
    func isNew(_ connection: ConnectionID) -> Bool {
        connection != Self.inProcess && connections[connection] == nil && !isStale(connection)
    }

    /// Whether what arrives from `connection` is ignored: it ended, or it has no record and a
    /// serial a disconnect on its descriptor covered.
    private func isStale(_ connection: ConnectionID) -> Bool {
        if ended.contains(connection) { return true }
        guard let serial = connection.serial, let dead = deadThrough[connection.descriptor] else { return false }
        return serial <= dead && connections[connection] == nil
    }

    /// Every connection on `descriptor` with a serial up to `serial` has ended (the forwarder
    /// read a disconnect on it, and no accept on it after, before the ZAP handler had given
    /// out more than `serial`: a connection on it since would have been accepted first).
    mutating func endSerials(on descriptor: Int32, through serial: UInt64) {
        deadThrough[descriptor] = max(deadThrough[descriptor] ?? 0, serial)
    }

    /// Records `topic` for `connection` of `peer`.
    /// - Parameter socket: the connection's socket identity, kept when the connection is new.
    /// - Returns: the changes for the publishers and the bounds' verdict. A connection id seen
    ///   before under another peer (a bare descriptor reused) drops the old connection first.
    ///   A subscribe of an ended connection changes nothing.
    mutating func subscribe(
        topic: Data, connection: ConnectionID, peer: String, socket: ConnectionSocket.Identity? = nil
    ) -> (upstream: [Upstream], verdict: Verdict) {
        guard !isStale(connection) else { return ([], .within) }
        var upstream: [Upstream] = []
        if let existing = connections[connection], existing.peer != peer {
            upstream += forget(connection)
        }
        var record = connections[connection] ?? Connection(peer: peer, socket: socket)
        let held = record.topics[topic, default: 0]
        guard held == 0 || connection == Self.inProcess else {
            connections[connection] = record
            return (upstream, .within)
        }
        record.topics[topic] = held + 1
        connections[connection] = record
        subscriptions += 1
        bytes += topic.count
        usage[peer, default: Usage()].subscriptions += 1
        usage[peer, default: Usage()].bytes += topic.count
        let holding = holders[topic, default: 0] + 1
        holders[topic] = holding
        if holding == 1 { upstream.append(Upstream(subscribe: true, topic: topic)) }
        return (upstream, verdict(for: peer))
    }

    /// Removes `topic` from `connection`; nothing when it does not hold it.
    /// - Returns: the change for the publishers (an unsubscribe when no connection holds it now).
    mutating func unsubscribe(topic: Data, connection: ConnectionID) -> [Upstream] {
        guard var record = connections[connection], let held = record.topics[topic] else { return [] }
        record.topics[topic] = held > 1 ? held - 1 : nil
        connections[connection] = record
        return release(topic: topic, peer: record.peer)
    }

    /// Forgets every connection on `descriptor` (the monitor reported its disconnect) and ends
    /// them: what still arrives from them is ignored (under a bare descriptor until
    /// ``accepted(_:)``).
    /// - Returns: the unsubscribes for the publishers (topics no connection holds now).
    mutating func disconnect(descriptor: Int32) -> [Upstream] {
        guard descriptor != Self.inProcess.descriptor else { return [] }
        var upstream: [Upstream] = []
        let bare = ConnectionID(descriptor: descriptor, serial: nil)
        for connection in connections.keys.filter({ $0.descriptor == descriptor }).sorted() + [bare] {
            upstream += end(connection)
        }
        return upstream
    }

    /// A connection was accepted on `descriptor` (the monitor's `accepted`): what arrives
    /// under the bare descriptor from now on is that connection's.
    mutating func accepted(descriptor: Int32) {
        ended.remove(ConnectionID(descriptor: descriptor, serial: nil))
    }

    private mutating func end(_ connection: ConnectionID) -> [Upstream] {
        if connection.serial != nil, ended.insert(connection).inserted {
            endedOrder.append(connection)
            if endedOrder.count - endedHead > Self.maxEndedRemembered {
                ended.remove(endedOrder[endedHead])
                endedHead += 1
            }
            if endedHead > 4096, endedHead * 2 > endedOrder.count {
                endedOrder.removeFirst(endedHead)
                endedHead = 0
            }
        } else if connection.serial == nil {
            ended.insert(connection)
        }
        return forget(connection)
    }

    private mutating func forget(_ connection: ConnectionID) -> [Upstream] {
        guard let record = connections.removeValue(forKey: connection) else { return [] }
        var upstream: [Upstream] = []
        for (topic, held) in record.topics.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            for _ in 0..<held { upstream += release(topic: topic, peer: record.peer) }
        }
        return upstream
    }

    /// Forgets every connection of `peer` (never ``inProcessPeer``'s) and ends them.
    /// - Returns: those connections, in ascending order, with the socket each had when first
    ///   seen (for ``ConnectionSocket/cut(_:ifStill:)``), and the unsubscribes for the publishers.
    mutating func drop(peer: String) -> (connections: [(id: ConnectionID, socket: ConnectionSocket.Identity?)], upstream: [Upstream]) {
        guard peer != Self.inProcessPeer else { return ([], []) }
        let dropped = connections.filter { $0.value.peer == peer }.map { (id: $0.key, socket: $0.value.socket) }
            .sorted { $0.id < $1.id }
        var upstream: [Upstream] = []
        for connection in dropped {
            upstream += end(connection.id)
        }
        return (dropped, upstream)
    }

    private mutating func release(topic: Data, peer: String) -> [Upstream] {
        subscriptions -= 1
        bytes -= topic.count
        if var peerUsage = usage[peer] {
            peerUsage.subscriptions -= 1
            peerUsage.bytes -= topic.count
            usage[peer] = peerUsage.subscriptions > 0 ? peerUsage : nil
        }
        let holding = holders[topic, default: 1] - 1
        holders[topic] = holding > 0 ? holding : nil
        return holding > 0 ? [] : [Upstream(subscribe: false, topic: topic)]
    }

    private func verdict(for peer: String) -> Verdict {
        let peerUsage = usage[peer, default: Usage()]
        if peer != Self.inProcessPeer, peerUsage.subscriptions > limits.maxPerPeer {
            return .peerOverLimit(peer: peer, subscriptions: peerUsage.subscriptions)
        }
        guard bytes > limits.maxTotalBytes else { return .within }
        if peer != Self.inProcessPeer, !SubscriberPeer.isKey(peer) { return .totalOverLimit(peer: peer, bytes: bytes) }
        let largest = usage.filter { $0.key != Self.inProcessPeer }
            .max { ($0.value.bytes, $1.key) < ($1.value.bytes, $0.key) }
        return .totalOverLimit(peer: largest?.key, bytes: bytes)
    }
}

/// One (un)subscription as the XPUB hands it over (`ZMQ_XPUB_VERBOSER`): one frame, a flag byte
/// (1 subscribe, 0 unsubscribe) and the topic, with the connection's metadata.
struct SubscriptionMessage: Sendable, Equatable {
    var subscribe: Bool
    var topic: Data
    var connection: SubscriptionBook.ConnectionID
    var peer: String

    /// Reads a message from the XPUB; `nil` for anything that is not one frame starting with
    /// 0 or 1 (a subscriber's own messages, which are dropped). Total: any bytes and any
    /// metadata strings give a value or `nil`.
    /// - Parameters:
    ///   - frames: the message's frames.
    ///   - userID: the connection's `User-Id` (`"<role> <key> #<serial>"` with CURVE,
    ///     `"#<serial>"` without; see ``SubscriberPeer/Tag``).
    ///   - address: its `Peer-Address`.
    ///   - fileDescriptor: its `__fd`, in decimal; without one (inproc, or libzmq's own
    ///     unsubscriptions for a connection that ended) the message is ``SubscriptionBook/inProcess``'s.
    init?(frames: [Data], userID: String?, address: String?, fileDescriptor: String?) {
        guard frames.count == 1, let flag = frames[0].first, flag <= 1 else { return nil }
        subscribe = flag == 1
        topic = Data(frames[0].dropFirst())
        if let fileDescriptor, let value = Int32(fileDescriptor), value >= 0 {
            let tag = SubscriberPeer.Tag(userID: userID)
            connection = SubscriptionBook.ConnectionID(descriptor: value, serial: tag.serial)
            peer = SubscriberPeer.name(tag: tag, address: address, connection: connection)
        } else {
            connection = SubscriptionBook.inProcess
            peer = SubscriptionBook.inProcessPeer
        }
    }
}
