import ChimeClient
import ChimeCommandLine
import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import HelperThreads

/// `chime up --shards N`: N coordinators, each owning an even share of the slots, and
/// workers serving them all.
extension UpCommand {
    /// Ports between one shard's block and the next: shard k uses base + 10k … base + 10k + 4
    /// for its five endpoints and base + 10k + 5 for HTTP.
    static let portsPerShard = 10

    /// The configuration of the local cluster: `configuration` with a `cluster` section
    /// splitting the slots evenly over `shards` shards on loopback port blocks from `base`, and
    /// the map register the configuration names, else `localRegister` (`DIR/map.json` in the
    /// store; `nil` for an in-memory store: no register).
    static func clusterConfiguration(
        _ configuration: ChimeConfiguration, shards: Int, base: Int, localRegister: String?
    ) -> ChimeConfiguration {
        let map = ShardMap.evenlySplit(shards: shards) { id in
            let port = base + portsPerShard * id
            return ShardMap.Endpoints(
                control: "tcp://127.0.0.1:\(port)", dispatch: "tcp://127.0.0.1:\(port + 1)", results: "tcp://127.0.0.1:\(port + 2)",
                events: "tcp://127.0.0.1:\(port + 3)", eventsIngest: "tcp://127.0.0.1:\(port + 4)")
        }
        var clustered = configuration
        let httpOff = configuration.http.listen == "off"
        clustered.cluster = ChimeConfiguration.Cluster(map) { id in httpOff ? "off" : "127.0.0.1:\(base + portsPerShard * id + 5)" }
        // A map register named by the base configuration stays; else the store keeps one, so
        // `chime shards` finds it there (MapRegisterOptions.localRegister).
        clustered.cluster.register = configuration.cluster.register.isEmpty ? localRegister ?? "" : configuration.cluster.register
        return clustered
    }

    /// Runs the sharded local cluster until SIGINT or SIGTERM; see `UpCommand.run`.
    static func runShards(_ arguments: Arguments, _ configuration: ChimeConfiguration, shards: Int, workers workerCount: Int) throws -> Int32 {
        let base = try arguments.integer("port-base") ?? 7700
        guard (1...(65535 - portsPerShard * shards)).contains(base) else {
            throw UsageError("--port-base must leave room for \(shards) blocks of \(portsPerShard) ports")
        }
        let withStandby = arguments.has("standby")
        let storeDirectory = arguments.value("store") ?? configuration.store.directory
        let localRegister = MapRegisterOptions.localRegisterPath(storeDirectory: storeDirectory)
        let clustered = clusterConfiguration(configuration, shards: shards, base: base, localRegister: localRegister)
        guard let map = try ShardMap.configured(clustered.cluster) else { preconditionFailure("a generated cluster has shards") }
        if withStandby && storeDirectory == "none" {
            throw UsageError("--standby needs a store directory (a standby takes over the active coordinator's store)")
        }
        if storeDirectory != "none" {
            for warning in try storeMismatches(storeDirectory, shards: shards, register: clustered.cluster.register) {
                printError("warning: \(warning)")
            }
        }
        try refuseWhenRunning(
            stores: map.shards.map { storeDirectory == "none" ? "none" : "\(storeDirectory)/shard-\($0.id)" },
            ports: clustered.cluster.shards.flatMap { shard in
                let bind = shard.bind ?? shard.endpoints
                return plannedPorts(
                    bind: [
                        ("control", bind.control), ("dispatch", bind.dispatch), ("results", bind.results),
                        ("events", bind.events), ("events-ingest", bind.eventsIngest),
                    ],
                    http: shard.http, shard: shard.id)
            } + plannedDashboard(arguments, base: base),
            hint: "stop what listens there, or give another --port-base")
        // The register is written by the first coordinator, before it makes its own store folder.
        if storeDirectory != "none" { try FileManager.default.createDirectory(atPath: storeDirectory, withIntermediateDirectories: true) }
        let stop = StopSignal()
        installTerminationHandlers(stop)

        // The children read the map from a generated configuration file.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chime-up-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let configurationFile = folder.appendingPathComponent("chime.json")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(clustered).write(to: configurationFile)
        var childArguments = ["--config", configurationFile.path, "--log-level", arguments.has("verbose") ? "info" : "warning"]
        if let keys = arguments.value("keys") { childArguments += ["--keys", keys] }

        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        func child(_ name: String, _ arguments: [String]) -> ChildSupervisor {
            ChildSupervisor(name: name, launch: .init(executable: executable, arguments: arguments))
        }
        let coordinatorsByShard = map.shards.map { shard in
            let store = storeDirectory == "none" ? "none" : "\(storeDirectory)/shard-\(shard.id)"
            let command = ["coordinator", "--shard", String(shard.id), "--store", store] + (withStandby ? ["--standby"] : []) + childArguments
            return [child("coordinator-\(shard.id)", command)] + (withStandby ? [child("standby-\(shard.id)", command)] : [])
        }
        let workers = (1...workerCount).map { child("worker-\($0)", ["worker", "--id", "worker-\($0)"] + childArguments) }
        let everyChild = coordinatorsByShard.flatMap { $0 } + workers
        defer {
            for (child, exit) in zip(everyChild, ChildSupervisor.stop(everyChild, grace: 5)) where exit?.neededKill == true {
                printError("chime up: \(child.name) ignored SIGTERM for 5 s and was killed")
            }
        }
        let operatorKeys = try CommonOptions.clientKeys(configuration, role: .operator)
        let clients = try map.shards.map { shard in
            try ControlClient(endpoint: shard.endpoints.control, timeout: .milliseconds(500), retries: 0, curve: operatorKeys)
        }
        for coordinators in coordinatorsByShard { try coordinators[0].start() }
        for (shard, client) in zip(map.shards, clients) {
            try waitUntil(deadline: 15, what: "shard \(shard.id)'s coordinator to answer", children: everyChild) {
                (try? client.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil
            }
        }
        for coordinators in coordinatorsByShard where withStandby { try coordinators[1].start() }
        for worker in workers { try worker.start() }
        for (shard, client) in zip(map.shards, clients) {
            try waitUntil(deadline: 15, what: "\(workerCount) workers to report to shard \(shard.id)", children: everyChild) {
                let reply = try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self)
                return (reply?.result?.workers.filter(\.alive).count ?? 0) >= workerCount
            }
        }
        let dashboard = try dashboardChild(arguments, base: base, childArguments: childArguments, executable: executable)
        defer { if let dashboard { _ = ChildSupervisor.stop([dashboard.child], grace: 5) } }
        let pids = coordinatorsByShard.map { "\($0[0].pid ?? 0)" }.joined(separator: ", ")
        output("chime up: \(shards) shards (coordinator pids \(pids)\(withStandby ? ", each with a standby" : "")), control on \(map.shards.map(\.endpoints.control).joined(separator: " ")), \(workerCount) workers serving every shard. Ctrl-C to stop.")

        let subscriberThreads = try subscribeToEveryShard(map, configuration: configuration, json: arguments.has("json"), stop: stop)
        if !arguments.has("no-samples") {
            try scheduleSamples(
                configuration, configurationPath: CommonOptions.configurationPath(arguments), map: map, clients: clients)
        }
        // Workers are watched through every shard (a worker serves every shard, and one shard
        // that stops hearing from it is enough): the first supervisor asks them all.
        let everyShard = zip(map.shards, clients).map { (shard: $0.id, client: $1) }
        let supervisors = zip(coordinatorsByShard, clients).enumerated().map { index, pair in
            UpSupervisor(
                coordinators: pair.0, workers: index == 0 ? workers : [], client: pair.1,
                workerClients: index == 0 ? everyShard : []) { printError($0) }
        }
        startDashboard(dashboard)
        var dashboardExitReported = false
        while !stop.isStopRequested {
            for supervisor in supervisors { supervisor.superviseOnce() }
            noteDashboardExit(dashboard, reported: &dashboardExitReported)
            Thread.sleep(forTimeInterval: 0.1)
        }
        for thread in subscriberThreads { thread.join() }
        output("chime up: stopping")
        return 0
    }

    /// One subscriber thread per shard's event stream, printing every event; returns once
    /// each has subscribed (or failed).
    private static func subscribeToEveryShard(
        _ map: ShardMap, configuration: ChimeConfiguration, json: Bool, stop: StopSignal
    ) throws -> [HelperThread] {
        let subscriberKeys = try CommonOptions.clientKeys(configuration, role: .subscriber)
        let subscribed = DispatchSemaphore(value: 0)
        let threads = map.shards.map { shard in
            let thread = HelperThread(name: "chime-up-subscriber-\(shard.id)")
            let endpoint = shard.endpoints.events
            thread.start {
                do {
                    let subscriber = SubscriberClient(endpoint: endpoint, recipient: nil, stop: stop, curve: subscriberKeys)
                    try subscriber.run(onReady: { subscribed.signal() }) { event, raw in
                        output(json ? String(decoding: raw, as: UTF8.self) : describe(event))
                    }
                } catch {
                    printError("subscriber of shard \(shard.id): \(error)")
                    subscribed.signal()
                }
            }
            return thread
        }
        for _ in threads { subscribed.wait() }
        return threads
    }

    /// Schedules the sample reminders, each on its recipient's shard.
    static func scheduleSamples(
        _ configuration: ChimeConfiguration, configurationPath: String?, map: ShardMap, clients: [ControlClient]
    ) throws {
        let base = configurationPath.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        for file in configuration.sampleReminders {
            let path = file.hasPrefix("/") ? file : base.appendingPathComponent(file).path
            let reminders = try ReminderFile.load(path: path, now: Date())
            var scheduled = 0
            for (shard, client) in zip(map.shards, clients) {
                let own = reminders.filter { map.shard(of: $0.recipient)?.id == shard.id }
                guard !own.isEmpty else { continue }
                let (reply, _) = try client.call(ControlRequest(command: .schedule(own)), ScheduleResult.self)
                scheduled += reply.result?.scheduled.count ?? 0
            }
            output("chime up: scheduled \(scheduled) sample reminders from \(file)")
        }
    }
}
