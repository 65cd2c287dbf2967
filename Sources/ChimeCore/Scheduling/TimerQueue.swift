import Foundation

/// Deadlines keyed by `Key`, earliest first: an `IndexedHeap` (4-ary, with a position index)
/// ordered by deadline, then by `schedule` call.
///
/// `schedule`, `remove` and each popped entry cost O(log n); `nextDeadline` and
/// `deadline(of:)` cost O(1); nothing scans all entries. Entries with equal deadlines come
/// out in the order of the `schedule` calls that set them (rescheduling a key counts as a
/// new call). Deadlines are instants (UTC) kept exactly as given. Memory for `Int` keys,
/// measured as resident-size growth at one million entries: about 60 bytes per entry (24 in
/// the heap array, the rest in the position dictionary); in a release build, scheduling
/// costs about 1 µs and popping about 3.5 µs per entry at that size (cache misses).
public struct TimerQueue<Key: Hashable & Sendable>: Sendable {
    /// A deadline with its `schedule` call number, which breaks ties between equal deadlines.
    @usableFromInline
    struct Stamp: Comparable, Sendable {
        /// The deadline as `Date.timeIntervalSinceReferenceDate`, so it converts back exactly.
        @usableFromInline var deadline: Double
        @usableFromInline var sequence: UInt64

        @inlinable
        init(deadline: Double, sequence: UInt64) {
            self.deadline = deadline
            self.sequence = sequence
        }

        @inlinable
        static func < (lhs: Stamp, rhs: Stamp) -> Bool {
            lhs.deadline < rhs.deadline || (lhs.deadline == rhs.deadline && lhs.sequence < rhs.sequence)
        }

        @inlinable var instant: Date { Date(timeIntervalSinceReferenceDate: deadline) }
    }

    @usableFromInline var heap: IndexedHeap<Key, Stamp>
    @usableFromInline var nextSequence: UInt64 = 0

    /// Creates an empty queue.
    /// - Parameters:
    ///   - stripeCount: how many stripes the key index is split into (see `StripedDictionary`):
    ///     1 for a small queue; more for a big one that is copied for snapshots while it
    ///     keeps changing.
    ///   - stripeHash: picks a key's stripe; `nil`: the key's `hashValue`.
    @inlinable
    public init(stripeCount: Int = 1, stripeHash: (@Sendable (Key) -> UInt)? = nil) {
        heap = IndexedHeap(isMaxHeap: false, stripeCount: stripeCount, stripeHash: stripeHash)
    }

    /// How many keys have a deadline.
    @inlinable
    public var count: Int { heap.count }

    /// Whether no key has a deadline.
    @inlinable
    public var isEmpty: Bool { heap.count == 0 }

    /// The earliest deadline (UTC), or `nil` when the queue is empty. O(1).
    @inlinable
    public var nextDeadline: Date? { heap.top?.priority.instant }

    /// The deadline of `key` (UTC), or `nil` when it has none. O(1).
    @inlinable
    public func deadline(of key: Key) -> Date? { heap.priority(of: key)?.instant }

    /// Sets `key`'s deadline, replacing any earlier one. O(log n).
    @inlinable
    public mutating func schedule(_ key: Key, at deadline: Date) {
        heap.update(key, priority: stamp(deadline))
    }

    /// Sets many keys' deadlines, as `schedule` called for each in order would (equal
    /// deadlines keep this order); into an empty queue in O(n), which makes loading a
    /// million reminders cheaper.
    @inlinable
    public mutating func schedule(contentsOf items: some Collection<(key: Key, deadline: Date)>) {
        var stamped: [(key: Key, priority: Stamp)] = []
        stamped.reserveCapacity(items.count)
        for (key, deadline) in items { stamped.append((key, stamp(deadline))) }
        heap.update(contentsOf: stamped)
    }

    /// Removes `key` and returns the deadline it had, or `nil` when it had none. O(log n).
    @inlinable
    @discardableResult
    public mutating func remove(_ key: Key) -> Date? {
        heap.remove(key)?.instant
    }

    /// Removes and returns the entries whose deadline is at or before `now`, earliest first,
    /// equal deadlines in `schedule` order; at most `limit` of them. O(k log n) for k entries.
    @inlinable
    public mutating func popDue(at now: Date, limit: Int = .max) -> [(key: Key, deadline: Date)] {
        let cutoff = now.timeIntervalSinceReferenceDate
        var due: [(key: Key, deadline: Date)] = []
        while due.count < limit, let first = heap.top, first.priority.deadline <= cutoff {
            heap.remove(first.key)
            due.append((first.key, first.priority.instant))
        }
        return due
    }

    @inlinable
    mutating func stamp(_ deadline: Date) -> Stamp {
        defer { nextSequence += 1 }
        return Stamp(deadline: deadline.timeIntervalSinceReferenceDate, sequence: nextSequence)
    }
}

extension TimerQueue {
    /// The entry with the earliest deadline (ties: the earliest `schedule` call), or `nil`
    /// when the queue is empty; it stays in the queue. O(1).
    @inlinable
    public var first: (key: Key, deadline: Date)? { heap.top.map { ($0.key, $0.priority.instant) } }

    /// The entries due at `now` (deadline at or before it) whose key `isIncluded` accepts,
    /// earliest first (equal deadlines in `schedule` order), at most `limit`; they stay in the
    /// queue. O(d log d) for the d entries due, however many the queue holds: for a loop that
    /// must pass over some due keys (a slot move's handed-over slots) without a scan of all.
    @inlinable
    public func due(at now: Date, limit: Int, where isIncluded: (Key) -> Bool) -> [(key: Key, deadline: Date)] {
        let cutoff = now.timeIntervalSinceReferenceDate
        return heap.entries { $0.deadline <= cutoff }
            .filter { isIncluded($0.key) }
            .sorted { $0.priority < $1.priority }
            .prefix(limit)
            .map { ($0.key, $0.priority.instant) }
    }

    /// Every key with its deadline (UTC), in no particular order. O(n).
    public var deadlines: [Key: Date] {
        Dictionary(uniqueKeysWithValues: heap.unorderedEntries.map { ($0.key, $0.priority.instant) })
    }
}

extension TimerQueue: Equatable {
    /// Equal when the same keys have the same deadlines: the heap's layout and the order in
    /// which equal deadlines were set are how the queue is kept, not what it holds.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.count == rhs.count && lhs.heap.unorderedEntries.allSatisfy { rhs.deadline(of: $0.key) == $0.priority.instant }
    }
}
