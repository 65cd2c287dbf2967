import ChimeCore
import ChimeWire
import Foundation

/// One shard's report with its id: JSON is the report's object with `"shard": id` added.
public struct ShardRow<Report: Codable & Sendable>: Codable, Sendable {
    /// The shard id.
    public var shard: Int
    /// What the shard answered.
    public var report: Report

    /// Creates the value from its fields (see each property for meaning).
    public init(shard: Int, report: Report) {
        self.shard = shard
        self.report = report
    }

    private enum CodingKeys: String, CodingKey { case shard }

    /// Decodes the report's object and its `shard`.
    /// - Throws: `DecodingError` when either is missing or malformed.
    public init(from decoder: any Decoder) throws {
        shard = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .shard)
        report = try Report(from: decoder)
    }

    /// Encodes the report's object with `shard` added.
    public func encode(to encoder: any Encoder) throws {
        try report.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(shard, forKey: .shard)
    }
}

/// A report gathered from every shard: one row per shard that answered, and the total.
///
/// JSON shape (the `result` of a multi-shard `chime ctl status|stats|workers --json`):
/// `{"shards": [{"shard": 0, …report}, …], "total": {…}, "missing": [2]}`; `missing` lists
/// the shards that did not answer (absent when all did).
public struct ClusterReport<Report: Codable & Sendable, Total: Codable & Sendable>: Codable, Sendable {
    /// One row per shard that answered, in shard-id order.
    public var shards: [ShardRow<Report>]
    /// The rows combined (see each merge function for how).
    public var total: Total
    /// The shards that did not answer, if any.
    public var missing: [Int]?

    /// Creates the value from its fields (see each property for meaning).
    public init(shards: [ShardRow<Report>], total: Total, missing: [Int]?) {
        self.shards = shards
        self.total = total
        self.missing = missing
    }
}

/// The total of every shard's `status`.
public struct StatusTotal: Codable, Hashable, Sendable {
    /// Reminders by state, summed.
    public var reminders: [String: Int]
    /// Firings in flight, summed.
    public var inFlight: Int
    /// Workers alive: the largest count any shard sees (a worker serves every shard).
    public var workersAlive: Int
    /// The earliest next occurrence (UTC).
    public var nextFireAt: Date?
    /// Whether any shard's store is full (absent when no shard has a file store).
    public var storeFull: Bool?
    /// Firings due with no live worker to take them, summed (absent when no shard is stalled).
    public var dueWithoutWorker: Int?
    /// The longest any of them has waited, in seconds (with ``dueWithoutWorker``).
    public var oldestDueAgeSeconds: Double?

    /// Sums `rows` (see each property).
    public init(_ rows: [StatusReport]) {
        reminders = rows.reduce(into: [:]) { total, row in total.merge(row.reminders, uniquingKeysWith: +) }
        inFlight = rows.reduce(0) { $0 + $1.inFlight }
        workersAlive = rows.map(\.workersAlive).max() ?? 0
        nextFireAt = rows.compactMap(\.nextFireAt).min()
        let full = rows.compactMap(\.storeFull)
        storeFull = full.isEmpty ? nil : full.contains(true)
        let stalled = rows.compactMap(\.dueWithoutWorker)
        dueWithoutWorker = stalled.isEmpty ? nil : stalled.reduce(0, +)
        oldestDueAgeSeconds = rows.compactMap(\.oldestDueAgeSeconds).max()
    }
}

extension StatsReport {
    /// Every shard's stats combined: counters, backlog and rates summed; the oldest
    /// undelivered age the largest; lateness figures the largest of each (an upper bound:
    /// percentiles of separate windows do not merge exactly), sample counts summed.
    public init(combining rows: [StatsReport]) {
        func sum(_ value: (StatsReport) -> Int) -> Int { rows.reduce(0) { $0 + value($1) } }
        self.init(
            dispatched: sum(\.dispatched), redelivered: sum(\.redelivered), acknowledged: sum(\.acknowledged),
            dispatchLateness: Self.largest(rows.compactMap(\.dispatchLateness)),
            fireLateness: Self.largest(rows.compactMap(\.fireLateness)))
        suppressed = sum(\.suppressed)
        deadLettered = rows.contains { $0.deadLettered != nil } ? sum { $0.deadLettered ?? 0 } : nil
        dueBacklog = rows.contains { $0.dueBacklog != nil } ? sum { $0.dueBacklog ?? 0 } : nil
        oldestUndeliveredAgeSeconds = rows.compactMap(\.oldestUndeliveredAgeSeconds).max()
        let rated = rows.filter { $0.rateWindowSeconds != nil }
        if !rated.isEmpty {
            dispatchedPerSecond = rated.reduce(0) { $0 + ($1.dispatchedPerSecond ?? 0) }
            acknowledgedPerSecond = rated.reduce(0) { $0 + ($1.acknowledgedPerSecond ?? 0) }
            rateWindowSeconds = rated.compactMap(\.rateWindowSeconds).min()
        }
    }

    static func largest(_ summaries: [LatenessSummary]) -> LatenessSummary? {
        guard !summaries.isEmpty else { return nil }
        return LatenessSummary(
            count: summaries.reduce(0) { $0 + $1.count }, p50: summaries.map(\.p50).max() ?? 0,
            p99: summaries.map(\.p99).max() ?? 0, max: summaries.map(\.max).max() ?? 0)
    }
}

/// The total of every shard's `workers`: each worker once (a worker serves every shard).
public struct WorkersTotal: Codable, Hashable, Sendable {
    /// Each worker once, by id: alive when any shard sees it alive, last seen the latest,
    /// acknowledged summed over shards, delivered the largest (the worker's own counter,
    /// reported to each shard).
    public var workers: [WorkerReport]

    /// Combines `rows`.
    public init(_ rows: [WorkersResult]) {
        var byID: [WorkerID: WorkerReport] = [:]
        for worker in rows.flatMap(\.workers) {
            guard var known = byID[worker.id] else {
                byID[worker.id] = worker
                continue
            }
            known.alive = known.alive || worker.alive
            known.lastSeenAt = max(known.lastSeenAt, worker.lastSeenAt)
            known.acknowledged += worker.acknowledged
            known.delivered = max(known.delivered, worker.delivered)
            byID[worker.id] = known
        }
        workers = byID.values.sorted { $0.id.rawValue < $1.id.rawValue }
    }
}

extension ClusterClient {
    /// Asks every shard for `request` and combines the rows with `total`.
    /// - Returns: the report (its `missing` set) and `partial` naming missing shards.
    /// - Throws: `WireError` as ``scatter(_:expecting:)``.
    public func report<Report: Codable & Sendable, Total: Codable & Sendable>(
        _ command: ControlRequest.Command, _ type: Report.Type, total: ([Report]) -> Total
    ) throws(WireError) -> (report: ClusterReport<Report, Total>, partial: WireError?) {
        let replies = try scatter(ControlRequest(command: command), expecting: Report.self)
        let rows = replies.results.map { ShardRow(shard: $0.shard, report: $0.result) }
        let missing = replies.missing.map(\.shard)
        return (
            ClusterReport(shards: rows, total: total(rows.map(\.report)), missing: missing.isEmpty ? nil : missing),
            replies.partialError
        )
    }
}
