import ChimeClient
import ChimeRuntime
import ChimeWire
import Foundation

/// A cluster of several shards: one coordinator per shard (`shard-<k>`, store `store-<k>` in
/// the cluster's folder) and workers serving every shard, all reading one configuration whose
/// `cluster` section holds the map.
extension LocalCluster {
    /// Ports per shard: shard k uses `portBase + 10k` … `+ 4` (make the cluster with
    /// `LocalCluster(portCount: 10 * shards)`).
    public static let portsPerShard = 10

    /// The map of `shards` shards splitting the slots evenly, on this cluster's port blocks.
    public func shardMap(shards: Int) -> ShardMap {
        ShardMap.evenlySplit(shards: shards) { id in
            let base = portBase + Self.portsPerShard * id
            return ShardMap.Endpoints(
                control: "tcp://127.0.0.1:\(base)", dispatch: "tcp://127.0.0.1:\(base + 1)", results: "tcp://127.0.0.1:\(base + 2)",
                events: "tcp://127.0.0.1:\(base + 3)", eventsIngest: "tcp://127.0.0.1:\(base + 4)")
        }
    }

    /// The arguments that point a `chime` command at the sharded configuration.
    public var shardedArguments: [String] { ["--config", directory.path("chime.json")] }

    /// Writes a configuration holding `map` (HTTP off; `extra` is more top-level JSON members,
    /// such as `"heartbeat": {…}`), starts one coordinator per shard and `workers` workers,
    /// and waits until every shard reports every worker alive.
    /// - Throws: `DeadlineExceeded` when the cluster is not up within 20 s.
    public func startShards(_ map: ShardMap, workers: Int, extra: String = "") throws {
        let cluster = String(decoding: try JSONEncoder().encode(map), as: UTF8.self)
        let json = #"{"http": {"listen": "off"}, "cluster": \#(cluster)\#(extra.isEmpty ? "" : ", " + extra)}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: directory.path("chime.json")))
        for shard in map.shards {
            try spawn("shard-\(shard.id)", ["coordinator", "--shard", String(shard.id), "--store", "store-\(shard.id)"] + shardedArguments)
        }
        for shard in map.shards { try waitForCoordinator(at: shard.endpoints.control, timeout: 20) }
        for index in 1...max(1, workers) where workers > 0 {
            try spawn("worker-\(index)", ["worker", "--id", "worker-\(index)"] + shardedArguments)
        }
        for shard in map.shards { try waitForAliveWorkers(workers, at: shard.endpoints.control, timeout: 20) }
    }

    /// Waits until the coordinator at `endpoint` answers `ping`, checking that no child died.
    /// - Throws: `DeadlineExceeded` after `timeout` seconds or when a child exited.
    public func waitForCoordinator(at endpoint: String, timeout: Double) throws {
        let client = try ControlClient(endpoint: endpoint, timeout: .milliseconds(100), retries: 0)
        try expectEventually(timeout: timeout, interval: 0.01, "the coordinator at \(endpoint) to answer ping") {
            try checkChildren()
            return (try? client.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil
        }
    }

    /// Waits until the coordinator at `endpoint` reports at least `count` live workers.
    /// - Throws: `DeadlineExceeded` after `timeout` seconds or when a child exited.
    public func waitForAliveWorkers(_ count: Int, at endpoint: String, timeout: Double) throws {
        let client = try ControlClient(endpoint: endpoint, timeout: .milliseconds(300), retries: 0)
        try expectEventually(timeout: timeout, interval: 0.05, "\(count) workers alive at \(endpoint)") {
            try checkChildren()
            let reply = try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self)
            return (reply?.result?.workers.filter(\.alive).count ?? 0) >= count
        }
    }
}
