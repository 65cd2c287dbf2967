import Foundation

/// Deadlines keyed by `Key`, earliest first: a 4-ary min-heap of (deadline, `schedule` call)
/// stamps with lazy deletion, beside a table of each key's current stamp.
///
/// A key removed or rescheduled leaves its old heap entry behind, marked stale by the table
/// (the entry's stamp is no longer the key's); stale entries are dropped when they reach the
/// top, and the heap is rebuilt from the table once they outnumber half the live keys, so it
/// never holds more than 1.5 × `count` + 64 entries. The heap keeps no position index: a
/// pop moves entries within one array and touches the table once (the position index it
/// replaced was a dictionary write per level of every sift: with string keys, 2.2 µs of
/// the loop per firing in a W1 burst of 1,000,000, now 1.3 µs; issue 43). The scheme is the one the Python `heapq`
/// documentation gives for a priority queue whose tasks change ("Priority Queue
/// Implementation Notes": mark the old entry removed, skip it when it surfaces).
///
/// `schedule` and `remove` cost O(log n) amortized, each popped entry O(log n); `nextDeadline`
/// and `deadline(of:)` cost O(1); nothing scans all entries except the amortized rebuild.
/// Entries with equal deadlines come out in the order of the `schedule` calls that set them
/// (rescheduling a key counts as a new call). Deadlines are instants (UTC) kept exactly as
/// given.
public struct TimerQueue<Key: Hashable & Sendable>: Sendable {
    /// A deadline with its `schedule` call number, which breaks ties between equal deadlines
    /// and tells a key's current heap entry from its stale ones (every call has its own).
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

    /// The heap (4-ary, earliest stamp on top), live and stale entries alike; its top is always
    /// live (or the heap is empty).
    @usableFromInline var heap: [(key: Key, stamp: Stamp)] = []
    /// Each scheduled key's current stamp; striped (`StripedDictionary`) for a big queue whose
    /// state is copied for a snapshot, so the next change copies a stripe, not the table.
    @usableFromInline var live: StripedDictionary<Key, Stamp>
    @usableFromInline var nextSequence: UInt64 = 0

    /// Creates an empty queue.
    /// - Parameters:
    ///   - stripeCount: how many stripes the key table is split into (see `StripedDictionary`):
    ///     1 for a small queue; more for a big one that is copied for snapshots while it
    ///     keeps changing.
    ///   - stripeHash: picks a key's stripe; `nil`: the key's `hashValue`.
    @inlinable
    public init(stripeCount: Int = 1, stripeHash: (@Sendable (Key) -> UInt)? = nil) {
        live = StripedDictionary(stripeCount: stripeCount, stripeHash: stripeHash)
    }

    /// How many keys have a deadline.
    @inlinable
    public var count: Int { live.count }

    /// Whether no key has a deadline.
    @inlinable
    public var isEmpty: Bool { live.isEmpty }

    /// The earliest deadline (UTC), or `nil` when the queue is empty. O(1).
    @inlinable
    public var nextDeadline: Date? { heap.first?.stamp.instant }

    /// The deadline of `key` (UTC), or `nil` when it has none. O(1).
    @inlinable
    public func deadline(of key: Key) -> Date? { live[key]?.instant }

    /// Sets `key`'s deadline, replacing any earlier one. O(log n) amortized.
    @inlinable
    public mutating func schedule(_ key: Key, at deadline: Date) {
        let stamp = stamp(deadline)
        let replaced = live.updateValue(stamp, forKey: key)
        heap.append((key, stamp))
        siftUp(from: heap.count - 1)
        if replaced != nil { afterStaling() }
    }

    /// Sets many keys' deadlines, as `schedule` called for each in order would (equal
    /// deadlines keep this order); into an empty queue in O(n) (the heap built bottom-up,
    /// Floyd 1964), which makes loading a million reminders cheaper.
    @inlinable
    public mutating func schedule(contentsOf items: some Collection<(key: Key, deadline: Date)>) {
        guard heap.isEmpty else {
            for (key, deadline) in items { schedule(key, at: deadline) }
            return
        }
        heap.reserveCapacity(items.count)
        live.reserveCapacity(items.count)
        for (key, deadline) in items {
            let stamp = stamp(deadline)
            live.updateValue(stamp, forKey: key)
            heap.append((key, stamp))
        }
        // Keys given more than once left stale entries: past the bound, drop them first.
        if heap.count > live.count + live.count / 2 + 64 { dropStaleEntries() }
        rebuild()
    }

    /// Removes `key` and returns the deadline it had, or `nil` when it had none. O(log n)
    /// amortized.
    @inlinable
    @discardableResult
    public mutating func remove(_ key: Key) -> Date? {
        guard let removed = live.removeValue(forKey: key) else { return nil }
        afterStaling()
        return removed.instant
    }

    /// Removes and returns the entries whose deadline is at or before `now`, earliest first,
    /// equal deadlines in `schedule` order; at most `limit` of them. O(k log n) for k entries.
    @inlinable
    public mutating func popDue(at now: Date, limit: Int = .max) -> [(key: Key, deadline: Date)] {
        let cutoff = now.timeIntervalSinceReferenceDate
        var due: [(key: Key, deadline: Date)] = []
        while due.count < limit, let first = heap.first, first.stamp.deadline <= cutoff {
            live.removeValue(forKey: first.key)
            popTop()
            dropStaleTop()
            due.append((first.key, first.stamp.instant))
        }
        // Pops shrink the bound faster than the heap: stale entries below live ones may remain.
        if heap.count > live.count + live.count / 2 + 64 {
            dropStaleEntries()
            rebuild()
        }
        return due
    }

    @inlinable
    mutating func stamp(_ deadline: Date) -> Stamp {
        defer { nextSequence &+= 1 }
        return Stamp(deadline: deadline.timeIntervalSinceReferenceDate, sequence: nextSequence)
    }

    /// Whether a heap entry is its key's current one.
    @inlinable
    func isLive(_ entry: (key: Key, stamp: Stamp)) -> Bool {
        live[entry.key]?.sequence == entry.stamp.sequence
    }

    /// A key's entry went stale: keep the top live and the heap within 1.5 × `count` + 64.
    @inlinable
    mutating func afterStaling() {
        if heap.count > live.count + live.count / 2 + 64 {
            dropStaleEntries()
            rebuild()
        } else {
            dropStaleTop()
        }
    }

    /// Removes every stale entry, leaving the heap's order to `rebuild`.
    @inlinable
    mutating func dropStaleEntries() {
        let table = live
        heap.removeAll { table[$0.key]?.sequence != $0.stamp.sequence }
    }

    @inlinable
    mutating func dropStaleTop() {
        while let top = heap.first, !isLive(top) { popTop() }
    }

    /// Restores the heap order over the whole array, bottom-up, then drops stale tops.
    @inlinable
    mutating func rebuild() {
        if heap.count > 1 {
            for position in stride(from: (heap.count - 2) / Self.arity, through: 0, by: -1) {
                siftDown(from: position)
            }
        }
        dropStaleTop()
    }

    @inlinable static var arity: Int { 4 }

    /// Removes the heap's top entry, live or stale.
    @inlinable
    mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(from: 0)
    }

    /// Moves the entry at `start` up, shifting parents down into the hole it leaves.
    @inlinable
    mutating func siftUp(from start: Int) {
        let moving = heap[start]
        var position = start
        while position > 0 {
            let parent = (position - 1) / Self.arity
            guard moving.stamp < heap[parent].stamp else { break }
            heap[position] = heap[parent]
            position = parent
        }
        heap[position] = moving
    }

    /// Moves the entry at `start` down, shifting the earliest child up into the hole each time
    /// (4-ary: half a binary heap's depth, and the four children share cache lines).
    @inlinable
    mutating func siftDown(from start: Int) {
        let moving = heap[start]
        var position = start
        while true {
            let firstChild = Self.arity * position + 1
            guard firstChild < heap.count else { break }
            var child = firstChild
            for sibling in (firstChild + 1)..<min(firstChild + Self.arity, heap.count)
            where heap[sibling].stamp < heap[child].stamp {
                child = sibling
            }
            guard heap[child].stamp < moving.stamp else { break }
            heap[position] = heap[child]
            position = child
        }
        heap[position] = moving
    }
}

extension TimerQueue {
    /// The entry with the earliest deadline (ties: the earliest `schedule` call), or `nil`
    /// when the queue is empty; it stays in the queue. O(1).
    @inlinable
    public var first: (key: Key, deadline: Date)? { heap.first.map { ($0.key, $0.stamp.instant) } }

    /// The live entries whose stamp satisfies `isWithin`, which must hold for a prefix of the
    /// heap's order ("at or before a deadline"), in heap order, not sorted: a walk from the
    /// top that skips the subtree under every entry outside, so it costs O(k × arity) for the
    /// k entries within (live or stale), however many the heap holds.
    @inlinable
    func liveEntries(where isWithin: (Stamp) -> Bool) -> [(key: Key, stamp: Stamp)] {
        var found: [(key: Key, stamp: Stamp)] = []
        var pending = heap.isEmpty ? [] : [0]
        while let position = pending.popLast() {
            let entry = heap[position]
            guard isWithin(entry.stamp) else { continue }
            if isLive(entry) { found.append(entry) }
            let firstChild = position * Self.arity + 1
            var child = firstChild
            while child < min(firstChild + Self.arity, heap.count) {
                pending.append(child)
                child += 1
            }
        }
        return found
    }

    /// The entries due at `now` (deadline at or before it) whose key `isIncluded` accepts,
    /// earliest first (equal deadlines in `schedule` order), at most `limit`; they stay in the
    /// queue. O(d log d) for the d entries due, however many the queue holds: for a loop that
    /// must pass over some due keys (a slot move's handed-over slots) without a scan of all.
    @inlinable
    public func due(at now: Date, limit: Int, where isIncluded: (Key) -> Bool) -> [(key: Key, deadline: Date)] {
        let cutoff = now.timeIntervalSinceReferenceDate
        return liveEntries { $0.deadline <= cutoff }
            .filter { isIncluded($0.key) }
            .sorted { $0.stamp < $1.stamp }
            .prefix(limit)
            .map { ($0.key, $0.stamp.instant) }
    }

    /// Drops the stale entries due at `now` when they outnumber the live due entries and an
    /// eighth of the queue (plus 64), by a rebuild (O(n)). Stale entries surface only at the
    /// top, so while live due entries stay there untaken (a slot move's unserved slots),
    /// those below them pile up, and every `due` and `countDue` walk would visit them; a loop
    /// in that state calls this once a turn. Each rebuild follows at least `count / 8` new
    /// stale entries, so its cost is O(1) amortized per removal or reschedule.
    /// - Returns: whether the heap was rebuilt.
    @discardableResult
    public mutating func compactDue(at now: Date) -> Bool {
        let cutoff = now.timeIntervalSinceReferenceDate
        var liveDue = 0
        var staleDue = 0
        var pending = heap.isEmpty ? [] : [0]
        while let position = pending.popLast() {
            let entry = heap[position]
            guard entry.stamp.deadline <= cutoff else { continue }
            if isLive(entry) { liveDue += 1 } else { staleDue += 1 }
            let firstChild = position * Self.arity + 1
            var child = firstChild
            while child < min(firstChild + Self.arity, heap.count) {
                pending.append(child)
                child += 1
            }
        }
        guard staleDue > max(liveDue, live.count / 8) + 64 else { return false }
        dropStaleEntries()
        rebuild()
        return true
    }

    /// Every key with its deadline (UTC), in no particular order. O(n).
    public var deadlines: [Key: Date] {
        var all: [Key: Date] = [:]
        all.reserveCapacity(live.count)
        for (key, stamp) in live { all[key] = stamp.instant }
        return all
    }

    /// How many entries the heap holds, stale ones included (for tests of its bound).
    var storedEntryCount: Int { heap.count }
}

extension TimerQueue: Equatable {
    /// Equal when the same keys have the same deadlines: the heap's layout, its stale entries
    /// and the order in which equal deadlines were set are how the queue is kept, not what it
    /// holds.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.count == rhs.count && lhs.live.allSatisfy { rhs.deadline(of: $0.key) == $0.value.instant }
    }
}
