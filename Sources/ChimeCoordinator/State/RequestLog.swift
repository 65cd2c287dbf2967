import ChimeCore
import Foundation

/// The coordinator's idempotency log: the encoded reply of each recent mutating request by
/// its `requestId`, so a retried request (same id, after a timeout, a crash or a takeover)
/// gets the same bytes back and changes nothing. The fold of `.answered` journal entries.
///
/// Two tiers, each forgetting its own oldest first, so large replies cannot push out small
/// ones (a 200,000-reminder import answers with 100 chunk replies of ~200 KB each; in one
/// shared budget they had evicted every small reply, and a `cancel` retried after the import
/// ran again):
/// - replies of at most `largeReplyThreshold` bytes: at most `capacity` of them and
///   `byteLimit` bytes in total;
/// - larger replies: at most `largeByteLimit` bytes in total (so at most
///   `largeByteLimit / largeReplyThreshold` of them, plus one).
///
/// In each tier the newest is always kept, however large. Which tier a reply goes to depends
/// only on its size, so replaying the same `.answered` entries, or remembering ``entries``
/// again in their order (a snapshot load), rebuilds an equal log.
public struct RequestLog: Sendable, Equatable {
    /// The size above which a reply counts as large, in bytes, unless told otherwise:
    /// 64 KiB (a `schedule` of ~600 reminders, or a `cancel` of ~3,000 ids).
    public static let defaultLargeReplyThreshold = 64 << 10

    /// Most small replies kept.
    public let capacity: Int
    /// Most bytes of small replies kept, in total.
    public let byteLimit: Int
    /// The size above which a reply is large, in bytes.
    public let largeReplyThreshold: Int
    /// Most bytes of large replies kept, in total.
    public let largeByteLimit: Int

    private struct Kept: Sendable, Equatable {
        var reply: Data
        /// The one recipient the request was about, if it had one: a shard that hands that
        /// recipient to another hands its remembered replies along.
        var recipient: RecipientID?
        /// The order of arrival across both tiers (only ``entries`` reads it): a log rebuilt
        /// from a snapshot counts from 0.
        @Derived var arrival: UInt64
        /// Whether it is above `largeReplyThreshold` (its size says so).
        @Derived var isLarge: Bool
    }

    /// One tier's arrival order and size; the replies themselves are in `replies`.
    private struct Tier: Sendable, Equatable {
        var order = RingQueue<String>()
        var byteCount = 0
    }

    private var replies: [String: Kept] = [:]
    private var small = Tier()
    private var large = Tier()
    @Derived private var arrivals: UInt64 = 0

    /// An empty log with these bounds.
    /// - Parameters:
    ///   - capacity: most small replies kept.
    ///   - byteLimit: most bytes of small replies, in total.
    ///   - largeReplyThreshold: the size above which a reply is large, in bytes.
    ///   - largeByteLimit: most bytes of large replies, in total (default: `byteLimit`).
    public init(
        capacity: Int, byteLimit: Int, largeReplyThreshold: Int = defaultLargeReplyThreshold, largeByteLimit: Int? = nil
    ) {
        self.capacity = capacity
        self.byteLimit = byteLimit
        self.largeReplyThreshold = largeReplyThreshold
        self.largeByteLimit = largeByteLimit ?? byteLimit
    }

    /// How many replies are kept, in both tiers.
    public var count: Int { small.order.count + large.order.count }

    /// How many large replies are kept.
    public var largeCount: Int { large.order.count }

    /// The total size of the kept replies, in bytes, in both tiers.
    public var byteCount: Int { small.byteCount + large.byteCount }

    /// The total size of the kept large replies, in bytes.
    public var largeByteCount: Int { large.byteCount }

    /// The reply remembered for `requestId`, if any.
    public func reply(to requestId: String) -> Data? { replies[requestId]?.reply }

    /// Remembers `reply` for `requestId` (about `recipient`, when the request named one),
    /// forgetting the oldest of its tier beyond that tier's bounds. A replaced reply keeps its
    /// place when it stays in its tier; one that changes tier becomes the newest of the other.
    public mutating func remember(_ reply: Data, for requestId: String, recipient: RecipientID? = nil) {
        let isLarge = reply.count > largeReplyThreshold
        if let previous = replies[requestId] {
            if previous.isLarge == isLarge {
                replies[requestId]?.reply = reply
                replies[requestId]?.recipient = recipient
                modifyTier(isLarge) { $0.byteCount += reply.count - previous.reply.count }
                evictBeyondBounds(isLarge)
                return
            }
            // Rare (a request id reused with a reply of another size): O(tier) to leave it.
            modifyTier(previous.isLarge) { tier in
                tier.order = RingQueue(tier.order.filter { $0 != requestId })
                tier.byteCount -= previous.reply.count
            }
        }
        replies[requestId] = Kept(reply: reply, recipient: recipient, arrival: arrivals, isLarge: isLarge)
        arrivals += 1
        modifyTier(isLarge) { tier in
            tier.order.append(requestId)
            tier.byteCount += reply.count
        }
        evictBeyondBounds(isLarge)
    }

    private mutating func modifyTier(_ isLarge: Bool, _ body: (inout Tier) -> Void) {
        if isLarge { body(&large) } else { body(&small) }
    }

    private mutating func evictBeyondBounds(_ isLarge: Bool) {
        if isLarge {
            Self.evict(from: &large, replies: &replies, countLimit: Int.max, byteLimit: largeByteLimit)
        } else {
            Self.evict(from: &small, replies: &replies, countLimit: capacity, byteLimit: byteLimit)
        }
    }

    /// Forgets the oldest of `tier` while it holds more than one reply and exceeds a bound.
    private static func evict(from tier: inout Tier, replies: inout [String: Kept], countLimit: Int, byteLimit: Int) {
        while tier.order.count > 1 && (tier.order.count > countLimit || tier.byteCount > byteLimit),
            let evicted = tier.order.popFirst()
        {
            tier.byteCount -= replies.removeValue(forKey: evicted)?.reply.count ?? 0
        }
    }

    /// The kept replies of both tiers, oldest first (by arrival): remembering them again in
    /// this order rebuilds an equal log (what a snapshot load does).
    public var entries: [(requestId: String, reply: Data)] {
        replies.sorted { $0.value.arrival < $1.value.arrival }.map { ($0.key, $0.value.reply) }
    }

    /// The kept replies of both tiers with the recipient each was about, oldest first.
    public var taggedEntries: [(requestId: String, reply: Data, recipient: RecipientID?)] {
        replies.sorted { $0.value.arrival < $1.value.arrival }.map { ($0.key, $0.value.reply, $0.value.recipient) }
    }

    /// Splits the log: the replies about recipients `isSliced` accepts, and the rest (replies
    /// about no one recipient stay in the rest), each remembered in arrival order under the
    /// same bounds.
    func split(_ isSliced: (RecipientID) -> Bool) -> (slice: RequestLog, rest: RequestLog) {
        var slice = RequestLog(capacity: capacity, byteLimit: byteLimit, largeReplyThreshold: largeReplyThreshold, largeByteLimit: largeByteLimit)
        var rest = slice
        for (requestId, kept) in replies.sorted(by: { $0.value.arrival < $1.value.arrival }) {
            if let recipient = kept.recipient, isSliced(recipient) {
                slice.remember(kept.reply, for: requestId, recipient: recipient, arrival: kept.arrival)
            } else {
                rest.remember(kept.reply, for: requestId, recipient: kept.recipient, arrival: kept.arrival)
            }
        }
        slice.arrivals = arrivals
        rest.arrivals = arrivals
        return (slice, rest)
    }

    /// Takes in the replies of `other`, interleaved with these by arrival (a request id this
    /// log remembers keeps its reply); the oldest beyond the bounds are forgotten.
    mutating func merge(_ other: RequestLog) {
        var merged = RequestLog(capacity: capacity, byteLimit: byteLimit, largeReplyThreshold: largeReplyThreshold, largeByteLimit: largeByteLimit)
        let all = (replies.map { ($0.key, $0.value) } + other.replies.filter { replies[$0.key] == nil }.map { ($0.key, $0.value) })
            .sorted { ($0.1.arrival, $0.0) < ($1.1.arrival, $1.0) }
        // Renumbered: the two logs count arrivals apart, so the same number can come from
        // both, and a snapshot (which keeps replies in arrival order) must rebuild this order.
        for (index, (requestId, kept)) in all.enumerated() {
            merged.remember(kept.reply, for: requestId, recipient: kept.recipient, arrival: UInt64(index))
        }
        merged.arrivals = UInt64(all.count)
        self = merged
    }

    private mutating func remember(_ reply: Data, for requestId: String, recipient: RecipientID?, arrival: UInt64) {
        arrivals = arrival
        remember(reply, for: requestId, recipient: recipient)
    }
}
