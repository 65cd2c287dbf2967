import ChimeClient
import ChimeCommandLine
import ChimeWire
import Foundation

extension ControlClient {
    /// Sends a request, returning the decoded reply and its raw bytes (for `--json`).
    /// - Throws: `WireError` (the coordinator's error, or `.unavailable`).
    func call<Result: Codable & Sendable>(_ request: ControlRequest, _ type: Result.Type) throws -> (ControlReply<Result>, Data) {
        try sendReturningBytes(request, expecting: type)
    }
}

extension ClusterClient {
    /// Sends a request to its recipient's shard, returning the decoded reply and its raw
    /// bytes (for `--json`).
    /// - Throws: `WireError` (the coordinator's error, or `.unavailable`).
    func call<Result: Codable & Sendable>(_ request: ControlRequest, _ type: Result.Type) throws -> (ControlReply<Result>, Data) {
        try send(request, expecting: type)
    }
}

/// Makes a cluster client with the configuration's client settings that asks for the shard
/// map at each shard's control endpoint of the `cluster` section, else at the control
/// connect address (one coordinator, or any shard of a cluster it does not describe).
/// `retries` overrides the configuration's (the dashboard asks once: a shard that does not
/// answer is shown down rather than waited for again); `timeoutAtLeast` raises the
/// configuration's per-exchange deadline for a slow request (`ctl snapshot` and `compact`
/// answer once the snapshot is written: seconds for a shard of millions).
func makeControlClient(_ arguments: Arguments, retries: Int? = nil, timeoutAtLeast: Duration? = nil) throws -> ClusterClient {
    let configuration = try CommonOptions.configuration(arguments)
    // The register's map when there is one (slots move), else the configured one.
    let configured = try MapRegisterOptions.currentMap(configuration)
    let seeds = configured.map { $0.shards.map(\.endpoints.control) } ?? [configuration.endpoints.control.connect]
    // A request about one recipient goes to its shard under that map (or to the one
    // coordinator) at once; the map is asked for on `wrong_shard` or for a scatter.
    return try ClusterClient(
        seeds: seeds,
        timeout: max(.milliseconds(configuration.client.requestTimeoutMilliseconds), timeoutAtLeast ?? .zero),
        retries: retries ?? configuration.client.retries, curve: try CommonOptions.clientKeys(configuration, role: .operator),
        routingHint: configured)
}
