import ChimeRuntime
import ChimeWire
import Foundation
import ChimeClient
import ChimeSecurity

/// A Chime cluster for one benchmark run: the `chime` binary started as N coordinators
/// (shards; file store in a temporary directory each) and workers serving every shard, on
/// free loopback ports. Every child is stopped by its own pid: SIGTERM, then SIGKILL after a
/// grace period.
///
/// One shard is the cluster as before sharding: one coordinator on five ports from
/// `portBase` (`--port-base`), no `cluster` section. Several shards get a generated `cluster`
/// section (``BenchShardLayout``): shard k on the block `portBase + 10k`, its store in
/// `store/shard-k`, started with `--shard k`; the workers read the map and serve them all.
///
/// Children log at `warning` into files in the run's directory, which is removed at the
/// end unless `keepsDirectory` is set.
public final class BenchCluster {
    /// The run's temporary directory (store, logs, plan and records files).
    public let directory: URL
    /// The first loopback port (shard 0's control endpoint).
    public let portBase: Int
    /// The shard map with several shards; `nil` for one coordinator without a `cluster` section.
    public let map: ShardMap?
    /// Whether to keep `directory` when the cluster is released.
    public var keepsDirectory = false
    /// A command each coordinator runs under (a profiler: `valgrind --tool=callgrind`,
    /// `perf record -g -o FILE --`); empty for none.
    public var coordinatorWrapper: [String] = []
    /// A command each worker runs under; empty for none.
    public var workerWrapper: [String] = []
    /// Ends the waits early (Ctrl-C): they then throw.
    public var stopSignal: StopSignal?
    let binary: URL
    let workerCount: Int
    let fsync: String
    let sampler: RSSSampler
    /// The coordinators by shard index (`nil` before the first start).
    var coordinators: [ChildSupervisor?]
    var workers: [ChildSupervisor] = []
    private var starts = 0
    /// With CURVE: the operator's keys, for the bench's own control clients.
    public private(set) var operatorKeys: CurveClientKeys?
    /// With CURVE: the subscriber's keys, for the bench's subscriber.
    public private(set) var subscriberKeys: CurveClientKeys?

    /// Picks free ports, makes the directory and writes the configuration; starts nothing.
    /// - Parameters:
    ///   - binary: the `chime` executable.
    ///   - shards: coordinators to run (1 or more).
    ///   - configuration: JSON merged over the built-in defaults by the children (`{}` for none).
    ///   - sampler: told the pids of every child started.
    ///   - curve: make a key directory in the run's directory and serve CURVE with it
    ///     (`security.keys` added to the configuration).
    /// - Throws: `BenchError` when no free ports are found or the configuration is not a JSON
    ///   object; `SecurityError`; file-system errors.
    public init(
        binary: URL, shards: Int = 1, workers: Int, fsync: String, configuration: Data, sampler: RSSSampler, curve: Bool = false
    ) throws {
        self.binary = binary
        self.workerCount = workers
        self.fsync = fsync
        self.sampler = sampler
        coordinators = Array(repeating: nil, count: max(1, shards))
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("chime-bench-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Five endpoints and the coordinator's HTTP (base + 5), per shard.
        let ports = shards > 1 ? BenchShardLayout.portsPerShard * shards : 6
        guard let base = BenchShardLayout.freeBase(count: ports) else {
            throw BenchError("no \(ports) free consecutive loopback ports found")
        }
        portBase = base
        map = shards > 1 ? BenchShardLayout.map(shards: shards, base: base) : nil
        var configuration = configuration
        if curve {
            let keys = directory.appendingPathComponent("keys")
            try KeyDirectory.initialize(at: keys)
            operatorKeys = try SecuritySettings.clientKeys(in: keys, role: .operator)
            subscriberKeys = try SecuritySettings.clientKeys(in: keys, role: .subscriber)
            guard var object = try JSONSerialization.jsonObject(with: configuration) as? [String: Any] else {
                throw BenchError("the cluster configuration must be a JSON object")
            }
            var security = object["security"] as? [String: Any] ?? [:]
            security["keys"] = keys.path
            object["security"] = security
            configuration = try JSONSerialization.data(withJSONObject: object)
        }
        if let map { configuration = try BenchShardLayout.configuration(configuration, map: map) }
        try configuration.write(to: directory.appendingPathComponent("chime.json"))
    }

    deinit {
        stop()
        if !keepsDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    /// How many shards (coordinators) the cluster has.
    public var shardCount: Int { coordinators.count }
    /// Each shard's control endpoint, by shard index.
    public var controlEndpoints: [String] { map?.shards.map(\.endpoints.control) ?? ["tcp://127.0.0.1:\(portBase)"] }
    /// Each shard's events endpoint, by shard index.
    public var eventsEndpoints: [String] { map?.shards.map(\.endpoints.events) ?? ["tcp://127.0.0.1:\(portBase + 3)"] }
    /// Shard 0's control endpoint (the only one with one shard).
    public var controlEndpoint: String { controlEndpoints[0] }
    /// Shard 0's events endpoint (the only one with one shard).
    public var eventsEndpoint: String { eventsEndpoints[0] }
    /// The store directory of every shard (`store`, or `store/shard-k` under it).
    public var storeDirectory: URL { directory.appendingPathComponent("store") }
    /// Shard `index`'s store directory.
    public func storeDirectory(shard index: Int) -> URL {
        map == nil ? storeDirectory : storeDirectory.appendingPathComponent("shard-\(index)")
    }
    /// Shard 0's live coordinator's pid.
    public var coordinatorPID: Int32? { coordinatorPIDs.first ?? nil }
    /// Each shard's live coordinator's pid, by shard index.
    public var coordinatorPIDs: [Int32?] { coordinators.map { $0?.pid } }

    var commonArguments: [String] {
        // With a cluster section each shard takes its endpoints from the map.
        ["--config", directory.appendingPathComponent("chime.json").path, "--log-level", "warning"]
            + (map == nil ? ["--port-base", String(portBase)] : [])
    }

    /// Starts every shard's coordinator (on the same store at every start).
    public func startCoordinator() throws {
        for index in coordinators.indices { try startCoordinator(shard: index) }
    }

    /// Starts shard `index`'s coordinator (on its store, the same at every start).
    public func startCoordinator(shard index: Int) throws {
        let name = map == nil ? "coordinator" : "coordinator-\(index)"
        let shardArguments = map == nil ? [] : ["--shard", String(map?.shards[index].id ?? index)]
        let child = try spawn(
            name,
            ["coordinator", "--store", storeDirectory(shard: index).path, "--fsync", fsync] + shardArguments + commonArguments,
            wrapper: coordinatorWrapper)
        coordinators[index] = child
        sampler.setCoordinator(coordinators.map { $0?.pid ?? 0 })
    }

    /// Starts the workers, `worker-1` … `worker-N` (the same ids at every start).
    public func startWorkers() throws {
        workers = try (1...workerCount).map { index in
            try spawn("worker-\(index)", ["worker", "--id", "worker-\(index)"] + commonArguments, wrapper: workerWrapper)
        }
        sampler.setWorkers(workers.compactMap(\.pid))
    }

    /// Every child started: the coordinators, then the workers.
    var children: [ChildSupervisor] { coordinators.compactMap { $0 } + workers }

    func spawn(_ name: String, _ arguments: [String], wrapper: [String] = []) throws -> ChildSupervisor {
        starts += 1
        let launch: ChildSupervisor.Launch
        let log = ChildSupervisor.Launch.Output.file(directory.appendingPathComponent("\(name)-\(starts).log"))
        if wrapper.isEmpty {
            launch = .init(executable: binary, arguments: arguments, currentDirectory: directory, output: log)
        } else {
            launch = .init(
                executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: wrapper + [binary.path] + arguments,
                currentDirectory: directory, output: log)
        }
        let child = ChildSupervisor(name: name, launch: launch)
        try child.start()
        return child
    }
}

/// A benchmark that could not run as planned (a child died, a timeout, a bad reply).
public struct BenchError: Error, CustomStringConvertible {
    public var description: String
    /// Creates the value from its fields (see each property for meaning and units).
    public init(_ description: String) { self.description = description }
}
