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
        usage: "chime dashboard [--listen 127.0.0.1:7790] [--tls-cert FILE --tls-key FILE] [--token-file FILE] [--read-only] [--sample-seconds N] [--allow-host NAME] [--config PATH] [--keys DIR]",
        options: [
            OptionSpec(name: "listen", value: "HOST:PORT", help: "Where to serve (default 127.0.0.1:7790; an address other than loopback needs --tls-cert, --tls-key and --token-file)."),
            OptionSpec(name: "tls-cert", value: "FILE", help: "Serve HTTPS with this PEM certificate (chain); needs --tls-key."),
            OptionSpec(name: "tls-key", value: "FILE", help: "The PEM private key of --tls-cert (owner-only permissions: chmod 600)."),
            OptionSpec(name: "token-file", value: "FILE", help: "Require a login with the token in this file (owner-only permissions; at least 16 bytes)."),
            OptionSpec(name: "read-only", value: nil, help: "Show no buttons and refuse every change (POST answers 403)."),
            OptionSpec(name: "sample-seconds", value: "N", help: "Seconds between the charts' samples (1-60, default 5; the charts keep 720)."),
            OptionSpec(
                name: "allow-host", value: "NAME",
                help: "Also answer requests for this host name (Host header), e.g. the name a proxy or Service uses.", repeats: true),
        ] + CommonOptions.specs,
        details: """
            A process of its own with the operator key (security.key or --keys DIR/operator.key_secret): it asks
            every shard of the cluster section (or the control endpoint's map) as `chime ctl` does, and
            subscribes to every shard's events for the live tail. Pages: / (overview and last-hour charts),
            /workers (processes and connections), /reminders (search, detail, enable/disable/cancel),
            /recipients?recipient=R (zone, masked destinations, attention settings, reminders, held firings),
            /dead-letters (cause, attempts, retry one, retry all), /events (live tail). JSON: /api/overview,
            /api/workers, /api/reminders, /api/recipient?recipient=R, /api/dead-letters, /api/events?after=N,
            /api/history. Changes are POST forms with a CSRF token and a confirmation page.
            With --token-file every page and API call needs a login: the form at /login (a session cookie,
            HttpOnly, SameSite=Strict, Secure over TLS, 12 hours) or Authorization: Bearer TOKEN.
            Against DNS rebinding a loopback dashboard answers only Host 127.0.0.1, localhost and [::1] (and
            --allow-host names; others get 421), and every POST (login and logout too) from another site's page
            (Origin or Sec-Fetch-Site) gets 403. SIGINT or SIGTERM stops it.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.isEmpty else { throw UsageError("dashboard takes no arguments") }
        let address: HTTPListenAddress
        do {
            address = try HTTPListenAddress.parse(arguments.value("listen") ?? "127.0.0.1:7790")
        } catch {
            throw UsageError("--listen: \(error.message)")
        }
        let tls = try tlsIdentity(arguments)
        let token = try arguments.value("token-file").map { path in
            do throws(DashboardLoginError) { return try DashboardLogin.readToken(path: path) } catch { throw UsageError("--token-file: \(error.message)") }
        }
        guard address.isLoopback || (tls != nil && token != nil) else {
            throw UsageError("--listen \(address): an address other than loopback needs TLS and a login: give --tls-cert, --tls-key and --token-file")
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
            readOnly: arguments.has("read-only"), overviewAge: TimeInterval(sampleSeconds),
            login: token.map { DashboardLogin(token: $0, secureCookies: tls != nil) },
            hosts: DashboardHosts.serving(address, allowing: arguments.all("allow-host")))
        let curve = try CommonOptions.clientKeys(configuration, role: .operator)
        let server: DashboardServer
        do throws(HTTPServerError) {
            server = try DashboardServer(
                address: address, router: router, events: events, curve: curve, sampleInterval: .seconds(sampleSeconds), tls: tls)
        } catch {
            throw RuntimeFailure("cannot_listen", error.message)
        }
        let shown = HTTPListenAddress(host: address.host, port: server.port)
        let notes = [arguments.has("read-only") ? "read-only" : nil, token != nil ? "login required" : nil].compactMap { $0 }
        output("chime dashboard on \(tls != nil ? "https" : "http")://\(shown)/ (\(events.count) shard(s)\(notes.map { ", " + $0 }.joined()))")
        let stopped = DispatchSemaphore(value: 0)
        stop.onStop { stopped.signal() }
        stopped.wait()
        server.stop()
        return 0
    }

    /// The certificate and key of `--tls-cert` and `--tls-key` (both or neither), read whole.
    static func tlsIdentity(_ arguments: Arguments) throws -> HTTPTLSIdentity? {
        let certificatePath = arguments.value("tls-cert")
        let keyPath = arguments.value("tls-key")
        guard let certificatePath, let keyPath else {
            if certificatePath != nil || keyPath != nil { throw UsageError("--tls-cert and --tls-key go together") }
            return nil
        }
        guard HTTPServer.supportsTLS else {
            throw RuntimeFailure("tls_unavailable", "this system's libmicrohttpd was built without TLS (GnuTLS): cannot serve HTTPS")
        }
        func read(_ path: String, _ flag: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else {
                throw UsageError("\(flag): \(path): cannot read it (missing, unreadable or over 1 MiB)")
            }
            return String(decoding: data, as: UTF8.self)
        }
        let certificate = try read(certificatePath, "--tls-cert")
        guard certificate.contains("-----BEGIN CERTIFICATE-----") else {
            throw UsageError("--tls-cert: \(certificatePath): no PEM certificate (-----BEGIN CERTIFICATE-----) in it")
        }
        let key = try read(keyPath, "--tls-key")
        guard key.contains("PRIVATE KEY-----") else { throw UsageError("--tls-key: \(keyPath): no PEM private key in it") }
        if let mode = (try? FileManager.default.attributesOfItem(atPath: keyPath))?[.posixPermissions] as? NSNumber,
            mode.intValue & 0o077 != 0
        {
            throw UsageError(
                "--tls-key: \(keyPath) has mode \(String(mode.intValue, radix: 8)); allow only its owner (chmod 600 \(keyPath))")
        }
        return HTTPTLSIdentity(certificatePEM: certificate, keyPEM: key)
    }
}
