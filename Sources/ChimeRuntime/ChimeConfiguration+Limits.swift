import Foundation

extension ChimeConfiguration {
    /// The control socket's protection (`"control"` in the configuration file).
    public struct Control: Codable, Hashable, Sendable {
        /// Per-peer request rate limiting.
        public var rateLimit = RateLimit()

        /// The defaults shown on each property.
        public init() {}
    }

    /// A token bucket per peer address on the control socket (`control.rateLimit`): a peer
    /// may send `burst` requests at once and `requestsPerSecond` on average; a request over
    /// the limit gets `rate_limited` with `retryAfterMs`.
    public struct RateLimit: Codable, Hashable, Sendable {
        /// Requests per second a peer address may send on average, 0 … 1,000,000; 0 turns
        /// the limit off.
        public var requestsPerSecond: Double = 100
        /// Requests a peer may send at once after an idle spell (the bucket's size), 1 … 1,000,000.
        public var burst = 200
        /// Whether loopback and local peers (`127.0.0.0/8`, `::1`, `ipc://`, `inproc://`) are
        /// limited too; off by default, so local tools and tests run unlimited.
        public var applyToLoopback = false
        /// Peer addresses tracked at once, 1 … 1,000,000; beyond, new peers share one bucket
        /// until idle entries (buckets full again) are dropped.
        public var maxPeers = 4096

        /// The defaults shown on each property.
        public init() {}
    }

    /// The event stream's limits (`"events"` in the configuration file).
    public struct Events: Codable, Hashable, Sendable {
        /// What the forwarder may queue for one subscriber that does not read, in bytes,
        /// 65,536 … 4 GiB. ZeroMQ bounds queues in messages (ZMQ_SNDHWM), so the forwarder's
        /// XPUB high-water mark is this divided by the largest event's size
        /// (``subscriberHighWaterMark``); past it, events to that
        /// subscriber are dropped (it catches up with `events`), others are not slowed.
        /// 64 MiB: 8,065 events, so a live subscriber rides out a burst of 100,000 firings on 2
        /// cores (16 MiB, 2,016 events, lost 2–3 % of such a burst at a subscriber that decodes
        /// every event on a loaded machine).
        public var subscriberQueueBytes = 64 * 1024 * 1024
        /// What the forwarder may queue for all subscribers that fall behind together, in
        /// bytes, as it estimates it (events forwarded since a subscriber's kernel send queue
        /// stopped emptying, at most ``subscriberQueueBytes`` each); past it the subscribers
        /// behind longest are cut off (they reconnect and catch up with `events`). 256 MiB:
        /// four subscribers full to the default per-subscriber bound.
        public var subscriberQueueBytesTotal = 256 * 1024 * 1024
        /// The largest frame a subscriber may send, in bytes, 512 … 65,536: a subscription is
        /// a flag byte and its topic, so topics are at most one byte shorter. A larger frame
        /// drops the connection before libzmq reads it (ZMQ_MAXMSGSIZE on the XPUB), so its
        /// subscription trie, whose teardown recurses once per byte, never holds a long topic.
        /// The same frames carry the handshake (CURVE's INITIATE is about 400 bytes), hence
        /// the floor.
        public var maxSubscriptionBytes = 1024

        /// The ZMQ_MAXMSGSIZE of a socket that receives subscriptions, so that the bound is
        /// ``maxSubscriptionBytes`` as the subscriber sends it (a flag byte and the topic:
        /// topics of up to `maxSubscriptionBytes - 1` bytes): a ZMTP 3.1 peer carries a
        /// subscription as a SUBSCRIBE command (its 10-byte name for the flag byte: 9 bytes
        /// more; ZMTP 3.1, RFC 37), and CURVE boxes every frame (33 bytes more: the MESSAGE
        /// command's 8-byte name, an 8-byte nonce, a 16-byte MAC and a flags byte; RFC 26).
        /// In bytes.
        public func subscriptionFrameLimit(curve: Bool) -> Int64 {
            Self.subscriptionFrameLimit(maxSubscriptionBytes, curve: curve)
        }

        /// ``subscriptionFrameLimit(curve:)`` for a given `maxSubscriptionBytes`.
        public static func subscriptionFrameLimit(_ maxSubscriptionBytes: Int, curve: Bool) -> Int64 {
            Int64(maxSubscriptionBytes) + 9 + (curve ? 33 : 0)
        }
        /// The largest event frame a publisher may send into the forwarder, in bytes (ZMQ_MAXMSGSIZE
        /// on the XSUB; a larger one drops that publisher's connection). A worker does not
        /// publish an event larger than this (logged; subscribers catch up with `events`).
        /// With ``subscriberQueueBytes`` it sets the subscriber high-water mark, so a queue is
        /// bounded in bytes whatever the events' sizes.
        public var maxEventBytes = 8 * 1024
        /// Subscriptions one subscriber peer may hold, 1 … 1,000,000: the CURVE key over all
        /// its connections with keys, else one connection (every local subscriber on loopback
        /// shares 127.0.0.1, so an address is never a peer). Past it each of the peer's
        /// connections is shut down, which frees its part of libzmq's subscription trie, and a
        /// key is banned (60 s, doubling to 1 h; its connections are refused). Other
        /// subscribers keep their connections and events.
        public var maxSubscriptionsPerPeer = 1000
        /// Topic bytes all subscribers may hold together, 4,096 … 4 GiB. libzmq's tries keep a
        /// node per topic byte in three places of the coordinator (the forwarder's XPUB and
        /// XSUB, the coordinator's own PUB), about 120 bytes of memory per topic byte (1,000
        /// topics of 1,000 bytes took +123 MiB), so 128 KiB is about 15 MiB. Past it the peer
        /// holding the most is cut off as for ``maxSubscriptionsPerPeer``.
        public var maxSubscriptionBytesTotal = 128 * 1024


        /// The forwarder's per-subscriber high-water mark, in messages: as many of the largest
        /// events (``maxEventBytes`` plus two frames' bookkeeping) as fit ``subscriberQueueBytes``,
        /// so one subscriber holds at most that many bytes.
        public var subscriberHighWaterMark: Int32 {
            Int32(clamping: max(1, subscriberQueueBytes / (maxEventBytes + Self.queuedFrameOverheadBytes)))
        }

        /// libzmq's bookkeeping for one queued two-frame event, in bytes (2 × 64).
        public static let queuedFrameOverheadBytes = 128

        /// The defaults shown on each property.
        public init() {}
    }

}
