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
        summary: "Run a local cluster: a coordinator and N workers as child processes, printing fire events.",
        usage: "chime up [--workers N] [--store DIR] [--no-samples] [--json] [--config PATH] [--port-base PORT]",
        options: [
            OptionSpec(name: "workers", value: "N", help: "How many workers to start (default 2)."),
            OptionSpec(name: "store", value: "DIR", help: "The coordinator's store directory ('none': in memory). Default from store.directory."),
            OptionSpec(name: "no-samples", value: nil, help: "Do not schedule the sample reminders named in the configuration."),
            OptionSpec(name: "json", value: nil, help: "Print fire events as JSON lines."),
            OptionSpec(name: "verbose", value: nil, help: "Show the children's info logs (default: warnings and errors)."),
        ] + CommonOptions.specs,
        details: "Ctrl-C (SIGINT) or SIGTERM stops the children with SIGTERM, then SIGKILL after 5 s.")

    static func run(_ arguments: Arguments) throws -> Int32 {
        let configuration = try CommonOptions.configuration(arguments)
        let workerCount = try arguments.integer("workers") ?? 2
        guard (1...64).contains(workerCount) else { throw UsageError("--workers must be between 1 and 64") }
        let stop = StopSignal()
        installTerminationHandlers(stop)

        var childArguments: [String] = []
        if let path = CommonOptions.configurationPath(arguments) { childArguments += ["--config", path] }
        for name in ["port-base", "control", "dispatch", "results", "events", "events-ingest", "keys"] {
            if let value = arguments.value(name) { childArguments += ["--\(name)", value] }
        }
        childArguments += ["--log-level", arguments.has("verbose") ? "info" : "warning"]

        let children = ChildProcesses()
        defer { children.terminateAll(grace: 5) }
        let storeArguments = arguments.value("store").map { ["--store", $0] } ?? []
        let coordinator = try children.spawn(["coordinator"] + childArguments + storeArguments)
        let client = try ControlClient(
            endpoint: configuration.endpoints.control.connect, timeout: .milliseconds(500), retries: 0,
            curve: try CommonOptions.clientKeys(configuration, role: .operator))
        let subscriberKeys = try CommonOptions.clientKeys(configuration, role: .subscriber)
        try waitUntil(deadline: 15, what: "the coordinator to answer", children: children) {
            (try? client.call(ControlRequest(command: .ping), PongResult.self)) != nil
        }
        for index in 1...workerCount {
            try children.spawn(["worker", "--id", "worker-\(index)"] + childArguments)
        }
        try waitUntil(deadline: 15, what: "\(workerCount) workers to report", children: children) {
            let reply = try? client.call(ControlRequest(command: .workers), WorkersResult.self)
            return (reply?.0.result?.workers.filter(\.alive).count ?? 0) >= workerCount
        }
        output("chime up: coordinator pid \(coordinator) on \(configuration.endpoints.control.connect), \(workerCount) workers; events on \(configuration.endpoints.events.connect). Ctrl-C to stop.")

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
        children.onUnexpectedExit = { pid, status in
            printError("child \(pid) exited with status \(status); stopping the cluster")
            stop.requestStop()
        }
        while !stop.isStopRequested {
            children.checkExits()
            Thread.sleep(forTimeInterval: 0.2)
        }
        subscriberThread.join()
        output("chime up: stopping")
        return children.unexpectedExit ? 1 : 0
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
    static func waitUntil(deadline: Double, what: String, children: ChildProcesses, _ condition: () -> Bool) throws {
        let end = Date().addingTimeInterval(deadline)
        while Date() < end {
            if condition() { return }
            if let (pid, status) = children.firstExited() {
                throw RuntimeFailure("child \(pid) exited with status \(status) while waiting for \(what)")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw RuntimeFailure("timeout", "timed out after \(Int(deadline)) s waiting for \(what)")
    }
}

/// Child processes of `chime up`, each stopped by its own pid.
final class ChildProcesses {
    private(set) var processes: [Process] = []
    var onUnexpectedExit: ((Int32, Int32) -> Void)?
    private(set) var unexpectedExit = false

    /// Starts this executable with `arguments`; returns the child's pid.
    @discardableResult
    func spawn(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        try process.run()
        processes.append(process)
        return process.processIdentifier
    }

    func firstExited() -> (Int32, Int32)? {
        processes.first { !$0.isRunning }.map { ($0.processIdentifier, $0.terminationStatus) }
    }

    func checkExits() {
        guard !unexpectedExit, let (pid, status) = firstExited() else { return }
        unexpectedExit = true
        onUnexpectedExit?(pid, status)
    }

    /// SIGTERM to every child, then SIGKILL to those still running after `grace` seconds.
    func terminateAll(grace: Double) {
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let end = Date().addingTimeInterval(grace)
        while Date() < end && processes.contains(where: \.isRunning) { Thread.sleep(forTimeInterval: 0.05) }
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
