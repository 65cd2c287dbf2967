import ChimeCore
import Foundation

/// Coordinator → one worker, on the dispatch ROUTER socket: a batch of due firings.
///
/// JSON shape: `{"epoch": 1, "leaseMilliseconds": 10000, "firings": [Firing…],
/// "revoked": ["<firing id>"…]}`. One frame (after the ROUTER's routing frame, which the
/// worker's DEALER does not see). A worker must acknowledge each firing within the lease or
/// it is redelivered; the lease counts from the firing's `dueAt` when that is later than its
/// arrival (a firing handed over ahead of its due instant, `coordinator.dispatchLeadMilliseconds`),
/// and the worker delivers such a firing at its `dueAt`, not on arrival.
public struct DispatchBatch: Codable, Hashable, Sendable {
    /// The coordinator epoch that dispatched the batch (fencing token).
    public var epoch: UInt64
    /// How long the coordinator waits for an acknowledgement, in milliseconds.
    public var leaseMilliseconds: Int
    /// The firings to deliver.
    public var firings: [Firing]
    /// Action jobs to run (absent when none).
    public var jobs: [ActionJob]?
    /// Firings handed over ahead of their due instant that must not be delivered after all
    /// (their reminder was cancelled, switched off or replaced before they were due): a worker
    /// that still holds one drops it; one already delivered is acknowledged as usual (absent
    /// when none).
    public var revoked: [FiringID]?
    /// The delivery destinations of the batch's recipients that have any, by recipient id
    /// (JSON object `{"alice": [destination, …]}`; absent when none has: a batch for
    /// recipients without destinations carries no extra bytes). The worker delivers each
    /// firing to its recipient's destinations after the fire event.
    public var destinations: [String: [Destination]]?
    /// The destinations of firings that go to only some of their recipient's, by firing id
    /// (JSON object `{"<firing id>": [destination, …]}`, an empty list for none; absent when no
    /// firing of the batch is such): a retried dead letter goes only to the destinations that
    /// do not have it yet. For these firings it replaces `destinations`.
    public var firingDestinations: [String: [Destination]]?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        epoch: UInt64, leaseMilliseconds: Int, firings: [Firing], jobs: [ActionJob]? = nil, revoked: [FiringID]? = nil,
        destinations: [String: [Destination]]? = nil
    ) {
        self.destinations = destinations
        self.epoch = epoch
        self.leaseMilliseconds = leaseMilliseconds
        self.firings = firings
        self.jobs = jobs
        self.revoked = revoked
    }
}

/// Worker → coordinator, on the results PULL socket: a heartbeat, optionally carrying
/// acknowledgements.
///
/// JSON shape: `{"worker": "host-123", "host": "host", "pid": 123, "capacity": 4096,
/// "delivered": 42, "acks": [{"firingId", "firedAt", "attempt", "epoch"}], "leaving": true}`
/// (`leaving` only in a stopping worker's last message). Sent at least
/// every heartbeat interval, and as soon as acknowledgements are ready. `capacity` is how
/// many unacknowledged firings the worker accepts at once (its credit).
public struct WorkerMessage: Codable, Hashable, Sendable {
    /// One delivered firing.
    public struct Acknowledgement: Codable, Hashable, Sendable {
        /// The firing this is about.
        public var firingId: FiringID
        /// When the worker delivered it (UTC, the worker's clock).
        public var firedAt: Date
        /// Which dispatch attempt was delivered.
        public var attempt: Int
        /// The epoch of the batch it came in.
        public var epoch: UInt64

        /// Creates the value from its fields (see each property for meaning and units).
        public init(firingId: FiringID, firedAt: Date, attempt: Int, epoch: UInt64) {
            self.firingId = firingId
            self.firedAt = firedAt
            self.attempt = attempt
            self.epoch = epoch
        }
    }

    /// The worker's id (its DEALER routing id).
    public var worker: WorkerID
    /// The worker's host name.
    public var host: String
    /// The worker's process id.
    public var pid: Int32
    /// How many unacknowledged firings the worker accepts at once.
    public var capacity: Int
    /// Firings this worker delivered since it started.
    public var delivered: Int
    /// Firings delivered since the last message.
    public var acks: [Acknowledgement]
    /// Action jobs that ended since the last message (absent when none).
    public var outcomes: [ActionOutcome]?
    /// `true` in a stopping worker's last message (after the acknowledgements of everything
    /// it delivered): it takes nothing more, and the coordinator hands whatever it still
    /// holds to another worker at once instead of waiting for its lease (absent otherwise).
    public var leaving: Bool?
    /// What became of the destinations of acknowledged firings whose recipients have any
    /// (webhooks, APNs, FCM): one report per such firing, sent with its acknowledgement once
    /// every destination has an outcome (absent when none). A report with a failed
    /// destination turns its acknowledgement into a dead letter that says why.
    public var deliveries: [DeliveryReport]?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        worker: WorkerID, host: String, pid: Int32, capacity: Int = 4096, delivered: Int,
        acks: [Acknowledgement] = []
    ) {
        self.worker = worker
        self.host = host
        self.pid = pid
        self.capacity = capacity
        self.delivered = delivered
        self.acks = acks
    }
}

extension WorkerMessage {
    /// The largest `capacity` a worker may announce: a million unacknowledged firings (the
    /// default is 4,096). Sums of capacities then stay far inside `Int`.
    public static let maximumCapacity = 1_000_000
    /// The longest worker id and host name, in UTF-8 bytes.
    public static let maximumNameBytes = 255

    /// The message when every field is in range: a worker id of 1…255 UTF-8 bytes, a host of
    /// at most 255, `capacity` 0…``maximumCapacity``, `delivered` ≥ 0, every acknowledgement's
    /// `attempt` ≥ 1 and `firedAt` within `RFC3339.supportedInstants`.
    /// - Throws: `WireError` `.invalidArgument` naming the first field out of range.
    public func validated() throws(WireError) -> WorkerMessage {
        let workerBytes = worker.rawValue.utf8.count
        guard (1...Self.maximumNameBytes).contains(workerBytes) else {
            throw WireError(.invalidArgument, "a worker id has 1…255 bytes, not \(workerBytes)", field: "worker")
        }
        guard host.utf8.count <= Self.maximumNameBytes else {
            throw WireError(.invalidArgument, "a host name has at most 255 bytes", field: "host")
        }
        guard (0...Self.maximumCapacity).contains(capacity) else {
            throw WireError(
                .invalidArgument, "capacity must be 0…\(Self.maximumCapacity), not \(capacity)", field: "capacity")
        }
        guard delivered >= 0 else {
            throw WireError(.invalidArgument, "delivered must be at least 0, not \(delivered)", field: "delivered")
        }
        if let deliveries {
            guard deliveries.count <= max(acks.count, 1) else {
                throw WireError(.invalidArgument, "more delivery reports than acknowledgements", field: "deliveries")
            }
            for (index, report) in deliveries.enumerated() { _ = try report.validated(field: "deliveries[\(index)]") }
        }
        for (index, ack) in acks.enumerated() {
            guard ack.attempt >= 1 else {
                throw WireError(.invalidArgument, "attempt must be at least 1", field: "acks[\(index)].attempt")
            }
            guard RFC3339.isSupported(ack.firedAt) else {
                throw WireError(.invalidArgument, "firedAt is outside years 0001–9999", field: "acks[\(index)].firedAt")
            }
        }
        return self
    }
}
