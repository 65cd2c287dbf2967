import ChimeCore
import ChimeWire
import Foundation

/// One worker process as the workers page shows it: every shard's report of the same host
/// and process id folded into one row. A worker serves every shard it is given with one
/// connection each, so a cluster of two processes over three shards reports six workers;
/// this is the two.
public struct WorkerProcess: Codable, Hashable, Sendable {
    /// The worker ids it reported under, sorted (one, unless it was renamed between shards).
    public var names: [String]
    /// Its host name.
    public var host: String
    /// Its process id on `host`.
    public var pid: Int32
    /// The shards it is connected to, ascending.
    public var shards: [Int]
    /// The shards on which its last heartbeat is within the liveness window, ascending.
    public var aliveShards: [Int]
    /// Firings it holds now over every shard (leased, not yet acknowledged); `nil` when no
    /// shard said (an earlier coordinator).
    public var inFlight: Int?
    /// Its capacity summed over the shards (each connection has its own credit); `nil` when
    /// no shard said.
    public var capacity: Int?

    /// Whether any shard hears it.
    public var isAlive: Bool { !aliveShards.isEmpty }

    /// Creates the value from its fields (see each property for meaning and units).
    public init(names: [String], host: String, pid: Int32, shards: [Int], aliveShards: [Int], inFlight: Int?, capacity: Int?) {
        self.names = names
        self.host = host
        self.pid = pid
        self.shards = shards
        self.aliveShards = aliveShards
        self.inFlight = inFlight
        self.capacity = capacity
    }

    /// The processes behind `rows`, grouped by host and process id, ordered by host, then
    /// process id.
    public static func group(_ rows: [WorkerRow]) -> [WorkerProcess] {
        struct Identity: Hashable {
            var host: String
            var pid: Int32
        }
        var grouped: [Identity: WorkerProcess] = [:]
        for row in rows {
            let identity = Identity(host: row.worker.host, pid: row.worker.pid)
            var process = grouped[identity] ?? WorkerProcess(
                names: [], host: identity.host, pid: identity.pid, shards: [], aliveShards: [], inFlight: nil, capacity: nil)
            let name = row.worker.id.rawValue
            if !process.names.contains(name) { process.names.append(name) }
            if !process.shards.contains(row.shard) { process.shards.append(row.shard) }
            if row.worker.alive, !process.aliveShards.contains(row.shard) { process.aliveShards.append(row.shard) }
            // Saturating: the counts come from the coordinators' replies.
            if let leases = row.worker.leases { process.inFlight = Self.adding(process.inFlight, leases) }
            if let capacity = row.worker.capacity { process.capacity = Self.adding(process.capacity, capacity) }
            grouped[identity] = process
        }
        return grouped.values.map { process in
            var sorted = process
            sorted.names.sort()
            sorted.shards.sort()
            sorted.aliveShards.sort()
            return sorted
        }.sorted { ($0.host, $0.pid) < ($1.host, $1.pid) }
    }

    private static func adding(_ total: Int?, _ value: Int) -> Int {
        let (sum, overflow) = (total ?? 0).addingReportingOverflow(max(value, 0))
        return overflow ? Int.max : sum
    }
}
