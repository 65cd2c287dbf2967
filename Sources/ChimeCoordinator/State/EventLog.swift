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
    /// Each kept event's arrival number, parallel to `retained`: a log split by recipient and
    /// merged again keeps the original order (`DurableState+Slices.swift`).
    @Derived private var arrivals = RingQueue<UInt64>()
    @Derived private var nextArrival: UInt64 = 0

    /// An empty log keeping at most `capacity` events.
    public init(capacity: Int) { self.capacity = capacity }

    /// The kept events, in acknowledgement order.
    public var events: RingQueue<FireEvent> { retained }

    /// The smallest kept `seq`, if any.
    public var oldestSeq: UInt64? { retained.map(\.seq).min() }

    /// Keeps `event`, dropping the oldest beyond `capacity`.
    public mutating func retain(_ event: FireEvent) {
        retain(event, arrival: nextArrival)
    }

    private mutating func retain(_ event: FireEvent, arrival: UInt64) {
        guard capacity > 0 else { return }
        nextArrival = max(nextArrival, arrival.saturatingAdding(1))
        if retained.count == capacity {
            _ = retained.popFirst()
            _ = arrivals.popFirst()
        } else if retained.count == retained.capacity {
            // Grow to the bound itself rather than double past it: 10,000 events of ~300 bytes
            // took 16,384 slots (5 MB) before.
            retained.reserveCapacity(min(capacity, max(16, retained.count * 2)))
            arrivals.reserveCapacity(min(capacity, max(16, arrivals.count * 2)))
        }
        retained.append(event)
        arrivals.append(arrival)
    }

    /// Splits the log: the events of recipients `isSliced` accepts, and the rest, each in
    /// arrival order with the same capacity.
    func split(_ isSliced: (RecipientID) -> Bool) -> (slice: EventLog, rest: EventLog) {
        var slice = EventLog(capacity: capacity)
        var rest = EventLog(capacity: capacity)
        for (event, arrival) in zip(retained, arrivals) {
            if isSliced(event.firing.recipient) {
                slice.retain(event, arrival: arrival)
            } else {
                rest.retain(event, arrival: arrival)
            }
        }
        return (slice, rest)
    }

    /// Takes in the events of `other`, interleaved with these by arrival; the oldest beyond
    /// this log's capacity are dropped.
    mutating func merge(_ other: EventLog) {
        var merged = EventLog(capacity: capacity)
        var mine = Array(zip(retained, arrivals))[...]
        var theirs = Array(zip(other.retained, other.arrivals))[...]
        while let next = Self.takeEarlier(&mine, &theirs) { merged.retain(next.0, arrival: next.1) }
        merged.nextArrival = max(nextArrival, other.nextArrival)
        self = merged
    }

    private static func takeEarlier(
        _ a: inout ArraySlice<(FireEvent, UInt64)>, _ b: inout ArraySlice<(FireEvent, UInt64)>
    ) -> (FireEvent, UInt64)? {
        switch (a.first, b.first) {
        case (nil, nil): return nil
        case (let x?, nil): a = a.dropFirst(); return x
        case (nil, let y?): b = b.dropFirst(); return y
        case (let x?, let y?):
            if x.1 <= y.1 { a = a.dropFirst(); return x }
            b = b.dropFirst()
            return y
        }
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
