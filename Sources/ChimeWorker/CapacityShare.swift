import Synchronization

/// One shard's share of a worker's capacity (firings it may hold unacknowledged at once),
/// set by the worker's ``CapacityPool`` and read by the shard's ``WorkerService`` on every
/// turn, which announces a change with its next heartbeat.
public final class CapacityShare: Sendable {
    private let firings: Atomic<Int>

    /// - Parameter firings: the share to start with.
    public init(_ firings: Int) {
        self.firings = Atomic(firings)
    }

    /// The current share, in firings.
    public var value: Int { firings.load(ordering: .acquiring) }

    /// Sets the share (from the pool, on any service's thread).
    public func set(_ newValue: Int) {
        firings.store(newValue, ordering: .releasing)
    }
}
