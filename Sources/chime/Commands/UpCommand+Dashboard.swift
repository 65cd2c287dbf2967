import ChimeCommandLine
import ChimeRuntime
import Foundation
import HTTPServer
import HelperThreads

/// `chime up`'s dashboard: `chime dashboard` as one more child, on loopback.
extension UpCommand {
    /// The dashboard's port relative to the port base: base + 6, the first port after the
    /// HTTP port (base + 5) of shard 0's block; `up --shards` leaves + 6 … + 9 of each block
    /// free, so the default never lands on another endpoint of the cluster.
    static let dashboardPortOffset = 6

    static let dashboardOptions = [
        OptionSpec(name: "dashboard", value: "HOST:PORT", help: "Serve the web dashboard there (default 127.0.0.1:PORT-BASE+6, 127.0.0.1:7706 without --port-base; loopback only)."),
        OptionSpec(name: "no-dashboard", value: nil, help: "Do not start the web dashboard."),
    ]

    /// The dashboard child for the cluster `up` starts, or `nil` with `--no-dashboard`.
    /// - Parameters:
    ///   - base: the cluster's port base (`--port-base`, else 7700).
    ///   - childArguments: the arguments every child gets (configuration, endpoints, keys);
    ///     `--log-level` is left out (the dashboard takes none).
    /// - Returns: the child, not started, and the URL it serves.
    /// - Throws: `UsageError` when `--dashboard` is not a loopback `HOST:PORT`.
    static func dashboardChild(
        _ arguments: Arguments, base: Int, childArguments: [String], executable: URL
    ) throws -> (child: ChildSupervisor, url: String)? {
        guard !arguments.has("no-dashboard") else { return nil }
        let text = arguments.value("dashboard") ?? "127.0.0.1:\(base + dashboardPortOffset)"
        let address: HTTPListenAddress
        do {
            address = try HTTPListenAddress.parse(text)
        } catch {
            throw UsageError("--dashboard: \(error.message)")
        }
        guard address.isLoopback, address.port != 0 else {
            throw UsageError("--dashboard \(text): give a loopback HOST:PORT with a port (the dashboard has no TLS or login yet)")
        }
        var passed: [String] = []
        var index = childArguments.startIndex
        while index < childArguments.endIndex {
            if childArguments[index] == "--log-level" {
                index += 2
                continue
            }
            passed.append(childArguments[index])
            index += 1
        }
        let child = ChildSupervisor(
            name: "dashboard", launch: .init(executable: executable, arguments: ["dashboard", "--listen", text] + passed))
        return (child, "http://\(text)/")
    }

    /// Starts the dashboard and says where it serves. A dashboard that cannot start (its port
    /// taken) is reported and left stopped: the cluster runs on without it.
    static func startDashboard(_ dashboard: (child: ChildSupervisor, url: String)?) {
        guard let dashboard else { return }
        do {
            try dashboard.child.start()
            output("chime up: dashboard on \(dashboard.url) (pid \(dashboard.child.pid ?? 0))")
        } catch {
            printError("chime up: the dashboard did not start (\(error)); the cluster runs without it")
        }
    }

    /// Reports once that the dashboard exited (its port was taken, most likely); it is not
    /// restarted.
    static func noteDashboardExit(_ dashboard: (child: ChildSupervisor, url: String)?, reported: inout Bool) {
        guard let dashboard, !reported, dashboard.child.process != nil, !dashboard.child.isRunning else { return }
        reported = true
        printError(
            "chime up: the dashboard exited (\(dashboard.child.exit.map { "\($0)" } ?? "?")): is \(dashboard.url) taken? Use --dashboard HOST:PORT or --no-dashboard; the cluster runs on without it")
    }
}
