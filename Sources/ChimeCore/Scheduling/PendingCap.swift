import Foundation

/// A per-recipient cap on armed pending firings (`maxPendingPerRecipient`): like iOS, which
/// keeps only the soonest 64 local notifications, only the soonest `limit` reminders of a
/// recipient are armed (in the timer queue); the rest wait and are promoted, soonest
/// first, as slots free.
///
/// Order is by next fire instant, ties broken by key, so the armed set depends only on the
/// current instants, never on the order of calls. Invariant: every armed entry comes
/// before every waiting one, and at most `limit` are armed.
///
/// Two indexed binary heaps hold the entries: the armed ones with the latest on top (the
/// one to demote), the waiting ones with the soonest on top (the one to promote).
/// ``schedule(_:nextFire:)`` and ``remove(_:)`` cost O(log n) for n entries, with at most
/// one promotion or demotion each; ``setLimit(_:)`` costs O(m log n) for m moves;
/// ``isArmed(_:)`` and ``nextFire(of:)`` cost O(1); the sorted listings O(n log n).
public struct PendingCap<Key: Hashable & Comparable & Sendable>: Sendable {
    /// A change to whether a key is armed, for the caller to carry into its timer queue.
    public enum Transition: Hashable, Sendable {
        /// The key is armed at its ``PendingCap/nextFire(of:)``: put it in the timer queue (or
        /// move it there).
        case armed(Key)
        /// The key waits: take it out of the timer queue.
        case disarmed(Key)
    }

    private struct Slot: Comparable, Sendable {
        var instant: Date
        var key: Key

        static func < (lhs: Slot, rhs: Slot) -> Bool {
            (lhs.instant, lhs.key) < (rhs.instant, rhs.key)
        }
    }

    /// The most armed entries, at least 1; `nil` for no cap (everything armed).
    public private(set) var limit: Int?
    private var armed = IndexedHeap<Key, Slot>(isMaxHeap: true)
    private var waiting = IndexedHeap<Key, Slot>(isMaxHeap: false)

    /// Creates an empty cap.
    /// - Parameter limit: the most armed entries, at least 1; `nil` for unlimited.
    public init(limit: Int?) {
        precondition(limit.map { $0 >= 1 } ?? true, "a pending cap must be at least 1")
        self.limit = limit
    }

    /// Creates a cap over `pending` reminders and their next fire instants (UTC): the soonest
    /// `limit` are armed. O(n log n).
    public init(limit: Int?, pending: [(key: Key, nextFire: Date)]) {
        self.init(limit: limit)
        for (key, nextFire) in pending { schedule(key, nextFire: nextFire) }
    }

    /// How many keys the cap holds, armed or waiting.
    public var count: Int { armed.count + waiting.count }
    /// How many keys are armed.
    public var armedCount: Int { armed.count }
    /// How many keys wait for a slot.
    public var waitingCount: Int { waiting.count }

    /// Whether `key` is armed; `false` for a waiting or unknown key. O(1).
    public func isArmed(_ key: Key) -> Bool { armed.contains(key) }

    /// The next fire instant of `key` (UTC), armed or waiting; `nil` for an unknown key. O(1).
    public func nextFire(of key: Key) -> Date? {
        (armed.priority(of: key) ?? waiting.priority(of: key))?.instant
    }

    /// The armed keys, soonest first.
    public var armedKeys: [Key] { armed.unorderedEntries.map(\.priority).sorted().map(\.key) }
    /// The waiting keys, soonest first (the next to be promoted first).
    public var waitingKeys: [Key] { waiting.unorderedEntries.map(\.priority).sorted().map(\.key) }

    /// Adds `key` with its next fire instant (UTC), or moves it to a new one.
    /// - Returns: `.armed(key)` when `key` ends armed (new or moved: re-arm it), and the
    ///   other keys promoted or demoted to keep the soonest `limit` armed.
    @discardableResult
    public mutating func schedule(_ key: Key, nextFire: Date) -> [Transition] {
        let slot = Slot(instant: nextFire, key: key)
        if armed.contains(key) {
            armed.update(key, priority: slot)
        } else {
            waiting.update(key, priority: slot)
        }
        var transitions = rebalance()
        if armed.contains(key) && !transitions.contains(.armed(key)) {
            transitions.append(.armed(key))
        }
        return transitions
    }

    /// Removes `key` (cancelled, disabled, finished or delivered one-shot).
    /// - Returns: the key promoted into a freed slot, if any (`key` itself is not reported).
    @discardableResult
    public mutating func remove(_ key: Key) -> [Transition] {
        if armed.remove(key) == nil {
            waiting.remove(key)
        }
        return rebalance()
    }

    /// Changes the cap; `nil` removes it.
    /// - Returns: the keys promoted (a larger cap) or demoted (a smaller one).
    @discardableResult
    public mutating func setLimit(_ newLimit: Int?) -> [Transition] {
        precondition(newLimit.map { $0 >= 1 } ?? true, "a pending cap must be at least 1")
        limit = newLimit
        return rebalance()
    }

    /// Restores the invariant: fill free slots, shed excess, then swap while a waiting entry
    /// comes before the latest armed one.
    private mutating func rebalance() -> [Transition] {
        let capacity = limit ?? .max
        var transitions: [Transition] = []
        while armed.count < capacity, let next = waiting.popTop() {
            armed.update(next.key, priority: next.priority)
            transitions.append(.armed(next.key))
        }
        while armed.count > capacity, let latest = armed.popTop() {
            waiting.update(latest.key, priority: latest.priority)
            transitions.append(.disarmed(latest.key))
        }
        while let latest = armed.top, let soonest = waiting.top, soonest.priority < latest.priority {
            armed.remove(latest.key)
            waiting.remove(soonest.key)
            armed.update(soonest.key, priority: soonest.priority)
            waiting.update(latest.key, priority: latest.priority)
            transitions.append(.disarmed(latest.key))
            transitions.append(.armed(soonest.key))
        }
        return transitions
    }
}

extension PendingCap: Equatable {
    /// Equal when the limits are and the same keys are armed and waiting with the same next
    /// fire instants (the heaps' layouts are how the cap is kept, not what it holds).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        func same(_ a: IndexedHeap<Key, Slot>, _ b: IndexedHeap<Key, Slot>) -> Bool {
            a.count == b.count && a.unorderedEntries.allSatisfy { b.priority(of: $0.key) == $0.priority }
        }
        return lhs.limit == rhs.limit && same(lhs.armed, rhs.armed) && same(lhs.waiting, rhs.waiting)
    }
}
