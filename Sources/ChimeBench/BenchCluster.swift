import ChimeRuntime
import ChimeWire
import Foundation
import ChimeClient
import ChimeSecurity

/// A Chime cluster for one benchmark run: the `chime` binary started as a coordinator (file
/// store in a temporary directory) and N workers on five free loopback ports. Every child
/// is stopped by its own pid: SIGTERM, then SIGKILL after a grace period.
///
/// Children log at `warning` into files in the run's directory, which is removed at the
/// end unless `keepsDirectory` is set.
public final class BenchCluster {
    /// The run's temporary directory (store, logs, plan and records files).
    public let directory: URL
    /// The first of the five loopback ports.
    public let portBase: Int
    /// Whether to keep `directory` when the cluster is released.
    public var keepsDirectory = false
    /// A command the coordinator runs under (a profiler: `valgrind --tool=callgrind`,
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
    private var coordinator: ChildSupervisor?
    private var workers: [ChildSupervisor] = []
    private var starts = 0
    /// With CURVE: the operator's keys, for the bench's own control clients.
    public private(set) var operatorKeys: CurveClientKeys?
    /// With CURVE: the subscriber's keys, for the bench's subscriber.
    public private(set) var subscriberKeys: CurveClientKeys?

    /// Picks free ports, makes the directory and writes the configuration; starts nothing.
    /// - Parameters:
    ///   - binary: the `chime` executable.
    ///   - configuration: JSON merged over the built-in defaults by the children (`{}` for none).
    ///   - sampler: told the pids of every child started.
    ///   - curve: make a key directory in the run's directory and serve CURVE with it
    ///     (`security.keys` added to the configuration).
    /// - Throws: `BenchError` when no free ports are found or the configuration is not a JSON
    ///   object; `SecurityError`; file-system errors.
    public init(binary: URL, workers: Int, fsync: String, configuration: Data, sampler: RSSSampler, curve: Bool = false) throws {
        self.binary = binary
        self.workerCount = workers
        self.fsync = fsync
        self.sampler = sampler
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("chime-bench-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Five endpoints and the coordinator's HTTP (base + 5).
        guard let base = LoopbackPorts.freeBase(count: 6) else { throw BenchError("no 6 free consecutive loopback ports found") }
        portBase = base
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
        try configuration.write(to: directory.appendingPathComponent("chime.json"))
    }

    deinit {
        stop()
        if !keepsDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    /// The control endpoint clients connect to.
    public var controlEndpoint: String { "tcp://127.0.0.1:\(portBase)" }
    /// The events endpoint subscribers connect to.
    public var eventsEndpoint: String { "tcp://127.0.0.1:\(portBase + 3)" }
    /// The coordinator's store directory.
    public var storeDirectory: URL { directory.appendingPathComponent("store") }
    /// The live coordinator's pid.
    public var coordinatorPID: Int32? { coordinator?.pid }

    var commonArguments: [String] {
        ["--config", directory.appendingPathComponent("chime.json").path, "--port-base", String(portBase),
         "--log-level", "warning"]
    }

    /// Starts the coordinator (on the same store at every start).
    public func startCoordinator() throws {
        let child = try spawn(
            "coordinator",
            ["coordinator", "--store", storeDirectory.path, "--fsync", fsync] + commonArguments,
            wrapper: coordinatorWrapper)
        coordinator = child
        sampler.setCoordinator(child.pid.map { [$0] } ?? [])
    }

    /// Starts the workers, `worker-1` … `worker-N` (the same ids at every start).
    public func startWorkers() throws {
        workers = try (1...workerCount).map { index in
            try spawn("worker-\(index)", ["worker", "--id", "worker-\(index)"] + commonArguments, wrapper: workerWrapper)
        }
        sampler.setWorkers(workers.compactMap(\.pid))
    }

    /// Polls `ping` (a fresh 50 ms attempt at a time) until the coordinator answers.
    /// - Returns: when it answered, epoch seconds.
    /// - Throws: `BenchError` when it does not answer within `timeout` seconds or exits.
    public func waitUntilAnswering(timeout: Double) throws -> Double {
        let client = try ControlClient(endpoint: controlEndpoint, timeout: .milliseconds(50), retries: 0, curve: operatorKeys)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? client.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil {
                return Date().timeIntervalSince1970
            }
            try checkAlive()
            if stopSignal?.isStopRequested == true { throw BenchError("interrupted") }
        }
        throw BenchError("the coordinator did not answer ping within \(timeout) s\n\(logTail())")
    }

    /// Waits until every worker is alive in the coordinator's `workers` view.
    /// - Throws: `BenchError` after `timeout` seconds or when a child exits.
    public func waitForWorkers(timeout: Double) throws {
        let client = try ControlClient(endpoint: controlEndpoint, timeout: .milliseconds(500), retries: 0, curve: operatorKeys)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let reply = try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self)
            if (reply?.result?.workers.filter(\.alive).count ?? 0) >= workerCount { return }
            try checkAlive()
            if stopSignal?.isStopRequested == true { throw BenchError("interrupted") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw BenchError("\(workerCount) workers were not alive within \(timeout) s\n\(logTail())")
    }

    /// SIGKILL to the coordinator and every worker, each by pid, back to back; waits for them.
    /// - Returns: when the first signal was sent, epoch seconds.
    public func killAll() -> Double {
        let killedAt = Date().timeIntervalSince1970
        let children = [coordinator].compactMap { $0 } + workers
        for child in children { child.signal(SIGKILL) }
        for child in children { child.kill() }
        return killedAt
    }

    /// SIGTERM to the coordinator, SIGKILL after `grace` seconds.
    /// - Returns: whether it exited within the grace period.
    @discardableResult
    public func stopCoordinator(grace: Double = 30) -> Bool {
        guard let coordinator else { return true }
        return coordinator.stop(grace: grace)?.neededKill != true
    }

    /// Stops every child at once: SIGTERM, then SIGKILL after 5 s.
    public func stop() {
        ChildSupervisor.stop([coordinator].compactMap { $0 } + workers, grace: 5)
    }

    /// Bytes of every file under the store directory.
    public func storeBytes() -> Int {
        guard let files = FileManager.default.enumerator(at: storeDirectory, includingPropertiesForKeys: [.fileSizeKey])
        else { return 0 }
        var total = 0
        for case let url as URL in files {
            total += (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
        }
        return total
    }

    /// Throws when a child has exited.
    func checkAlive() throws {
        for child in [coordinator].compactMap({ $0 }) + workers where !child.isRunning {
            throw BenchError("\(child.name) exited (\(child.exit.map { "\($0)" } ?? "?"))\n\(logTail())")
        }
    }

    /// The last lines of every child's log.
    public func logTail(lines: Int = 20) -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted().map { name in
            let text = (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
            let tail = text.split(separator: "\n").suffix(lines).joined(separator: "\n")
            return "== \(name)\n\(tail)"
        }.joined(separator: "\n")
    }

    private func spawn(_ name: String, _ arguments: [String], wrapper: [String] = []) throws -> ChildSupervisor {
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
