import ChimeWire
import Foundation

/// The store as the decisions see it: whether there is a file store and whether its disk is
/// full, and the snapshots — when the next one is due, the one being written, the `snapshot`
/// and `compact` requests waiting for one, and the compactions waiting for the journal
/// writer to remove the segments their snapshot covers. Volatile: a restart answers none of
/// the waiting requests (their clients retry) and counts the replayed entries toward the next
/// snapshot (``CoordinatorState/onStoreOpened(isFileStore:entriesSinceSnapshot:)``).
struct StoreUpkeep: Sendable {
    /// A request answered by a snapshot: `snapshot` once it is written, `compact` once its
    /// segments are removed.
    typealias Waiting = (request: ControlRequest, client: ClientAddress)

    /// The snapshot being written.
    struct SnapshotInFlight: Sendable {
        /// The entries journaled since the previous snapshot that this one covers (counted
        /// again if it fails, so the next attempt comes as soon as it would have).
        var records: Int
        /// The `snapshot` and `compact` requests answered once it is written.
        var requests: [Waiting]
    }

    /// `compact` requests whose snapshot is written, waiting for its segments to go.
    struct Compaction: Sendable {
        /// The journal writer's number of the removal (`onSegmentRemovalQueued`), once asked.
        var removal: UInt64?
        /// The snapshot's sequence number.
        var sequence: UInt64
        /// How long the snapshot took, in milliseconds.
        var snapshotMilliseconds: Double
        var requests: [Waiting]
    }

    /// How long after a failed automatic snapshot the next one may start, in seconds.
    static let retryInterval = 10.0

    /// Whether the journal is a file store (snapshots, compactions); `false` for memory only.
    var isFileStore = false
    /// Whether the journal writer found the disk full (the store-full mode).
    var isFull = false
    /// Entries journaled since the last snapshot began (replayed ones count after a restart).
    var recordsSinceSnapshot = 0
    /// Since when the state has been quiet (``CoordinatorState/isQuiet(at:)``), a monotonic
    /// reading in seconds.
    var quietSince: Double?
    /// When (monotonic seconds) an automatic snapshot may be tried again after one failed.
    var retryAt: Double?
    /// The snapshot being written, when one is.
    var inFlight: SnapshotInFlight?
    /// `snapshot` and `compact` requests waiting for the next snapshot to start (one under
    /// way may not cover them).
    var waiting: [Waiting] = []
    /// Compactions waiting for their segments to go, oldest first.
    var compactions: [Compaction] = []

    /// The journal writer's numbers of the removals compactions wait for, oldest first.
    var awaitedRemovals: [UInt64] { compactions.compactMap(\.removal) }
}

/// How a snapshot the service wrote went (`CoordinatorState.onSnapshotWritten`).
public enum SnapshotResult: Sendable, Hashable {
    /// Written and renamed into place: its sequence number, how long it took (milliseconds),
    /// and the sequence number through which the journal's segments may now go (the oldest
    /// kept snapshot's; `nil`: none may yet).
    case written(sequence: UInt64, milliseconds: Double, segmentRemovalBound: UInt64?)
    /// It failed, for this reason (`isNoSpace`: the disk is full).
    case failed(reason: String, isNoSpace: Bool)
}

/// How a compaction's segment removal went (`CoordinatorState.onSegmentsRemoved`).
public enum SegmentRemovalResult: Sendable, Hashable {
    /// Removed: the journal's figures just after.
    case removed(JournalFigures)
    /// It failed, for this reason.
    case failed(reason: String)
}
