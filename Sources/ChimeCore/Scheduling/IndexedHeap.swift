/// A binary heap of unique keys ordered by a comparable priority, with a position index so
/// any key can be found, re-prioritised or removed in O(log n). `isMaxHeap` puts the
/// greatest priority on top instead of the least. Internal building block of `PendingCap`.
struct IndexedHeap<Key: Hashable & Sendable, Priority: Comparable & Sendable>: Sendable {
    private var entries: [(key: Key, priority: Priority)] = []
    private var positions: [Key: Int] = [:]
    private let isMaxHeap: Bool

    init(isMaxHeap: Bool) {
        self.isMaxHeap = isMaxHeap
    }

    var count: Int { entries.count }
    var top: (key: Key, priority: Priority)? { entries.first }

    func contains(_ key: Key) -> Bool { positions[key] != nil }
    func priority(of key: Key) -> Priority? { positions[key].map { entries[$0].priority } }

    /// The entries in heap order (not sorted).
    var unorderedEntries: [(key: Key, priority: Priority)] { entries }

    /// Inserts `key` or changes its priority. O(log n).
    mutating func update(_ key: Key, priority: Priority) {
        if let position = positions[key] {
            entries[position].priority = priority
            restoreOrder(at: position)
        } else {
            entries.append((key, priority))
            positions[key] = entries.count - 1
            siftUp(from: entries.count - 1)
        }
    }

    /// Removes `key`, returning its priority. O(log n).
    @discardableResult
    mutating func remove(_ key: Key) -> Priority? {
        guard let position = positions.removeValue(forKey: key) else { return nil }
        let removed = entries[position]
        let last = entries.removeLast()
        if position < entries.count {
            entries[position] = last
            positions[last.key] = position
            restoreOrder(at: position)
        }
        return removed.priority
    }

    /// Removes and returns the top entry. O(log n).
    mutating func popTop() -> (key: Key, priority: Priority)? {
        guard let first = entries.first else { return nil }
        remove(first.key)
        return first
    }

    private func isAbove(_ lhs: Priority, _ rhs: Priority) -> Bool {
        isMaxHeap ? rhs < lhs : lhs < rhs
    }

    private mutating func restoreOrder(at position: Int) {
        if position > 0 && isAbove(entries[position].priority, entries[(position - 1) / 2].priority) {
            siftUp(from: position)
        } else {
            siftDown(from: position)
        }
    }

    private mutating func siftUp(from start: Int) {
        var position = start
        while position > 0 {
            let parent = (position - 1) / 2
            guard isAbove(entries[position].priority, entries[parent].priority) else { break }
            swapAt(position, parent)
            position = parent
        }
    }

    private mutating func siftDown(from start: Int) {
        var position = start
        while true {
            var best = position
            let left = 2 * position + 1
            if left < entries.count && isAbove(entries[left].priority, entries[best].priority) {
                best = left
            }
            if left + 1 < entries.count && isAbove(entries[left + 1].priority, entries[best].priority) {
                best = left + 1
            }
            guard best != position else { break }
            swapAt(position, best)
            position = best
        }
    }

    private mutating func swapAt(_ first: Int, _ second: Int) {
        entries.swapAt(first, second)
        positions[entries[first].key] = first
        positions[entries[second].key] = second
    }
}
