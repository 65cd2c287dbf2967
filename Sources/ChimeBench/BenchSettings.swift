import Foundation

/// How to run a benchmark: the workload, its size and the cluster's shape.
public struct BenchSettings: Sendable {
    public var workload: Workload
    /// N, the number of reminders.
    public var count: Int
    /// The coordinator's fsync policy: `always`, `interval` or `never`.
    public var fsync = "always"
    /// How many workers to start.
    public var workers = 2
    /// Each reminder's trigger spread in seconds (`--spread`): a burst fires over it; the
    /// lateness figures are then measured from each firing's own spread due instant.
    public var spread: Double?
    /// How many runs (each on a fresh cluster).
    public var runs = 1
    /// Reminders per `schedule` request; above 1 the run is labelled bulk.
    public var batch = 1
    /// Requests awaiting their reply at once on the one DEALER; above 1 the run is labelled pipelined.
    public var pipeline = 1
    /// The ingest rate the lead is computed from (W1, W2), reminders per second; `nil`
    /// picks ``defaultExpectedIngestRate``.
    public var expectedIngestRate: Double?
    /// A lead to use instead of the reference formula (W1, W2), seconds.
    public var lead: Double?
    /// Seconds without a new record that end observation (WORKLOADS.md: 20).
    public var quietSeconds: Double = 20
    /// JSON merged over the built-in configuration by every child.
    public var configuration = Data("{}".utf8)
    /// How the subscriber receives events.
    public var subscriber = BenchSubscriber.Mode.client
    /// A command the coordinator runs under (a profiler); empty for none. Reported.
    public var coordinatorWrapper: [String] = []
    /// A command each worker runs under; empty for none. Reported.
    public var workerWrapper: [String] = []
    /// Keep the run directory (store, logs, plan, records) instead of removing it.
    public var keepsDirectory = false
    /// Whether the cluster runs CURVE on every endpoint (keys made per run with
    /// `KeyDirectory.initialize`), to measure what encryption costs. Reported.
    public var curve = false
    /// How many shards (coordinators, each owning an even share of the slots); 1: one
    /// coordinator without a `cluster` section, as before sharding. Reported.
    public var shards = 1
    /// How many distinct recipients the plan's reminders go to (id `i` to recipient
    /// `i mod recipients`); `nil` picks ``defaultRecipients``. Reported.
    public var recipients: Int?
    /// Whether a disk-contention generator (``DiskContention``: 64 MiB files written and
    /// `fdatasync`ed in a loop on the store's filesystem) runs from the cluster's start to the
    /// end of observation. Reported.
    public var diskContention = false
    /// A peer scheduler run after each Chime run on the same workload (W1, W2), each run on
    /// a fresh plan; `nil`: Chime alone.
    public var peer: PeerScheduler?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(workload: Workload, count: Int? = nil) {
        self.workload = workload
        self.count = count ?? workload.standardCount
        if workload == .w4 { batch = 1000 }
    }

    /// The recipient count of a run: the given one, else W4's 1,000 (`user-0` …), else 1
    /// (`bench`, as before sharding) on one shard and 1,000 (`bench-0` …) on several, so
    /// that every shard gets a share.
    public var defaultRecipients: Int {
        if let recipients { return recipients }
        return workload == .w4 || shards > 1 ? 1000 : 1
    }

    /// The recipient names, `recipientNames[i % count]` being reminder `i`'s: `user-K` for
    /// W4; `bench` alone or `bench-K` for the others.
    public var recipientNames: [String] {
        let count = max(1, defaultRecipients)
        if workload == .w4 { return (0..<count).map { "user-\($0)" } }
        return count == 1 ? ["bench"] : (0..<count).map { "bench-\($0)" }
    }

    /// Whether reminders go in batches (the bulk variant).
    public var isBulk: Bool { batch > 1 }

    /// Whether an acknowledged schedule request is on disk (`fsync always`).
    public var isDurable: Bool { fsync == "always" }

    /// The expected ingest rate, reminders per second: the given one, else a figure measured
    /// on the 2-core reference machine for this kind of ingestion, with margin.
    public var defaultExpectedIngestRate: Double {
        if let expectedIngestRate { return expectedIngestRate }
        switch (isBulk, fsync) {
        case (true, _): return 20_000
        case (false, "always"): return 1_000
        default: return 2_000
        }
    }

    /// The lead of a run, seconds: the override, else the workload's rule.
    public var effectiveLead: Double {
        if let lead, workload == .w1 || workload == .w2 { return lead }
        return workload.lead(count: count, expectedIngestRate: defaultExpectedIngestRate)
    }
}
