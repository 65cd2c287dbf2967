import ChimeClient
import ChimeCommandLine
import ChimeDashboard
import ChimeRuntime
import ChimeWire
import Foundation
import HTTPServer

enum DashboardCommand: Command {
    static let spec = CommandSpec(
        name: "dashboard",
        summary: "Serve the operators' web dashboard (overview, workers, reminders, dead letters, live events).",
        usage: "chime dashboard [--listen 127.0.0.1:7790] [--read-only] [--sample-seconds N] [--config PATH] [--keys DIR]",
        options: [
            OptionSpec(name: "listen", value: "HOST:PORT", help: "Where to serve HTTP (default 127.0.0.1:7790; loopback only: no TLS or login yet)."),
            OptionSpec(name: "read-only", value: nil, help: "Show no buttons and refuse every change (POST answers 403)."),
            OptionSpec(name: "sample-seconds", value: "N", help: "Seconds between the charts' samples (1-60, default 5; the charts keep 720)."),
        ] + CommonOptions.specs,
        details: """
            A process of its own with the operator key (security.key or --keys DIR/operator.key_secret): it asks
            every shard of the cluster section (or the control endpoint's map) as `chime ctl` does, and
            subscribes to every shard's events for the live tail. Pages: / (overview and last-hour charts),
            /workers, /reminders (search, detail, enable/disable/cancel), /dead-letters (retry one, retry all),
            /events (live tail). JSON: /api/overview, /api/workers, /api/reminders, /api/dead-letters,
            /api/events?after=N, /api/history. Changes are POST forms with a CSRF token and a confirmation page.
            SIGINT or SIGTERM stops it.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.isEmpty else { throw UsageError("dashboard takes no arguments") }
        let address: HTTPListenAddress
        do {
            address = try HTTPListenAddress.parse(arguments.value("listen") ?? "127.0.0.1:7790")
        } catch {
            throw UsageError("--listen: \(error.message)")
        }
        guard address.isLoopback else {
            throw UsageError("--listen \(address): the dashboard serves loopback only (it has no TLS or login yet); put a TLS proxy with authentication in front of it")
        }
        let sampleSeconds = try arguments.integer("sample-seconds") ?? 5
        guard (1...60).contains(sampleSeconds) else { throw UsageError("--sample-seconds must be from 1 to 60") }
        let configuration = try CommonOptions.configuration(arguments)
        let client = try makeControlClient(arguments, retries: 0)
        let events = try ShardMap.configured(configuration.cluster).map { map in
            map.shards.map { DashboardServer.EventsEndpoint(shard: $0.id, endpoint: $0.endpoints.events) }
        } ?? [DashboardServer.EventsEndpoint(shard: 0, endpoint: configuration.endpoints.events.connect)]
        let stop = StopSignal()
        installTerminationHandlers(stop)
        let router = DashboardRouter(
            source: ClusterSource(client: client), history: MetricsHistory(), tail: EventTail(), csrf: CSRFGuard(),
            readOnly: arguments.has("read-only"), overviewAge: TimeInterval(sampleSeconds))
        let curve = try CommonOptions.clientKeys(configuration, role: .operator)
        let server: DashboardServer
        do throws(HTTPServerError) {
            server = try DashboardServer(
                address: address, router: router, events: events, curve: curve, sampleInterval: .seconds(sampleSeconds))
        } catch {
            throw RuntimeFailure("cannot_listen", error.message)
        }
        let shown = HTTPListenAddress(host: address.host, port: server.port)
        output("chime dashboard on http://\(shown)/ (\(events.count) shard(s)\(arguments.has("read-only") ? ", read-only" : ""))")
        let stopped = DispatchSemaphore(value: 0)
        stop.onStop { stopped.signal() }
        stopped.wait()
        server.stop()
        return 0
    }
}
