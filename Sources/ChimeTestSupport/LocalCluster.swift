import ChimeRuntime
import ChimeWire
import Foundation
import Synchronization

/// A cluster of real `chime` processes on loopback for tests: one coordinator and N
/// workers on five free ports, each child stopped by its own pid (SIGTERM, then SIGKILL).
///
/// Children's output goes to log files in a temporary directory; `logs()` returns them,
/// and `withLocalCluster` prints them when the body throws.
public final class LocalCluster {
    /// The first of the five loopback ports (control, dispatch, results, events, eventsIngest).
    public let portBase: Int
    /// The `chime` executable under test.
    public let binary: URL
    /// Holds the children's logs.
    public let directory: TemporaryDirectory
    /// The running (or exited but not yet stopped) children, in start order.
    var children: [ChildSupervisor] = []
    /// Each child name's arguments (and wrapper command) at its last start, for `restart`.
    var argumentsByName: [String: [String]] = [:]
    var wrapperByName: [String: [String]] = [:]
    /// Variables added to the environment of the child of that name (at every start), such
    /// as `NOTIFY_SOCKET` and `WATCHDOG_USEC` for a supervised coordinator.
    public var environmentByName: [String: [String: String]] = [:]
    /// Variables added to the environment of every child and of every `run` (under
    /// `environmentByName`), such as the Kubernetes API overrides of a ConfigMap register.
    public var environment: [String: String] = [:]
    /// The children that needed SIGKILL when stopped (they ignored SIGTERM for the grace
    /// period), by name, since the cluster was made: a test may expect this to be empty.
    public private(set) var killedAfterGrace: [String] = []

    /// Picks `portCount` consecutive free ports (6: five endpoints and HTTP; a sharded
    /// cluster takes a block of 10 per shard); starts nothing yet.
    /// - Throws: `DeadlineExceeded` when no free port range is found; file-system errors.
    public init(portCount: Int = 7) throws {
        binary = try Self.locateBinary()
        portBase = try Self.freePortBase(count: portCount)
        directory = try TemporaryDirectory(prefix: "cluster")
    }

    /// The control endpoint (`tcp://127.0.0.1:<portBase>`).
    public var controlEndpoint: String { "tcp://127.0.0.1:\(portBase)" }
    /// The events endpoint subscribers connect to.
    public var eventsEndpoint: String { "tcp://127.0.0.1:\(portBase + 3)" }

    /// The arguments that point a `chime` command at this cluster.
    public var clusterArguments: [String] { ["--config", directory.path("chime.json"), "--port-base", String(portBase)] }

    /// Writes the configuration (`overrides` is JSON merged over the defaults), starts the
    /// coordinator (with `coordinatorArguments` added, such as `["--store", path]`) and
    /// `workers` workers named `worker-1`…, and waits until all workers are alive.
    /// - Throws: `DeadlineExceeded` when the cluster is not up within 20 s.
    public func start(workers: Int, configuration overrides: String = "{}", coordinatorArguments: [String] = []) throws {
        try Data(overrides.utf8).write(to: URL(fileURLWithPath: directory.path("chime.json")))
        try spawn("coordinator", ["coordinator"] + coordinatorArguments + clusterArguments)
        try waitForCoordinator(timeout: 20)
        for index in 1...max(1, workers) where workers > 0 {
            try spawn("worker-\(index)", ["worker", "--id", "worker-\(index)"] + clusterArguments)
        }
        try waitForAliveWorkers(workers, timeout: 20)
    }

    /// Starts a `chime` child process with the given arguments (log in the cluster folder:
    /// `<name>.log`, which a restarted child appends to, so every incarnation's lines stay).
    /// - Parameter wrapper: a command `chime` runs under (such as `unshare …`), or none.
    /// - Returns: the child.
    @discardableResult
    public func spawn(_ name: String, _ arguments: [String], wrapper: [String] = []) throws -> Process {
        let executable = wrapper.first.map { URL(fileURLWithPath: $0) } ?? binary
        let child = ChildSupervisor(
            name: name,
            launch: .init(
                executable: executable, arguments: wrapper.dropFirst() + (wrapper.isEmpty ? [] : [binary.path]) + arguments,
                environment: environment.merging(environmentByName[name] ?? [:]) { $1 },
                // The coordinator's default store (.chime/store) then lands in the cluster's folder.
                currentDirectory: directory.url, output: .file(URL(fileURLWithPath: directory.path("\(name).log")))))
        let process = try child.start()
        children.append(child)
        argumentsByName[name] = arguments
        wrapperByName[name] = wrapper
        return process
    }

    /// Runs a `chime` command to completion (at most `timeout` seconds) against this cluster.
    /// - Returns: exit status, standard output and standard error.
    public func run(_ arguments: [String], timeout: Double = 30) throws -> (status: Int32, output: String, error: String) {
        try Self.run(binary: binary, arguments + clusterArguments, timeout: timeout, environment: environment)
    }

    /// Runs `binary` with `arguments` (and `environment` added to this process's), killing
    /// it (SIGKILL) after `timeout` seconds.
    public static func run(binary: URL, _ arguments: [String], timeout: Double = 30, environment: [String: String] = [:]) throws
        -> (status: Int32, output: String, error: String)
    {
        let child = ChildSupervisor(name: binary.lastPathComponent, launch: .init(executable: binary, arguments: arguments, environment: environment))
        let output = Pipe()
        let error = Pipe()
        child.pipes = (output, error)
        try child.start()
        let collected = CollectedOutput()
        let group = DispatchGroup()
        for (pipe, isError) in [(output, false), (error, true)] {
            group.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.store(data, isError: isError)
                group.leave()
            }
        }
        // The pipes end when the child exits (or is killed); this process's own write ends
        // are closed by Foundation once the child runs.
        if group.wait(timeout: .now() + timeout) == .timedOut {
            child.kill()
            group.wait()
        }
        return (child.waitForExit(timeout: .infinity)?.status ?? -1, collected.output, collected.error)
    }

    /// Sends SIGTERM to one child by pid.
    public func terminate(_ name: String) {
        for child in children where child.name == name { child.signal(SIGTERM) }
    }

    /// Throws when a child has exited (a crash would otherwise look like a timeout).
    public func checkChildren() throws {
        if let dead = children.first(where: { !$0.isRunning }) {
            throw DeadlineExceeded(what: "\(dead.name) (exited: \(dead.exit.map { "\($0)" } ?? "?"))", seconds: 0)
        }
    }

    /// Stops every child at once (`ChildSupervisor.stop`: SIGTERM, then SIGKILL after 5 s) and
    /// forgets them. A child that needed SIGKILL is named on standard output and in
    /// `killedAfterGrace`.
    /// - Returns: how each child ended, by name.
    @discardableResult
    public func stop() -> [String: ChildSupervisor.Exit] {
        let stopping = children
        children.removeAll()
        var exits: [String: ChildSupervisor.Exit] = [:]
        for (child, exit) in zip(stopping, ChildSupervisor.stop(stopping, grace: 5)) {
            guard let exit else { continue }
            exits[child.name] = exit
            if exit.neededKill {
                killedAfterGrace.append(child.name)
                print("local cluster: \(child.name) ignored SIGTERM for 5 s and was killed")
            }
        }
        return exits
    }

    /// Every child's log, headed by its name.
    public func logs() -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted().map { name in
            "== \(name)\n" + ((try? String(contentsOfFile: directory.path(name), encoding: .utf8)) ?? "")
        }.joined(separator: "\n")
    }

    deinit { stop() }

    /// The built `chime`: `$CHIME_BINARY`, else next to the test bundle.
    public static func locateBinary() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["CHIME_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent("chime"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("chime"),
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
                .appendingPathComponent("chime"),
        ]
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) {
            return found
        }
        throw DeadlineExceeded(what: "the chime executable (set CHIME_BINARY); looked in \(candidates.map(\.path))", seconds: 0)
    }

    /// A base port whose `count` ports (by default seven: five endpoints, the coordinator's
    /// HTTP at base + 5, `chime up`'s dashboard at base + 6) are free on 127.0.0.1 (see
    /// `LoopbackPorts`).
    /// - Throws: `DeadlineExceeded` when none is found.
    public static func freePortBase(count: Int = 7) throws -> Int {
        guard let base = LoopbackPorts.freeBase(count: count) else {
            throw DeadlineExceeded(what: "\(count) free loopback ports", seconds: 0)
        }
        return base
    }
}

/// Runs `body` with a started local cluster and always stops it; prints the children's
/// logs when `body` throws. `coordinatorArguments` are added to the coordinator's command
/// line (a relative `--store` path lands in the cluster's folder).
public func withLocalCluster<T>(
    workers: Int = 2, configuration: String = "{}", coordinatorArguments: [String] = [],
    _ body: (LocalCluster) throws -> T
) throws -> T {
    let cluster = try LocalCluster()
    defer { cluster.stop() }
    do {
        try cluster.start(workers: workers, configuration: configuration, coordinatorArguments: coordinatorArguments)
        return try body(cluster)
    } catch {
        cluster.stop()
        print("local cluster failed: \(error)\n\(cluster.logs())")
        throw error
    }
}

/// Output gathered from a child's pipes on two threads.
final class CollectedOutput: Sendable {
    private let storage = Mutex<(output: Data, error: Data)>((Data(), Data()))
    func store(_ data: Data, isError: Bool) {
        storage.withLock { if isError { $0.error = data } else { $0.output = data } }
    }
    var output: String { String(decoding: storage.withLock { $0.output }, as: UTF8.self) }
    var error: String { String(decoding: storage.withLock { $0.error }, as: UTF8.self) }
}
