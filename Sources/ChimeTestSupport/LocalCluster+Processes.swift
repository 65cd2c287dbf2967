import ChimeRuntime
import ChimeWire
import Foundation
import ChimeClient

/// Crashing, pausing, stopping and restarting single children, always by their own pid.
extension LocalCluster {
    /// The pid of the running child `name`, if there is one.
    public func pid(of name: String) -> Int32? {
        children.last { $0.name == name && $0.isRunning }?.pid
    }

    /// The running child of that name (the last started), to signal or wait on; `nil` when none runs.
    public func process(of name: String) -> Process? {
        children.last { $0.name == name && $0.isRunning }?.process
    }

    /// Sends `signal` (such as `SIGSTOP` or `SIGCONT`) to the running child `name` by its pid.
    public func send(_ signal: Int32, to name: String) {
        for child in children where child.name == name { child.signal(signal) }
    }

    /// Kills the child `name` with SIGKILL (a crash: no shutdown code runs), waits until it
    /// is gone and forgets it; its log stays, and `restart` starts it again.
    public func crash(_ name: String) {
        for child in children where child.name == name { child.kill() }
        children.removeAll { $0.name == name }
    }

    /// Forgets the child `name` once it has exited by itself (a coordinator that lost its
    /// store and stopped), so a child of that name may start again.
    /// - Returns: how it ended; `nil` when there is no such child or it still runs.
    @discardableResult
    public func reap(_ name: String) -> ChildSupervisor.Exit? {
        guard let child = children.last(where: { $0.name == name }), let exit = child.exit else { return nil }
        children.removeAll { $0.name == name }
        return exit
    }

    /// Stops the child `name` (SIGTERM, then SIGKILL after `grace` seconds, 5 by default) and
    /// forgets it.
    /// - Returns: how it ended; `nil` when there was no such child.
    @discardableResult
    public func stop(_ name: String, grace: Double = 5) -> ChildSupervisor.Exit? {
        let stopping = children.filter { $0.name == name }
        children.removeAll { $0.name == name }
        return ChildSupervisor.stop(stopping, grace: grace).last ?? nil
    }

    /// Starts the child `name` again with the arguments of its last start (its log goes on
    /// in the same file).
    /// - Precondition: `name` was started before and is not running (`crash` or `stop` it first).
    @discardableResult
    public func restart(_ name: String) throws -> Process {
        guard let arguments = argumentsByName[name] else { preconditionFailure("no child named \(name) was ever started") }
        precondition(pid(of: name) == nil, "\(name) is still running")
        children.removeAll { $0.name == name }
        return try spawn(name, arguments, wrapper: wrapperByName[name] ?? [])
    }

    /// Starts a standby coordinator (`chime coordinator --standby`) on the store `store` with
    /// this cluster's endpoints; it waits for the store's lock and binds once it has it.
    @discardableResult
    public func startStandby(_ name: String = "standby", store: String) throws -> Process {
        try spawn(name, ["coordinator", "--standby", "--store", store] + clusterArguments)
    }

    /// Waits until a coordinator answers `ping`, checking that no child died meanwhile.
    /// - Returns: how long it took, in seconds.
    /// - Throws: `DeadlineExceeded` after `timeout` seconds or when a child exited.
    @discardableResult
    public func waitForCoordinator(timeout: Double) throws -> Double {
        let started = Date()
        // A short timeout: each attempt gets a new socket, so a coordinator that binds late
        // is found within about one timeout (the takeover measurement's resolution).
        let client = try ControlClient(endpoint: controlEndpoint, timeout: .milliseconds(100), retries: 0)
        try expectEventually(timeout: timeout, interval: 0.005, "the coordinator to answer ping") {
            try checkChildren()
            return (try? client.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil
        }
        return Date().timeIntervalSince(started)
    }

    /// Waits until the coordinator reports at least `count` live workers.
    /// - Throws: `DeadlineExceeded` after `timeout` seconds or when a child exited.
    public func waitForAliveWorkers(_ count: Int, timeout: Double) throws {
        let client = try ControlClient(endpoint: controlEndpoint, timeout: .milliseconds(300), retries: 0)
        try expectEventually(timeout: timeout, interval: 0.05, "\(count) workers to be alive") {
            try checkChildren()
            let reply = try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self)
            return (reply?.result?.workers.filter(\.alive).count ?? 0) >= count
        }
    }

    /// The log of the child `name` (every incarnation), or "" before it started.
    public func log(of name: String) -> String {
        (try? String(contentsOfFile: directory.path("\(name).log"), encoding: .utf8)) ?? ""
    }

    /// The resident set size of process `pid` in KiB (`VmRSS` in `/proc/PID/status`), or
    /// `nil` when it cannot be read (not Linux, or the process is gone).
    public static func residentKilobytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return Int(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "")
    }
}
