import Synchronization

/// One shard's share of a worker's capacity (firings it may hold unacknowledged at once),
/// set by the ``ShardedWorker`` supervising the shard's ``WorkerService`` and read by that
/// service's loop on every turn, which announces a change with its next heartbeat.
public final class CapacityShare: Sendable {
    private let firings: Atomic<Int>

    /// - Parameter firings: the share to start with.
    public init(_ firings: Int) {
        self.firings = Atomic(firings)
    }

    /// The current share, in firings.
    public var value: Int { firings.load(ordering: .acquiring) }

    /// Sets the share (from the supervising thread).
    public func set(_ newValue: Int) {
        firings.store(newValue, ordering: .releasing)
    }
}
