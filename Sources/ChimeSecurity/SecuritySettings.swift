import ChimeRuntime
import Foundation

/// Reads the `security` configuration: the coordinator's key directory, another process's
/// key files, and the rule that only loopback addresses may be bound without keys (the
/// idea of Redis's protected mode).
public enum SecuritySettings {
    /// The coordinator's security when `security.keys` is set; `nil` otherwise.
    /// - Throws: `SecurityError` as ``ServerSecurity/init(directory:)``.
    public static func server(_ configuration: ChimeConfiguration) throws(SecurityError) -> ServerSecurity? {
        let keys = configuration.security.keys
        guard !keys.isEmpty else { return nil }
        return try ServerSecurity(directory: URL(fileURLWithPath: keys))
    }

    /// The CURVE client keys of a process acting as `role`: `security.key` and
    /// `security.serverKey`, or else `<keys>/<role>.key_secret` and `<keys>/server.key` when
    /// `security.keys` is set; `nil` when neither is configured (plain loopback).
    /// - Throws: `SecurityError(.badCertificate)` when only one of `key` and `serverKey` is
    ///   given, and as ``CurveClientKeys/init(keyFile:serverKeyFile:)``.
    public static func client(_ configuration: ChimeConfiguration, role: Role) throws(SecurityError) -> CurveClientKeys? {
        let security = configuration.security
        switch (security.key.isEmpty, security.serverKey.isEmpty) {
        case (false, false):
            return try CurveClientKeys(
                keyFile: URL(fileURLWithPath: security.key), serverKeyFile: URL(fileURLWithPath: security.serverKey))
        case (true, true):
            guard !security.keys.isEmpty else { return nil }
            return try clientKeys(in: URL(fileURLWithPath: security.keys), role: role)
        default:
            throw SecurityError(
                .badCertificate, "give both security.key (--key) and security.serverKey (--server-key), or neither")
        }
    }

    /// The keys `chime keys init` made for `role` in `directory`: `<role>.key_secret` and `server.key`.
    /// - Throws: as ``CurveClientKeys/init(keyFile:serverKeyFile:)``.
    public static func clientKeys(in directory: URL, role: Role) throws(SecurityError) -> CurveClientKeys {
        try CurveClientKeys(
            keyFile: directory.appendingPathComponent("\(role.rawValue).key_secret"),
            serverKeyFile: directory.appendingPathComponent("server.key"))
    }

    /// Refuses to serve when an endpoint the coordinator binds is reachable from other
    /// machines and there are no keys, unless `security.insecure` accepts that.
    /// - Throws: `SecurityError(.insecureBind)` naming the first such endpoint and the fix.
    public static func checkBinds(_ configuration: ChimeConfiguration, isSecured: Bool) throws(SecurityError) {
        guard !isSecured, !configuration.security.insecure else { return }
        let endpoints = configuration.endpoints
        for (name, endpoint) in [
            ("control", endpoints.control), ("dispatch", endpoints.dispatch), ("results", endpoints.results),
            ("events", endpoints.events), ("eventsIngest", endpoints.eventsIngest),
        ] where !isLocal(endpoint.bind) {
            throw SecurityError(
                .insecureBind,
                "refusing to bind \(name) at \(endpoint.bind) without CURVE keys: anyone who can reach it could read and change every reminder. "
                    + "Run 'chime keys init DIR' and start with --keys DIR (security.keys), bind loopback addresses only, "
                    + "or set security.insecure to true to accept the risk")
        }
    }

    /// Whether `endpoint` is reachable only from this machine: `tcp://` on a loopback
    /// address (127.0.0.0/8, `::1`, `localhost`), `ipc://` or `inproc://`.
    public static func isLocal(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        guard endpoint.hasPrefix("tcp://") else { return false }
        let address = endpoint.dropFirst("tcp://".count)
        guard let colon = address.lastIndex(of: ":") else { return false }
        var host = address[..<colon]
        if host.first == "[", host.last == "]" { host = host.dropFirst().dropLast() }
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
