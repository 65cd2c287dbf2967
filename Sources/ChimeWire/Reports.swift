import ChimeCore
import Foundation

/// The result of `status`: what the coordinator holds and how it is doing.
public struct StatusReport: Codable, Hashable, Sendable {
    /// Chime's version.
    public var version: String
    /// The coordinator's process id.
    public var pid: Int32
    /// When the coordinator started (UTC).
    public var startedAt: Date
    /// Seconds since start.
    public var uptimeSeconds: Double
    /// Reminder counts by state (`pending`, `delivered`, `disabled`, `finished`).
    public var reminders: [String: Int]
    /// Firings dispatched and not yet acknowledged.
    public var inFlight: Int
    /// Workers currently alive (heartbeat within the liveness window).
    public var workersAlive: Int
    /// The next occurrence of any reminder (UTC).
    public var nextFireAt: Date?
    /// With a file store: whether the store is full (the coordinator then refuses changes
    /// with `store_full` and retries its journal writes until space returns); absent
    /// without a file store.
    public var storeFull: Bool?
    /// The shard this coordinator serves (0 for a single coordinator).
    public var shard: Int?
    /// The epoch of the shard map it serves under (1 for a single coordinator).
    public var mapEpoch: UInt64?
    /// Firings due and not handed to a worker while no worker is alive (the shard is
    /// stalled: nothing fires until one comes); absent when a worker is alive or none is due.
    public var dueWithoutWorker: Int?
    /// With ``dueWithoutWorker``: how long the oldest of them has waited, in seconds.
    public var oldestDueAgeSeconds: Double?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        version: String, pid: Int32, startedAt: Date, uptimeSeconds: Double, reminders: [String: Int],
        inFlight: Int, workersAlive: Int, nextFireAt: Date?, storeFull: Bool? = nil
    ) {
        self.storeFull = storeFull
        self.version = version
        self.pid = pid
        self.startedAt = startedAt
        self.uptimeSeconds = uptimeSeconds
        self.reminders = reminders
        self.inFlight = inFlight
        self.workersAlive = workersAlive
        self.nextFireAt = nextFireAt
    }
}

/// One worker as `workers` shows it.
public struct WorkerReport: Codable, Hashable, Sendable {
    /// The worker's id.
    public var id: WorkerID
    /// The worker's host name.
    public var host: String
    /// The worker's process id.
    public var pid: Int32
    /// Whether its last heartbeat is within the liveness window.
    public var alive: Bool
    /// When the coordinator last heard from it (UTC).
    public var lastSeenAt: Date
    /// Firings it acknowledged since the coordinator started.
    public var acknowledged: Int
    /// Firings it reported as delivered since it started (its own counter).
    public var delivered: Int
    /// Firings it takes at once: the credit of its last heartbeat (`nil` from an earlier
    /// coordinator).
    public var capacity: Int?
    /// Firings it holds now: leased to it, not yet acknowledged (`nil` from an earlier
    /// coordinator).
    public var leases: Int?
    /// Whether it is set aside (no firings while a healthy worker is there) for letting
    /// leases run out (`nil` from an earlier coordinator).
    public var quarantined: Bool?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        id: WorkerID, host: String, pid: Int32, alive: Bool, lastSeenAt: Date, acknowledged: Int, delivered: Int,
        capacity: Int? = nil, leases: Int? = nil, quarantined: Bool? = nil
    ) {
        self.capacity = capacity
        self.leases = leases
        self.quarantined = quarantined
        self.id = id
        self.host = host
        self.pid = pid
        self.alive = alive
        self.lastSeenAt = lastSeenAt
        self.acknowledged = acknowledged
        self.delivered = delivered
    }
}

/// The result of `workers`.
public struct WorkersResult: Codable, Hashable, Sendable {
    /// Every worker heard from since start, sorted by id.
    public var workers: [WorkerReport]
    /// Creates the value from its fields (see each property for meaning and units).
    public init(workers: [WorkerReport]) { self.workers = workers }
}

/// The result of `stats`: counters since start and lateness percentiles.
public struct StatsReport: Codable, Hashable, Sendable {
    /// Firings sent to workers, redeliveries included.
    public var dispatched: Int
    /// Redeliveries after a lease expired.
    public var redelivered: Int
    /// Firings acknowledged by a worker.
    public var acknowledged: Int
    /// Occurrences not delivered because the recipient's settings allow none of them.
    public var suppressed: Int = 0
    /// `dispatchedAt − dueAt` at the coordinator, in milliseconds.
    public var dispatchLateness: LatenessSummary?
    /// `firedAt − dueAt` as the delivering worker measured it, in milliseconds.
    public var fireLateness: LatenessSummary?
    /// Firings that exhausted their attempts since start.
    public var deadLettered: Int?
    /// Occurrences due and not yet handed to a worker (waiting for credit, or not yet fired
    /// because no worker can take them).
    public var dueBacklog: Int?
    /// How long the oldest due, unacknowledged firing or occurrence has waited, in seconds
    /// (0 when none).
    public var oldestUndeliveredAgeSeconds: Double?
    /// Firings dispatched per second over the last `rateWindowSeconds`.
    public var dispatchedPerSecond: Double?
    /// Firings acknowledged per second over the last `rateWindowSeconds`.
    public var acknowledgedPerSecond: Double?
    /// The window the rates cover, in seconds (up to a minute; shorter just after start).
    public var rateWindowSeconds: Double?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        dispatched: Int, redelivered: Int, acknowledged: Int, dispatchLateness: LatenessSummary?,
        fireLateness: LatenessSummary?
    ) {
        self.dispatched = dispatched
        self.redelivered = redelivered
        self.acknowledged = acknowledged
        self.dispatchLateness = dispatchLateness
        self.fireLateness = fireLateness
    }
}

/// The result of `store`, `snapshot` and `compact`: the file store's figures.
public struct StoreReport: Codable, Hashable, Sendable {
    /// The store directory; `nil` when the coordinator runs without a store.
    public var directory: String?
    /// `always`, `interval` or `never`.
    public var fsync: String
    /// The coordinator epoch (incremented at each start on this store).
    public var epoch: UInt64
    /// Bytes in journal segments.
    public var journalBytes: Int
    /// Journal segment files.
    public var segments: Int
    /// Snapshot files kept.
    public var snapshots: Int
    /// Bytes in snapshot files.
    public var snapshotBytes: Int
    /// The journal sequence the newest snapshot covers.
    public var snapshotSequence: UInt64?
    /// Records appended since start.
    public var appendedRecords: Int
    /// Duration of the last fsync, in milliseconds.
    public var lastFsyncMilliseconds: Double?
    /// How long the snapshot just written took, in milliseconds (`snapshot`, `compact` only).
    public var snapshotMilliseconds: Double?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        directory: String?, fsync: String, epoch: UInt64, journalBytes: Int, segments: Int, snapshots: Int,
        snapshotBytes: Int, snapshotSequence: UInt64?, appendedRecords: Int, lastFsyncMilliseconds: Double?,
        snapshotMilliseconds: Double? = nil
    ) {
        self.directory = directory
        self.fsync = fsync
        self.epoch = epoch
        self.journalBytes = journalBytes
        self.segments = segments
        self.snapshots = snapshots
        self.snapshotBytes = snapshotBytes
        self.snapshotSequence = snapshotSequence
        self.appendedRecords = appendedRecords
        self.lastFsyncMilliseconds = lastFsyncMilliseconds
        self.snapshotMilliseconds = snapshotMilliseconds
    }
}
