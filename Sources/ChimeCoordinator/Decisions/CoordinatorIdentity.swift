import Foundation

/// The running coordinator a state decides for: facts of its process and of its takeover of
/// the store, which the shell sets (``CoordinatorState/takeOver(as:)``), never tunables.
public struct CoordinatorIdentity: Sendable, Equatable {
    /// The fencing epoch stamped on every dispatch, and the one acknowledgements must carry:
    /// above every epoch the store recorded, set when this coordinator took the store.
    public var epoch: UInt64 = 1
    /// Chime's version, shown by `status`.
    public var version = "0.1.0"
    /// The coordinator's process id, shown by `status` (0 outside a process).
    public var pid: Int32 = 0
    /// When this coordinator started serving (UTC), for `status`.
    public var startedAt: Date

    /// An identity from its fields (see each property for meaning and units).
    public init(epoch: UInt64 = 1, version: String = "0.1.0", pid: Int32 = 0, startedAt: Date) {
        self.epoch = epoch
        self.version = version
        self.pid = pid
        self.startedAt = startedAt
    }
}
