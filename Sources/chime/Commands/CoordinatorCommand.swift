import ChimeCore
import ChimeRuntime
import ChimeCommandLine
import Foundation
import HTTPServer
import ChimeCoordinator
import ChimeSecurity
import ChimeWorker
import ChimeWire
import ChimeClient
import ZeroMQ

enum CoordinatorCommand: Command {
    static let spec = CommandSpec(
        name: "coordinator",
        summary: "Run the coordinator: owns the schedule, dispatches due firings to workers.",
        usage: "chime coordinator [--config PATH] [--port-base PORT] [endpoint overrides]",
        options: [
            OptionSpec(name: "store", value: "DIR", help: "Store directory (journal, snapshots, lock); 'none' keeps everything in memory. Default from store.directory."),
            OptionSpec(name: "fsync", value: "POLICY", help: "always (default), interval or never."),
            OptionSpec(name: "standby", value: nil, help: "Wait for the store's lock and take over when the active coordinator dies (warm: loads the snapshot and follows the journal meanwhile)."),
            OptionSpec(name: "cold-standby", value: nil, help: "With --standby: do not load the store while waiting (less memory; the takeover recovers from the files)."),
            OptionSpec(name: "http", value: "ADDR", help: "Serve /metrics, /healthz and /readyz on HOST:PORT, or 'off'. Default from http.listen: 127.0.0.1:7705 (port base + 5)."),
        ] + ShardOptions.specs + CommonOptions.specs + LogOptions.specs,
        details: "Recovers from the store, then binds control (ROUTER), dispatch (ROUTER), results (PULL) and the\nevent forwarder (XSUB/XPUB). Stops cleanly on SIGINT or SIGTERM. With --keys DIR every endpoint runs\nCURVE and only the keys of DIR's allow-lists get in. SIGHUP reloads the allow-lists and log.level. Without keys only loopback\naddresses may be bound (unless security.insecure is true).")

    static func run(_ arguments: Arguments) throws -> Int32 {
        var configuration = try CommonOptions.configuration(arguments)
        let shard = try ShardOptions.selection(arguments, configuration)
        if let shard { configuration = try configuration.selectingShard(shard.id) }
        if let store = arguments.value("store") { configuration.store.directory = store }
        if let fsync = arguments.value("fsync") {
            guard ["always", "interval", "never"].contains(fsync) else {
                throw UsageError("--fsync must be always, interval or never, not '\(fsync)'")
            }
            configuration.store.fsync = fsync
        }
        // Every flag is checked before the first log line, so a usage error is the only line.
        let http = try HTTPOptions.address(arguments.value("http"), configured: configuration.http.listen)
        let logger = try LogOptions.logger("coordinator", arguments, configuration)
        let stop = StopSignal()
        installTerminationHandlers(stop)
        let security = try SecuritySettings.server(configuration)
        LogOptions.installReload(arguments, logger: logger) {
            guard let security else { return [:] }
            let counts = try security.reload()
            return Dictionary(uniqueKeysWithValues: counts.map { ("\($0.key.rawValue)Keys", .int($0.value)) })
        }
        // With a map register the register's map wins (created from the configured one; a new
        // shard listed there with no slots joins it).
        let register = try MapRegisterOptions.register(configuration)
        var map = shard?.map
        if let register, let configured = map, let shard {
            map = try MapRegisterOptions.createIfAbsent(register, map: configured, joining: shard.id).map
        }
        let service = CoordinatorService(
            configuration: configuration, logger: logger, stop: stop, standby: arguments.has("standby"),
            security: security,
            notifier: SystemdNotifier(environment: ProcessInfo.processInfo.environment),
            warmStandby: !arguments.has("cold-standby"),
            http: http, shardMap: map, shardID: shard?.id ?? 0)
        service.mapRegister = register
        try service.run()
        return 0
    }
}

enum WorkerCommand: Command {
    static let spec = CommandSpec(
        name: "worker",
        summary: "Run a worker: delivers firings as fire events and acknowledges them.",
        usage: "chime worker [--id ID] [--config PATH] [--port-base PORT] [endpoint overrides]",
        options: [
            OptionSpec(name: "id", value: "ID", help: "Worker id (default: <host>-<pid>)."),
            OptionSpec(name: "http", value: "ADDR", help: "Serve /metrics, /healthz and /readyz on HOST:PORT (default: no HTTP)."),
        ] + CommonOptions.specs + LogOptions.specs,
        details: "Connects to dispatch (DEALER), results (PUSH) and events-ingest (XPUB); heartbeats every interval.\nWith a cluster section of several shards it serves every shard: one set of sockets per shard, the\ncapacity shared between them by demand. Stops cleanly on SIGINT or SIGTERM; SIGHUP re-reads log.level and the shard map.\nEvery cluster.mapRefreshSeconds (5 s) it asks the shards for the map and follows a newer one: it starts serving\nnew shards, stops serving (handing back) shards that left, and reconnects shards whose endpoints changed.")

    static func run(_ arguments: Arguments) throws -> Int32 {
        let configuration = try CommonOptions.configuration(arguments)
        let endpoints = configuration.endpoints
        // No cluster section: one coordinator, shard 0 owning every slot at `endpoints`.
        let map = try ShardMap.configured(configuration.cluster) ?? .single(ShardMap.Endpoints(
            control: endpoints.control.connect, dispatch: endpoints.dispatch.connect, results: endpoints.results.connect,
            events: endpoints.events.connect, eventsIngest: endpoints.eventsIngest.connect))
        let http = try HTTPOptions.address(arguments.value("http"), configured: nil)
        let logger = try LogOptions.logger("worker", arguments, configuration)
        let stop = StopSignal()
        installTerminationHandlers(stop)
        LogOptions.installReload(arguments, logger: logger)
        let id = arguments.value("id").map { WorkerID($0) }
        let curve = try CommonOptions.clientKeys(configuration, role: .worker)
        let notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        // One service per shard: each shard's firings are acknowledged to it and published
        // through it, with a share of the capacity; the map is read again to follow changes.
        let worker = ShardedWorker(
            map: map, configuration: configuration, id: id, logger: logger, stop: stop, curve: curve, notifier: notifier,
            http: http,
            mapSource: try MapReader.source(configuration, seeds: map.shards.map(\.endpoints.control), curve: curve))
        installReloadHandler { [refresh = worker.refresh] in refresh.requestRefresh() }
        try worker.run()
        return 0
    }
}

/// How `chime worker` reads the shard map: `{"op":"map"}` over one control client per
/// endpoint (the worker key may use `map`), a short timeout and no retries (the next read is
/// at most `cluster.mapRefreshSeconds` away).
enum MapReader {
    static func source(_ configuration: ChimeConfiguration, seeds: [String], curve: CurveClientKeys?) throws -> ShardedWorker.MapSource {
        let context = try Context()
        let timeout = Duration.milliseconds(min(1000, configuration.client.requestTimeoutMilliseconds))
        var clients: [String: ControlClient] = [:]
        return ShardedWorker.MapSource(interval: configuration.cluster.mapRefreshSeconds, seeds: seeds) { endpoint throws(WireError) in
            let client: ControlClient
            if let known = clients[endpoint] {
                client = known
            } else {
                do {
                    client = try ControlClient(endpoint: endpoint, timeout: timeout, retries: 0, curve: curve, context: context)
                } catch {
                    throw WireError(.unavailable, "cannot make a control socket for \(endpoint): \(error)")
                }
                clients[endpoint] = client
            }
            guard let map = try client.send(ControlRequest(command: .map), expecting: ShardMap.self).result else {
                throw WireError(.malformed, "the map reply has no result")
            }
            return map
        }
    }
}

/// The `--http ADDR` flag and `http.listen`.
enum HTTPOptions {
    /// Where to serve HTTP: the flag's address, else the configured one; `nil` for `off`
    /// (or no flag and nothing configured).
    /// - Throws: `UsageError` for a flag, `ConfigurationError` for `http.listen`, that is
    ///   neither `off` nor `HOST:PORT`.
    static func address(_ flag: String?, configured: String?) throws -> HTTPListenAddress? {
        guard let text = flag ?? configured, text != "off" else { return nil }
        do throws(HTTPServerError) {
            return try HTTPListenAddress.parse(text)
        } catch {
            if flag != nil { throw UsageError("--http: \(error.message), or off") }
            throw ConfigurationError("http.listen: \(error.message), or off")
        }
    }
}
