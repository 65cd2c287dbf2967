import ChimeCore
import ChimeRuntime
import ChimeWire
import ChimeCommandLine
import Foundation
import HelperThreads
import ChimeClient

enum UpCommand: Command {
    static let spec = CommandSpec(
        name: "up",
        summary: "Run a local cluster: a coordinator and N workers as supervised child processes, printing fire events.",
        usage: "chime up [--shards N] [--workers N] [--store DIR] [--standby] [--no-samples] [--dashboard HOST:PORT | --no-dashboard] [--json] [--config PATH] [--port-base PORT]",
        options: [
            OptionSpec(name: "shards", value: "N", help: "How many shards (coordinators) to run (default 1): shard k on loopback ports base+10k..base+10k+5, its store in DIR/shard-k, the map register in DIR/map.json (chime shards uses it); every worker serves every shard."),
            OptionSpec(name: "workers", value: "N", help: "How many workers to start (default 2)."),
            OptionSpec(name: "store", value: "DIR", help: "The coordinator's store directory ('none': in memory). Default from store.directory."),
            OptionSpec(name: "standby", value: nil, help: "Also run a warm standby coordinator on the same store; it takes over within the lease (2 s) when the active one dies or pauses."),
            OptionSpec(name: "no-samples", value: nil, help: "Do not schedule the sample reminders named in the configuration."),
            OptionSpec(name: "json", value: nil, help: "Print fire events as JSON lines."),
            OptionSpec(name: "verbose", value: nil, help: "Show the children's info logs (default: warnings and errors)."),
        ] + dashboardOptions + CommonOptions.specs,
        details: """
            Supervises its children: one that exits is restarted (after 0.2 s, doubling to 5 s while it keeps
            exiting); a coordinator that stops answering for 3 s, or a worker the coordinator reports dead
            for 3 s while its process runs (paused, hung), is killed with SIGKILL and restarted.
            Ctrl-C (SIGINT) or SIGTERM stops the children with SIGTERM, then SIGKILL after 5 s.
            Before it starts anything it checks each store's lock and every port it would listen on
            (the coordinators' endpoints and HTTP, the dashboard's), and exits 1 with
            "already running (pid N)" when a store is locked, or names the port in use.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        let configuration = try CommonOptions.configuration(arguments)
        let workerCount = try arguments.integer("workers") ?? 2
        guard (1...64).contains(workerCount) else { throw UsageError("--workers must be between 1 and 64") }
        let shardCount = try arguments.integer("shards") ?? 1
        guard (1...64).contains(shardCount) else { throw UsageError("--shards must be between 1 and 64") }
        if shardCount > 1 { return try runShards(arguments, configuration, shards: shardCount, workers: workerCount) }
        let withStandby = arguments.has("standby")
        let storeDirectory = arguments.value("store") ?? configuration.store.directory
        if withStandby && storeDirectory == "none" {
            throw UsageError("--standby needs a store directory (a standby takes over the active coordinator's store)")
        }
        if storeDirectory != "none" {
            for warning in try storeMismatches(storeDirectory, shards: 1, register: "") { printError("warning: \(warning)") }
        }
        try refuseWhenRunning(
            stores: [storeDirectory],
            ports: plannedPorts(bind: bindEndpoints(configuration), http: configuration.http.listen, shard: nil)
                + plannedDashboard(arguments, base: try arguments.integer("port-base") ?? 7700),
            hint: "stop what listens there, or give another --port-base")
        let stop = StopSignal()
        installTerminationHandlers(stop)

        var childArguments: [String] = []
        if let path = CommonOptions.configurationPath(arguments) { childArguments += ["--config", path] }
        for name in ["port-base", "control", "dispatch", "results", "events", "events-ingest", "keys"] {
            if let value = arguments.value(name) { childArguments += ["--\(name)", value] }
        }
        childArguments += ["--log-level", arguments.has("verbose") ? "info" : "warning"]

        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        func child(_ name: String, _ arguments: [String]) -> ChildSupervisor {
            ChildSupervisor(name: name, launch: .init(executable: executable, arguments: arguments))
        }
        let storeArguments = arguments.value("store").map { ["--store", $0] } ?? []
        // With a standby both wait for the lock, so whichever restarts after the other took
        // over waits as the new standby.
        let coordinatorArguments = ["coordinator"] + (withStandby ? ["--standby"] : []) + childArguments + storeArguments
        let coordinators = [child("coordinator", coordinatorArguments)]
            + (withStandby ? [child("standby", coordinatorArguments)] : [])
        let workers = (1...workerCount).map { child("worker-\($0)", ["worker", "--id", "worker-\($0)"] + childArguments) }
        let everyChild = coordinators + workers
        defer {
            for (child, exit) in zip(everyChild, ChildSupervisor.stop(everyChild, grace: 5)) where exit?.neededKill == true {
                printError("chime up: \(child.name) ignored SIGTERM for 5 s and was killed")
            }
        }
        try coordinators[0].start()
        let client = try ControlClient(
            endpoint: configuration.endpoints.control.connect, timeout: .milliseconds(500), retries: 0,
            curve: try CommonOptions.clientKeys(configuration, role: .operator))
        let subscriberKeys = try CommonOptions.clientKeys(configuration, role: .subscriber)
        try waitUntil(deadline: 15, what: "the coordinator to answer", children: everyChild) {
            (try? client.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil
        }
        if withStandby { try coordinators[1].start() }
        for worker in workers { try worker.start() }
        try waitUntil(deadline: 15, what: "\(workerCount) workers to report", children: everyChild) {
            let reply = try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self)
            return (reply?.result?.workers.filter(\.alive).count ?? 0) >= workerCount
        }
        let standbyNote = withStandby ? ", standby pid \(coordinators[1].pid ?? 0)" : ""
        let dashboard = try dashboardChild(
            arguments, base: try arguments.integer("port-base") ?? 7700, childArguments: childArguments, executable: executable)
        defer { if let dashboard { _ = ChildSupervisor.stop([dashboard.child], grace: 5) } }
        output("chime up: coordinator pid \(coordinators[0].pid ?? 0)\(standbyNote) on \(configuration.endpoints.control.connect), \(workerCount) workers; events on \(configuration.endpoints.events.connect). Ctrl-C to stop.")

        let json = arguments.has("json")
        let eventsEndpoint = configuration.endpoints.events.connect
        let subscribed = DispatchSemaphore(value: 0)
        let subscriberThread = HelperThread(name: "chime-up-subscriber")
        subscriberThread.start {
            do {
                let subscriber = SubscriberClient(endpoint: eventsEndpoint, recipient: nil, stop: stop, curve: subscriberKeys)
                try subscriber.run(onReady: { subscribed.signal() }) { event, raw in
                    output(json ? String(decoding: raw, as: UTF8.self) : describe(event))
                }
            } catch {
                printError("subscriber: \(error)")
                subscribed.signal()
            }
        }
        subscribed.wait()

        if !arguments.has("no-samples") {
            try scheduleSamples(configuration, configurationPath: CommonOptions.configurationPath(arguments), client: client)
        }
        startDashboard(dashboard)
        var dashboardExitReported = false
        let supervisor = UpSupervisor(coordinators: coordinators, workers: workers, client: client) { printError($0) }
        while !stop.isStopRequested {
            supervisor.superviseOnce()
            noteDashboardExit(dashboard, reported: &dashboardExitReported)
            Thread.sleep(forTimeInterval: 0.1)
        }
        subscriberThread.join()
        output("chime up: stopping")
        return 0
    }

    static func scheduleSamples(_ configuration: ChimeConfiguration, configurationPath: String?, client: ControlClient) throws {
        let base = configurationPath.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        for file in configuration.sampleReminders {
            let path = file.hasPrefix("/") ? file : base.appendingPathComponent(file).path
            let reminders = try ReminderFile.load(path: path, now: Date())
            let (reply, _) = try client.call(ControlRequest(command: .schedule(reminders)), ScheduleResult.self)
            output("chime up: scheduled \(reply.result?.scheduled.count ?? 0) sample reminders from \(file)")
        }
    }

    /// Polls `condition` every 100 ms until it holds, a child dies, or `deadline` seconds pass.
    static func waitUntil(deadline: Double, what: String, children: [ChildSupervisor], _ condition: () -> Bool) throws {
        let end = Date().addingTimeInterval(deadline)
        while Date() < end {
            if condition() { return }
            if let dead = children.first(where: { $0.process != nil && !$0.isRunning }) {
                throw RuntimeFailure("\(dead.name) (pid \(dead.process?.processIdentifier ?? 0)) exited (\(dead.exit.map { "\($0)" } ?? "?")) while waiting for \(what)")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw RuntimeFailure("timeout", "timed out after \(Int(deadline)) s waiting for \(what)")
    }
}
