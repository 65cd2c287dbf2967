import ChimeCore
import Foundation

/// The coordinator's idempotency log: the encoded reply of each recent mutating request by
/// its `requestId`, so a retried request (same id, after a timeout, a crash or a takeover)
/// gets the same bytes back and changes nothing. The fold of `.answered` journal entries.
///
/// Bounded twice: at most `capacity` replies and `byteLimit` bytes in total; the oldest are
/// forgotten first, and the newest is always kept (however large).
public struct RequestLog: Sendable, Equatable {
    /// Most replies kept.
    public let capacity: Int
    /// Most bytes of replies kept, in total.
    public let byteLimit: Int
    private var replies: [String: Data] = [:]
    private var order = RingQueue<String>()
    /// The total size of the kept replies, in bytes.
    public private(set) var byteCount = 0

    /// An empty log with these bounds.
    public init(capacity: Int, byteLimit: Int) {
        self.capacity = capacity
        self.byteLimit = byteLimit
    }

    /// How many replies are kept.
    public var count: Int { order.count }

    /// The reply remembered for `requestId`, if any.
    public func reply(to requestId: String) -> Data? { replies[requestId] }

    /// Remembers `reply` for `requestId` (replacing an earlier one), forgetting the oldest
    /// beyond the bounds.
    public mutating func remember(_ reply: Data, for requestId: String) {
        if let previous = replies.updateValue(reply, forKey: requestId) {
            byteCount -= previous.count
        } else {
            order.append(requestId)
        }
        byteCount += reply.count
        while order.count > 1 && (order.count > capacity || byteCount > byteLimit), let evicted = order.popFirst() {
            byteCount -= replies.removeValue(forKey: evicted)?.count ?? 0
        }
    }

    /// The kept replies, oldest first.
    public var entries: [(requestId: String, reply: Data)] {
        order.compactMap { id in replies[id].map { (id, $0) } }
    }

    /// Equal when they keep the same replies in the same order under the same bounds.
    public static func == (lhs: RequestLog, rhs: RequestLog) -> Bool {
        lhs.capacity == rhs.capacity && lhs.byteLimit == rhs.byteLimit && lhs.order == rhs.order
            && lhs.replies == rhs.replies
    }
}
