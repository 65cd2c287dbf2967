/// A heap of unique keys ordered by a comparable priority, with a position index so any key
/// can be found, re-prioritised or removed in O(log n). `isMaxHeap` puts the greatest
/// priority on top instead of the least. The one heap behind `TimerQueue` and `PendingCap`.
///
/// 4-ary (a d-heap, D. B. Johnson 1975; Cormen et al., "Introduction to Algorithms",
/// problem 6-2): half the depth of a binary heap and the four children share cache lines,
/// which made popping from a million entries about 40 % faster. `@inlinable` so other
/// modules get it specialized for their key type (unspecialized, each operation looked up
/// generic metadata at run time).
@usableFromInline
struct IndexedHeap<Key: Hashable & Sendable, Priority: Comparable & Sendable>: Sendable {
    /// The heap, each entry with the stripe of `positions` its key lives in (hashed once, at
    /// insertion, not at every move).
    @usableFromInline var entries: [(key: Key, priority: Priority, stripe: Int)] = []
    /// Where each key is in `entries`; striped (`StripedDictionary`) for a big heap whose
    /// state is copied for a snapshot, so the next change copies a stripe, not the index.
    @usableFromInline var positions: StripedDictionary<Key, Int>
    @usableFromInline let isMaxHeap: Bool

    @inlinable
    init(isMaxHeap: Bool, stripeCount: Int = 1, stripeHash: (@Sendable (Key) -> UInt)? = nil) {
        self.isMaxHeap = isMaxHeap
        positions = StripedDictionary(stripeCount: stripeCount, stripeHash: stripeHash)
    }

    @inlinable var count: Int { entries.count }
    @inlinable var top: (key: Key, priority: Priority)? { entries.first.map { ($0.key, $0.priority) } }

    @inlinable func contains(_ key: Key) -> Bool { positions[key] != nil }
    @inlinable func priority(of key: Key) -> Priority? { positions[key].map { entries[$0].priority } }

    /// The entries in heap order (not sorted).
    @inlinable var unorderedEntries: [(key: Key, priority: Priority, stripe: Int)] { entries }

    /// The entries whose priority satisfies `isWithin`, which must hold for a prefix of the
    /// heap's order (true for the top entries, false from some priority on: "at or before a
    /// deadline" in a min-heap), in heap order, not sorted. A walk from the top that skips the
    /// subtree under every entry outside, so it costs O(k × arity) for k entries within,
    /// however many the heap holds.
    @inlinable
    func entries(where isWithin: (Priority) -> Bool) -> [(key: Key, priority: Priority)] {
        var found: [(key: Key, priority: Priority)] = []
        var pending = entries.isEmpty ? [] : [0]
        while let position = pending.popLast() {
            let entry = entries[position]
            guard isWithin(entry.priority) else { continue }
            found.append((entry.key, entry.priority))
            let firstChild = position * Self.arity + 1
            var child = firstChild
            while child < min(firstChild + Self.arity, entries.count) {
                pending.append(child)
                child += 1
            }
        }
        return found
    }

    /// Makes room for `capacity` keys without reallocating.
    @inlinable
    mutating func reserveCapacity(_ capacity: Int) {
        entries.reserveCapacity(capacity)
        positions.reserveCapacity(capacity)
    }

    /// Inserts `key` or changes its priority. O(log n).
    @inlinable
    mutating func update(_ key: Key, priority: Priority) {
        if let position = positions[key] {
            entries[position].priority = priority
            restoreOrder(at: position)
        } else {
            let stripe = positions.stripe(of: key)
            entries.append((key, priority, stripe))
            positions[key] = entries.count - 1
            siftUp(from: entries.count - 1)
        }
    }

    /// Inserts or re-prioritises many keys, as `update` called for each in order would. Into
    /// an empty heap the order is built bottom-up in O(n) (Floyd 1964) instead of n sifts.
    @inlinable
    mutating func update(contentsOf items: some Collection<(key: Key, priority: Priority)>) {
        guard entries.isEmpty else {
            for (key, priority) in items { update(key, priority: priority) }
            return
        }
        reserveCapacity(items.count)
        for (key, priority) in items {
            if let position = positions[key] {
                entries[position].priority = priority
            } else {
                positions[key] = entries.count
                entries.append((key, priority, positions.stripe(of: key)))
            }
        }
        guard entries.count > 1 else { return }
        for position in stride(from: (entries.count - 2) / Self.arity, through: 0, by: -1) {
            siftDown(from: position)
        }
    }

    /// Removes `key`, returning its priority. O(log n).
    @inlinable
    @discardableResult
    mutating func remove(_ key: Key) -> Priority? {
        guard let position = positions.removeValue(forKey: key) else { return nil }
        let removed = entries[position]
        let last = entries.removeLast()
        if position < entries.count {
            entries[position] = last
            positions[last.key, inStripe: last.stripe] = position
            restoreOrder(at: position)
        }
        return removed.priority
    }

    /// Removes and returns the top entry. O(log n).
    @inlinable
    mutating func popTop() -> (key: Key, priority: Priority)? {
        guard let first = entries.first else { return nil }
        remove(first.key)
        return (first.key, first.priority)
    }

    @inlinable static var arity: Int { 4 }

    @inlinable
    func isAbove(_ lhs: Priority, _ rhs: Priority) -> Bool {
        isMaxHeap ? rhs < lhs : lhs < rhs
    }

    @inlinable
    mutating func restoreOrder(at position: Int) {
        if position > 0 && isAbove(entries[position].priority, entries[(position - 1) / Self.arity].priority) {
            siftUp(from: position)
        } else {
            siftDown(from: position)
        }
    }

    /// Moves the entry at `start` up, shifting parents down into the hole it leaves.
    @inlinable
    mutating func siftUp(from start: Int) {
        let moving = entries[start]
        var position = start
        while position > 0 {
            let parent = (position - 1) / Self.arity
            guard isAbove(moving.priority, entries[parent].priority) else { break }
            entries[position] = entries[parent]
            positions[entries[position].key, inStripe: entries[position].stripe] = position
            position = parent
        }
        entries[position] = moving
        positions[moving.key, inStripe: moving.stripe] = position
    }

    /// Moves the entry at `start` down, shifting the best child up into the hole each time.
    @inlinable
    mutating func siftDown(from start: Int) {
        let moving = entries[start]
        var position = start
        while true {
            let firstChild = Self.arity * position + 1
            guard firstChild < entries.count else { break }
            var child = firstChild
            for sibling in (firstChild + 1)..<min(firstChild + Self.arity, entries.count)
            where isAbove(entries[sibling].priority, entries[child].priority) {
                child = sibling
            }
            guard isAbove(entries[child].priority, moving.priority) else { break }
            entries[position] = entries[child]
            positions[entries[position].key, inStripe: entries[position].stripe] = position
            position = child
        }
        entries[position] = moving
        positions[moving.key, inStripe: moving.stripe] = position
    }
}
