import ChimeRuntime
import Foundation
import ChimeSecurity

/// Options every cluster-facing command takes: configuration file and endpoint overrides.
enum CommonOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(name: "config", value: "PATH", help: "Configuration file (default: $CHIME_CONFIG, else ./config/chime.json when present, else built-in defaults)."),
        OptionSpec(name: "port-base", value: "PORT", help: "Use loopback ports PORT..PORT+4 for control, dispatch, results, events, events-ingest, and PORT+5 for the coordinator's HTTP."),
        OptionSpec(name: "control", value: "ENDPOINT", help: "Control endpoint (bind for the coordinator, connect for others)."),
        OptionSpec(name: "dispatch", value: "ENDPOINT", help: "Dispatch endpoint."),
        OptionSpec(name: "results", value: "ENDPOINT", help: "Results endpoint."),
        OptionSpec(name: "events", value: "ENDPOINT", help: "Events (XPUB) endpoint subscribers connect to."),
        OptionSpec(name: "events-ingest", value: "ENDPOINT", help: "Events (XSUB) endpoint publishers connect to."),
        OptionSpec(name: "keys", value: "DIR", help: "Key directory (chime keys init): the coordinator serves CURVE with it; others default to DIR/<role>.key_secret and DIR/server.key (security.keys)."),
        OptionSpec(name: "key", value: "FILE", help: "This process's secret certificate (security.key)."),
        OptionSpec(name: "server-key", value: "FILE", help: "The coordinator's public certificate (security.serverKey)."),
    ]

    /// The configuration file path that applies, or `nil` for the built-in defaults.
    static func configurationPath(_ arguments: Arguments) -> String? {
        if let path = arguments.value("config") { return path }
        if let path = ProcessInfo.processInfo.environment["CHIME_CONFIG"], !path.isEmpty { return path }
        return FileManager.default.fileExists(atPath: "config/chime.json") ? "config/chime.json" : nil
    }

    /// Loads the configuration and applies the endpoint flags.
    /// - Throws: `ConfigurationError`, `UsageError`.
    static func configuration(_ arguments: Arguments) throws -> ChimeConfiguration {
        var configuration = ChimeConfiguration()
        if let path = configurationPath(arguments) {
            configuration = try ChimeConfiguration.load(from: URL(fileURLWithPath: path))
        }
        if let base = try arguments.integer("port-base") {
            guard (1...65530).contains(base) else { throw UsageError("--port-base must be between 1 and 65530") }
            configuration.useLoopbackPorts(from: base)
        }
        func override(_ name: String, _ endpoint: inout ChimeConfiguration.Endpoint) {
            if let value = arguments.value(name) { endpoint = .init(bind: value, connect: value) }
        }
        override("control", &configuration.endpoints.control)
        override("dispatch", &configuration.endpoints.dispatch)
        override("results", &configuration.endpoints.results)
        override("events", &configuration.endpoints.events)
        override("events-ingest", &configuration.endpoints.eventsIngest)
        if let keys = arguments.value("keys") { configuration.security.keys = keys }
        if let key = arguments.value("key") { configuration.security.key = key }
        if let serverKey = arguments.value("server-key") { configuration.security.serverKey = serverKey }
        return configuration
    }

    /// The CURVE client keys for a process acting as `role`; `nil` without keys configured.
    /// - Throws: `SecurityError` for unusable key files.
    static func clientKeys(_ configuration: ChimeConfiguration, role: Role) throws -> CurveClientKeys? {
        try SecuritySettings.client(configuration, role: role)
    }
}
