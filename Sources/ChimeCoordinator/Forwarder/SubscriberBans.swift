import Foundation
import Synchronization
import ChimeSecurity
import ZeroMQ

/// Which subscriber peers may not connect to the events XPUB, and until when: a pure value.
///
/// A peer that went past a subscription bound is banned for ``Policy/initial``; each further
/// ban while the previous one is remembered (until ``Policy/maximum`` after it ended) doubles
/// the time, up to ``Policy/maximum``. At most ``Policy/maxEntries`` peers are remembered: the
/// one whose ban ends first is forgotten to make room.
struct BanBook: Sendable, Equatable {
    /// The back-off.
    struct Policy: Sendable, Equatable {
        /// The first ban's length (60 s).
        var initial: Duration = .seconds(60)
        /// The longest ban, and how long an ended ban is remembered for doubling (1 h).
        var maximum: Duration = .seconds(3600)
        /// Peers remembered at most.
        var maxEntries = 4096
    }

    private struct Entry: Sendable, Equatable {
        var until: ContinuousClock.Instant
        var strikes: Int
    }

    let policy: Policy
    private var entries: [String: Entry] = [:]
    /// Bans since start.
    private(set) var banCount = 0

    init(policy: Policy = Policy()) {
        self.policy = policy
    }

    /// Peers remembered now (banned, or banned recently enough to double).
    var rememberedCount: Int { entries.count }

    /// Bans `peer` from `now`.
    /// - Returns: how long the ban lasts.
    mutating func ban(_ peer: String, at now: ContinuousClock.Instant) -> Duration {
        prune(at: now)
        var strikes = 1
        if let entry = entries[peer], now < entry.until + policy.maximum { strikes = min(entry.strikes + 1, 32) }
        var length = policy.initial
        for _ in 1..<strikes where length < policy.maximum { length = length * 2 }
        length = min(length, policy.maximum)
        entries[peer] = Entry(until: now + length, strikes: strikes)
        banCount += 1
        if entries.count > policy.maxEntries, let first = entries.min(by: { $0.value.until < $1.value.until }) {
            entries[first.key] = nil
        }
        return length
    }

    /// Whether `peer` is banned at `now`.
    func isBanned(_ peer: String, at now: ContinuousClock.Instant) -> Bool {
        entries[peer].map { now < $0.until } ?? false
    }

    /// Forgets bans that ended more than ``Policy/maximum`` ago.
    mutating func prune(at now: ContinuousClock.Instant) {
        entries = entries.filter { now < $0.value.until + policy.maximum }
    }
}

/// How the forwarder names a subscriber peer: its CURVE key when the ZAP handler gave the
/// connection one in its user id, which covers all the key's connections and is what a ban
/// refuses; without keys, the connection itself (`connection #12 from 127.0.0.1`: its ZAP
/// serial, else its descriptor, and its `Peer-Address`: the IP for tcp, `:uid:gid:pid` for
/// ipc). An address is never a peer: every local process shares 127.0.0.1, and a bound by
/// address would cut off them all.
enum SubscriberPeer {
    /// What the coordinator's ZAP handler put in a subscriber connection's `User-Id`:
    /// `"<role> <key> #<serial>"` with CURVE, `"#<serial>"` without (the serial counts
    /// handshakes on the events socket, so no two connections share one). Parsed totally: any
    /// string gives a tag, missing parts are `nil`.
    struct Tag: Equatable, Sendable {
        /// The CURVE key (z85).
        var key: Substring?
        /// The connection's serial.
        var serial: UInt64?

        /// A tag from its parts.
        init(key: Substring?, serial: UInt64?) {
            self.key = key
            self.serial = serial
        }

        /// Parses a `User-Id`; `nil` reads as empty.
        init(userID: String?) {
            var words = (userID ?? "").split(separator: " ")
            if let last = words.last, last.first == "#", let serial = UInt64(last.dropFirst()) {
                self.serial = serial
                words.removeLast()
            }
            key = words.count >= 2 ? words.last : nil
        }
    }

    /// The name for a connection's metadata.
    static func name(tag: Tag, address: String?, connection: SubscriptionBook.ConnectionID) -> String {
        if let key = tag.key { return "key \(key)" }
        let id = connection.serial.map { "#\($0)" } ?? "\(connection.descriptor)"
        guard let address, !address.isEmpty else { return "connection \(id)" }
        return "connection \(id) from \(address)"
    }

    /// Whether `peer` (a name from ``name(tag:address:connection:)``) is a CURVE key, the only
    /// kind of peer that is banned.
    static func isKey(_ peer: String) -> Bool { peer.hasPrefix("key ") }

    /// The name a ban of a ZAP request's client would carry: `key <z85>`; `nil` without a key.
    static func name(for request: ZAPRequest) -> String? {
        request.curvePublicKey.map { "key \($0)" }
    }
}

/// The ban list shared by the forwarder's thread (which bans keys) and the ZAP handler's
/// thread (which refuses banned keys on the events socket), and the figures for `/metrics`.
public final class SubscriberBans: Sendable {
    private let book: Mutex<BanBook>
    private let subscriptionGauge = Atomic<Int>(0)
    private let banTotal = Atomic<Int>(0)
    private let droppedTotal = Atomic<Int>(0)
    private let connectionSerial = Atomic<UInt64>(0)
    private let backlogGauge = Atomic<UInt64>(0)
    private let slowDroppedTotal = Atomic<Int>(0)

    /// An empty list with the default back-off (60 s doubling to 1 h).
    public convenience init() {
        self.init(policy: BanBook.Policy())
    }

    init(policy: BanBook.Policy) {
        book = Mutex(BanBook(policy: policy))
    }

    /// Peers cut off since start for passing a subscription bound: keys banned, and
    /// connections without keys dropped (`chime_subscriber_bans_total`).
    public var banCount: Int { banTotal.load(ordering: .relaxed) }
    /// Subscriber connections the forwarder shut down for it (`chime_subscriber_connections_dropped_total`).
    public var droppedConnectionCount: Int { droppedTotal.load(ordering: .relaxed) }
    /// What subscribers that fell behind may hold in the XPUB, estimated at the last sample,
    /// in bytes (`chime_subscriber_backlog_bytes`; ``SubscriberBacklog``).
    public var backlogBytes: UInt64 { backlogGauge.load(ordering: .relaxed) }
    /// Subscriber connections shut down because those behind together held past
    /// `events.subscriberQueueBytesTotal` (`chime_slow_subscribers_dropped_total`).
    public var slowDroppedCount: Int { slowDroppedTotal.load(ordering: .relaxed) }
    /// Subscriptions the forwarder's XPUB holds now (`chime_subscriptions`).
    public var subscriptionCount: Int { subscriptionGauge.load(ordering: .relaxed) }

    /// Cuts `peer` off now: a key is banned (refused until the ban ends); a connection
    /// without a key is only counted, its drop is the whole penalty.
    /// - Returns: the ban's length; `nil` when `peer` is no key.
    func cutOff(_ peer: String) -> Duration? {
        banTotal.add(1, ordering: .relaxed)
        guard SubscriberPeer.isKey(peer) else { return nil }
        return book.withLock { $0.ban(peer, at: .now) }
    }

    /// The next connection's tag for its `User-Id` on the events socket, `#<serial>` (the ZAP
    /// handler's thread calls it once per handshake; see ``SubscriberPeer/Tag``).
    public func tagConnection() -> String {
        "#\(connectionSerial.add(1, ordering: .sequentiallyConsistent).newValue)"
    }

    /// The last serial ``tagConnection()`` gave out (0: none yet).
    var lastConnectionSerial: UInt64 { connectionSerial.load(ordering: .sequentiallyConsistent) }

    /// Counts `count` subscriber connections shut down.
    func noteDropped(_ count: Int) {
        droppedTotal.add(count, ordering: .relaxed)
    }

    /// Publishes the forwarder's estimate of what slow subscribers hold, and counts the
    /// `dropped` connections cut off for it.
    func noteBacklog(bytes: UInt64, dropped: Int) {
        backlogGauge.store(bytes, ordering: .relaxed)
        if dropped > 0 { slowDroppedTotal.add(dropped, ordering: .relaxed) }
    }

    /// Publishes the forwarder's subscription count.
    func noteSubscriptions(_ count: Int) {
        subscriptionGauge.store(count, ordering: .relaxed)
    }

    /// Why `request` is refused on the events socket (`nil`: not banned). Other domains, and
    /// clients without a key, are never refused here.
    public func refusal(for request: ZAPRequest) -> String? {
        guard request.domain == SocketDomain.events.rawValue, let peer = SubscriberPeer.name(for: request) else { return nil }
        return book.withLock { $0.isBanned(peer, at: .now) } ? "\(peer) is banned for holding too many subscriptions" : nil
    }
}
