import ChimeRuntime

/// Per-peer request rate limiting on the control socket: one ``TokenBucket`` per peer
/// address, in a table of at most `maxPeers` entries.
///
/// The key is the connection's peer address (libzmq's `Peer-Address` property: the IP of a
/// TCP peer), not its routing id: a client that reconnects gets a new routing id, and the
/// control client opens a new connection on every retry, so a routing-id bucket would bound
/// nothing. Every connection from one address therefore shares a bucket (clients behind one
/// NAT too). Loopback and local peers (`127.0.0.0/8`, `::1`, `ipc://`, `inproc://`) are not
/// limited unless `applyToLoopback`; a peer without an address then falls back to its
/// routing id.
///
/// Bounded state: a bucket that has filled up again carries nothing a new one would not, so
/// such idle entries are dropped by a sweep that runs at most once per second (amortised
/// O(1) per request); while the table is full of active peers, a new peer replaces the one
/// seen least recently (so many addresses cannot starve new clients; the evicted address
/// starts afresh when it returns). The use order is a log of (key, use number) read from the
/// front, stale entries skipped, compacted when it grows past four times the table: amortised
/// O(1). Pure: time is a monotonic reading in seconds passed in by the caller.
public struct ControlRateLimiter: Sendable {
    /// The limit in force.
    public let limit: ChimeConfiguration.RateLimit
    /// The buckets of the peers seen recently, by key.
    public private(set) var buckets: [String: TokenBucket] = [:]
    /// Each key's latest use number.
    private var lastUse: [String: UInt64] = [:]
    /// Uses in order, oldest first from `useOrderStart`; an entry whose number is not its
    /// key's latest is stale.
    private var useOrder: [(key: String, use: UInt64)] = []
    private var useOrderStart = 0
    private var useCount: UInt64 = 0
    /// Peers evicted to make room for new ones, since start.
    public private(set) var evictions = 0
    /// The monotonic reading (seconds) after which the next sweep of idle entries may run.
    private var nextSweepAt: Double = 0

    /// A limiter with no peer seen yet.
    public init(limit: ChimeConfiguration.RateLimit) {
        self.limit = limit
    }

    /// Whether the limiter checks anything at all (`requestsPerSecond > 0`).
    public var isEnabled: Bool { limit.requestsPerSecond > 0 }

    /// Counts one request from a peer and says whether it may go ahead.
    /// - Parameters:
    ///   - peerAddress: the connection's `Peer-Address` (`nil` or empty for `inproc://`).
    ///   - routingID: the peer's routing id on the ROUTER, the key when it has no address.
    ///   - now: a monotonic reading in seconds.
    /// - Returns: `nil` when the request may go ahead; else the milliseconds until the peer's
    ///   next request will be taken.
    public mutating func admit(peerAddress: String?, routingID: [UInt8], at now: Double) -> Int? {
        guard isEnabled else { return nil }
        if !limit.applyToLoopback, Self.isLocal(peerAddress) { return nil }
        if now >= nextSweepAt { sweep(at: now) }
        let key = peerAddress.flatMap { $0.isEmpty ? nil : $0 } ?? "routing:" + routingID.map { String($0, radix: 16) }.joined(separator: ".")
        noteUse(of: key)
        if buckets[key] != nil {
            return buckets[key]?.take(at: now)
        }
        if buckets.count >= limit.maxPeers { evictLeastRecentlyUsed() }
        var bucket = makeBucket(at: now)
        let wait = bucket.take(at: now)
        buckets[key] = bucket
        return wait
    }

    private mutating func noteUse(of key: String) {
        useCount += 1
        lastUse[key] = useCount
        useOrder.append((key, useCount))
        if useOrder.count - useOrderStart > 4 * max(limit.maxPeers, 16) {
            useOrder = lastUse.map { (key: $0.key, use: $0.value) }.sorted { $0.use < $1.use }
            useOrderStart = 0
        }
    }

    private mutating func evictLeastRecentlyUsed() {
        while useOrderStart < useOrder.count {
            let (key, use) = useOrder[useOrderStart]
            useOrderStart += 1
            guard lastUse[key] == use, buckets[key] != nil else { continue }
            buckets[key] = nil
            lastUse[key] = nil
            evictions += 1
            return
        }
    }

    /// Drops every entry whose bucket has filled up again (idle for `burst / rate` seconds).
    public mutating func sweep(at now: Double) {
        buckets = buckets.filter { !$0.value.isFull(at: now) }
        lastUse = lastUse.filter { buckets[$0.key] != nil }
        nextSweepAt = now + 1
    }

    private func makeBucket(at now: Double) -> TokenBucket {
        TokenBucket(rate: limit.requestsPerSecond, burst: Double(limit.burst), at: now)
    }

    /// Whether a `Peer-Address` is this machine: loopback IPv4 or IPv6 (also IPv4-mapped), or
    /// no IP at all (`ipc://` gives `:uid:gid:pid` or nothing, `inproc://` nothing).
    public static func isLocal(_ peerAddress: String?) -> Bool {
        guard let address = peerAddress, !address.isEmpty, !address.hasPrefix(":") || address.hasPrefix("::") else {
            return true
        }
        return address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }
}
