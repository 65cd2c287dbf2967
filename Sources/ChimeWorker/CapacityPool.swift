import Synchronization

/// A worker's capacity shared by the shards it serves by demand (issue 43, goal 5): a shard
/// whose firings use its share gets what the idle shards do not use, so one shard's burst can
/// use nearly the whole worker instead of `capacity / shards` of it.
///
/// Each shard's ``WorkerService`` reports, on every turn, how many firings it holds
/// unacknowledged (``report(shard:unacknowledged:)``), and announces the share it reads from its
/// ``CapacityShare`` (as before, on its next heartbeat; a service's loop turns at least every
/// 100 ms). The pool recomputes every share at most once per ``recomputeInterval`` from the
/// latest reports (``shares(total:unacknowledged:)``). The coordinator sends a worker no more
/// than its announced share less what it holds, so the shares together bound what the worker
/// holds, except that a lowered share takes effect only when that shard's service announces
/// it: for that turn (at most about 100 ms) the worker may hold up to twice its capacity.
public final class CapacityPool: Sendable {
    /// The least time between two recomputations, in seconds.
    public static let recomputeInterval = 0.01

    private struct Book {
        var unacknowledged: [Int: Int] = [:]
        var shares: [Int: CapacityShare] = [:]
        var computedAt = -Double.infinity
    }

    /// The worker's whole capacity (`worker.capacity`).
    public let total: Int
    private let book = Mutex(Book())

    /// - Parameter total: the worker's capacity, in firings held unacknowledged at once.
    public init(total: Int) {
        self.total = max(1, total)
    }

    /// One shard's place in the pool, handed to its service: the share it announces and
    /// where it reports what it holds.
    public struct Member: Sendable {
        /// The pool.
        public let pool: CapacityPool
        /// The shard's id.
        public let shard: Int
        /// The share to announce, read on every turn.
        public let share: CapacityShare

        /// Reports what the shard's service holds unacknowledged now (see
        /// ``CapacityPool/report(shard:unacknowledged:monotonic:)``).
        public func report(unacknowledged: Int, monotonic: Double) {
            pool.report(shard: shard, unacknowledged: unacknowledged, monotonic: monotonic)
        }
    }

    /// Adds `shard` (or finds it) and returns its place; every share is recomputed, the new
    /// shard's from holding nothing.
    public func join(shard: Int) -> Member {
        book.withLock { book in
            let share = book.shares[shard] ?? CapacityShare(1)
            book.shares[shard] = share
            book.unacknowledged[shard] = book.unacknowledged[shard] ?? 0
            apply(&book)
            return Member(pool: self, shard: shard, share: share)
        }
    }

    /// Removes `shard` (its service stopped); the others' shares grow at once.
    public func leave(shard: Int) {
        book.withLock { book in
            book.shares[shard] = nil
            book.unacknowledged[shard] = nil
            apply(&book)
        }
    }

    /// Records that `shard`'s service holds `unacknowledged` firings now (`monotonic`: its
    /// clock, in seconds) and recomputes the shares when ``recomputeInterval`` has passed.
    public func report(shard: Int, unacknowledged: Int, monotonic: Double) {
        book.withLock { book in
            guard book.unacknowledged[shard] != nil else { return }
            book.unacknowledged[shard] = max(0, unacknowledged)
            guard monotonic - book.computedAt >= Self.recomputeInterval else { return }
            book.computedAt = monotonic
            apply(&book)
        }
    }

    private func apply(_ book: inout Book) {
        let shards = book.shares.keys.sorted()
        let computed = Self.shares(total: total, unacknowledged: shards.map { book.unacknowledged[$0] ?? 0 })
        for (shard, share) in zip(shards, computed) { book.shares[shard]?.set(share) }
    }

    /// Each shard's share of `total` given what each holds unacknowledged (same order).
    ///
    /// - The even split is `max(1, total / n)`. A shard is *busy* when it holds at least half
    ///   of the floor, `max(1, split / 4)`; with no busy shard every share is the split (as
    ///   before demand counted).
    /// - Otherwise each idle shard keeps the floor (a burst starting there is taken at once,
    ///   and it turns busy), and the busy shards share the rest: each gets what it holds plus
    ///   an equal part of `total − idle floors − what the busy shards hold` (none when that is
    ///   negative), at least 1.
    ///
    /// So the shares add up to at most `total` (more only when the shards already hold more
    /// than it, or the floors and the minimum of 1 pass it with more shards than capacity),
    /// and a busy shard is never given less than it holds.
    /// - Returns: one share per entry of `unacknowledged`, in firings.
    public static func shares(total: Int, unacknowledged: [Int]) -> [Int] {
        let count = unacknowledged.count
        guard count > 0 else { return [] }
        let total = max(1, total)
        let split = max(1, total / count)
        let floor = max(1, split / 4)
        let isBusy = unacknowledged.map { $0 * 2 >= floor && $0 > 0 }
        let busyCount = isBusy.count { $0 }
        guard busyCount > 0 else { return Array(repeating: split, count: count) }
        var free = total
        for (held, busy) in zip(unacknowledged, isBusy) {
            free = free.subtractingReportingOverflow(busy ? max(0, held) : floor).partialValue
        }
        free = max(0, free)
        let part = free / busyCount
        var remainder = free % busyCount
        return zip(unacknowledged, isBusy).map { held, busy in
            guard busy else { return floor }
            var share = max(0, held).addingReportingOverflow(part).partialValue
            if remainder > 0 {
                share += 1
                remainder -= 1
            }
            return max(1, share)
        }
    }
}
