import ChimeCore
import ChimeWire
import Foundation

/// Acknowledged fire events kept for catch-up (`chime subscribe --since SEQ`, the ZeroMQ
/// Guide's Clone pattern, ch. 5): the newest `capacity`, in acknowledgement order. The fold
/// of `.acknowledged` journal entries.
public struct EventLog: Sendable, Equatable {
    /// Most events kept; 0 keeps none.
    public let capacity: Int
    private var retained = RingQueue<FireEvent>()

    /// An empty log keeping at most `capacity` events.
    public init(capacity: Int) { self.capacity = capacity }

    /// The kept events, in acknowledgement order.
    public var events: RingQueue<FireEvent> { retained }

    /// The smallest kept `seq`, if any.
    public var oldestSeq: UInt64? { retained.map(\.seq).min() }

    /// Keeps `event`, dropping the oldest beyond `capacity`.
    public mutating func retain(_ event: FireEvent) {
        guard capacity > 0 else { return }
        if retained.count == capacity {
            _ = retained.popFirst()
        } else if retained.count == retained.capacity {
            // Grow to the bound itself rather than double past it: 10,000 events of ~300 bytes
            // took 16,384 slots (5 MB) before.
            retained.reserveCapacity(min(capacity, max(16, retained.count * 2)))
        }
        retained.append(event)
    }

    /// Kept events with `seq > after` (and of `recipient` when given), in `seq` order, at
    /// most `limit` of them.
    /// - Returns: the events and whether `limit` cut the selection short.
    public func events(after: UInt64, recipient: RecipientID?, limit: Int?) -> (events: [FireEvent], truncated: Bool) {
        var selected = retained.filter { $0.seq > after && (recipient == nil || $0.firing.recipient == recipient) }
        selected.sort { $0.seq < $1.seq }
        if let limit, limit >= 0, selected.count > limit {
            selected.removeSubrange(limit...)
            return (selected, true)
        }
        return (selected, false)
    }
}
