import ChimeCore
import ChimeWire
import Foundation

/// One shard as the overview shows it: what `status`, `stats` and `store` answered, or why
/// it did not answer (then every figure is `nil`).
public struct ShardOverview: Codable, Hashable, Sendable {
    /// The shard id (0 for one coordinator).
    public var shard: Int
    /// `active` when the shard's coordinator answered, `down` when it did not.
    public var phase: String
    /// Why the shard is shown down; `nil` when it answered.
    public var error: String?
    /// The coordinator epoch (one more at each start on the store).
    public var epoch: UInt64?
    /// Reminders held, by state (`pending`, `delivered`, `disabled`, `finished`, `suppressed`, `undelivered`).
    public var reminders: [String: Int]?
    /// Firings handed to a worker and not yet acknowledged.
    public var inFlight: Int?
    /// Firings due and not yet dispatched.
    public var dueBacklog: Int?
    /// Age of the oldest undelivered due firing, in seconds.
    public var oldestUndeliveredAgeSeconds: Double?
    /// Firings dispatched per second over the last minute.
    public var firingsPerSecond: Double?
    /// Fire lateness (due to delivery), milliseconds: p50, p99, max of the recent samples.
    public var fireLateness: LatenessSummary?
    /// Journal plus snapshot bytes on disk.
    public var storeBytes: Int?
    /// Whether the store is full (changes refused with `store_full`).
    public var storeFull: Bool?
    /// Workers heard from within the liveness window.
    public var workersAlive: Int?
    /// Firings dead-lettered since start.
    public var deadLettered: Int?

    /// A shard that did not answer.
    public static func down(_ shard: Int, error: String) -> ShardOverview {
        ShardOverview(shard: shard, phase: "down", error: error)
    }

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        shard: Int, phase: String, error: String? = nil, epoch: UInt64? = nil, reminders: [String: Int]? = nil,
        inFlight: Int? = nil, dueBacklog: Int? = nil, oldestUndeliveredAgeSeconds: Double? = nil,
        firingsPerSecond: Double? = nil, fireLateness: LatenessSummary? = nil, storeBytes: Int? = nil,
        storeFull: Bool? = nil, workersAlive: Int? = nil, deadLettered: Int? = nil
    ) {
        self.shard = shard
        self.phase = phase
        self.error = error
        self.epoch = epoch
        self.reminders = reminders
        self.inFlight = inFlight
        self.dueBacklog = dueBacklog
        self.oldestUndeliveredAgeSeconds = oldestUndeliveredAgeSeconds
        self.firingsPerSecond = firingsPerSecond
        self.fireLateness = fireLateness
        self.storeBytes = storeBytes
        self.storeFull = storeFull
        self.workersAlive = workersAlive
        self.deadLettered = deadLettered
    }
}

/// The overview: every shard of the map, taken at one instant.
public struct OverviewView: Codable, Hashable, Sendable {
    /// The shards in id order, down ones included.
    public var shards: [ShardOverview]
    /// When the figures were asked for (UTC).
    public var takenAt: Date
    /// Why no shard could be asked (no map); `nil` otherwise.
    public var error: String?
    /// Worker processes some shard hears (one per host and process id, however many shards
    /// it serves; see ``WorkerProcess``); `nil` when the workers could not be asked.
    public var workerProcesses: Int?

    /// Whether some shard did not answer.
    public var isPartial: Bool { error != nil || shards.contains { $0.phase == "down" } }

    /// Creates the value from its fields.
    public init(shards: [ShardOverview], takenAt: Date, error: String? = nil, workerProcesses: Int? = nil) {
        self.shards = shards
        self.takenAt = takenAt
        self.error = error
        self.workerProcesses = workerProcesses
    }
}

/// A worker as one shard reported it.
public struct WorkerRow: Codable, Hashable, Sendable {
    /// The shard whose coordinator reported it.
    public var shard: Int
    /// The report.
    public var worker: WorkerReport

    /// Creates the value from its fields.
    public init(shard: Int, worker: WorkerReport) {
        self.shard = shard
        self.worker = worker
    }
}

/// A shard that did not answer a scattered request.
public struct MissingShard: Codable, Hashable, Sendable {
    /// The shard id.
    public var shard: Int
    /// Why (the client's error sentence).
    public var error: String

    /// Creates the value from its fields.
    public init(shard: Int, error: String) {
        self.shard = shard
        self.error = error
    }
}

/// The workers page: every shard's workers, the processes behind them, and the shards
/// that did not answer.
public struct WorkersView: Codable, Hashable, Sendable {
    /// Workers by shard, then id: one row per connection of a worker process to a shard.
    public var workers: [WorkerRow]
    /// The worker processes behind `workers` (``WorkerProcess/group(_:)``).
    public var processes: [WorkerProcess]
    /// Shards that did not answer.
    public var missing: [MissingShard]
    /// Why no shard could be asked; `nil` otherwise.
    public var error: String?

    /// Creates the value from its fields; `processes` is grouped from `workers`.
    public init(workers: [WorkerRow], missing: [MissingShard], error: String? = nil) {
        self.workers = workers
        self.processes = WorkerProcess.group(workers)
        self.missing = missing
        self.error = error
    }
}

/// What the reminders page searches for; every field optional.
public struct ReminderSearch: Hashable, Sendable {
    /// One recipient's reminders (routed to its shard).
    public var recipient: String?
    /// One reminder id (every recipient's reminder of it without `recipient`).
    public var id: String?
    /// The `nextCursor` of the previous page.
    public var cursor: String?

    /// Creates the value; empty strings count as absent.
    public init(recipient: String? = nil, id: String? = nil, cursor: String? = nil) {
        self.recipient = recipient.flatMap { $0.isEmpty ? nil : $0 }
        self.id = id.flatMap { $0.isEmpty ? nil : $0 }
        self.cursor = cursor.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The control filter for this search.
    public var filter: ReminderFilter {
        ReminderFilter(ids: id.map { [ReminderID($0)] }, recipient: recipient.map { RecipientID($0) })
    }
}

/// A page of reminders or dead letters, with the next cursor and the shards that did not answer.
public struct PageView<Item: Codable & Hashable & Sendable>: Codable, Hashable, Sendable {
    /// The items of this page.
    public var items: [Item]
    /// Where the next page starts; `nil` on the last page.
    public var nextCursor: String?
    /// The `partial` sentence naming the shards that did not answer; `nil` when all did.
    public var partial: String?
    /// A line about some items, by the item's id (a dead letter's cause, by firing id).
    public var notes: [String: String] = [:]
    /// Dead letters' delivery failures (cause, worker, every destination's attempts), by
    /// firing id; `nil` on other pages and for a coordinator that records none.
    public var failures: [String: DeliveryFailure]?

    /// Creates the value from its fields.
    public init(
        items: [Item], nextCursor: String?, partial: String?, notes: [String: String] = [:], failures: [String: DeliveryFailure]? = nil
    ) {
        self.items = items
        self.nextCursor = nextCursor
        self.partial = partial
        self.notes = notes
        self.failures = failures
    }
}
