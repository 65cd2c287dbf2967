import ChimeRuntime
import Foundation
import HTTPServer
import ZeroMQ

/// Both sides of handing the coordinator's listening endpoints from one process to the next
/// on the same host (a SIGTERM hand-over to a standby, a restart).
///
/// `zmq_close` hands a socket to libzmq's reaper and returns before its listening descriptor
/// is closed, so a coordinator that released the store lock right after closing its sockets
/// left a standby that bound at once with `EADDRINUSE`. Hence: the stopping coordinator
/// closes every listener and waits until nothing accepts connections on its endpoints
/// (`waitUntilReleased`) *before* it releases the lock; the coordinator taking over retries
/// each bind while the address is in use (`bind`), up to `bindDeadline`, and fails loudly
/// rather than serve without an endpoint it was configured with.
enum ListenerHandover {
    /// How long a coordinator keeps retrying a bind whose address is in use, and how long a
    /// stopping one waits for its endpoints to be released.
    static let bindDeadline = Duration.seconds(10)
    /// The pause between two bind attempts or release probes.
    static let retryInterval = Duration.milliseconds(10)

    /// Binds `socket` to `endpoint`, retrying every `retryInterval` while the address is in
    /// use, until `deadline`.
    /// - Parameter onWait: called once, when the first attempt finds the address in use.
    /// - Throws: the last `ZeroMQError` (`.addressInUse` after the deadline); other bind
    ///   errors at once.
    static func bind(
        _ socket: Socket, to endpoint: String, until deadline: ContinuousClock.Instant, onWait: () -> Void = {}
    ) throws {
        var hasWaited = false
        while true {
            do {
                try socket.bind(to: endpoint)
                return
            } catch let error as ZeroMQError where error.code == .addressInUse && ContinuousClock.now < deadline {
                if !hasWaited {
                    hasWaited = true
                    onWait()
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
    }

    /// Waits until nothing accepts a connection at any of `endpoints` (ZeroMQ `tcp://` or
    /// `ipc://` bind addresses; a wildcard host is probed on loopback) or `deadline` passes.
    /// - Returns: the endpoints still accepting connections at the deadline (empty: all
    ///   released, or not knowable, such as `inproc://`).
    static func waitUntilReleased(_ endpoints: [String], until deadline: ContinuousClock.Instant) -> [String] {
        var pending = endpoints.map(probeAddress).filter { $0.hasPrefix("tcp://") || $0.hasPrefix("ipc://") }
        while !pending.isEmpty {
            pending = pending.filter { EndpointProbe.probe($0, timeout: .milliseconds(100)) == .listening }
            if pending.isEmpty || ContinuousClock.now >= deadline { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return pending
    }

    /// The `tcp://HOST:PORT` of an HTTP listen address.
    static func endpoint(of address: HTTPListenAddress) -> String {
        let host = address.host.contains(":") ? "[\(address.host)]" : address.host
        return "tcp://\(host):\(address.port)"
    }

    /// A bind address as a connectable one: a wildcard host (`*`, `0.0.0.0`, `::`) becomes
    /// loopback.
    static func probeAddress(_ endpoint: String) -> String {
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":") else { return endpoint }
        let host = endpoint[endpoint.index(endpoint.startIndex, offsetBy: 6)..<colon]
        let port = endpoint[endpoint.index(after: colon)...]
        switch host {
        case "*", "0.0.0.0": return "tcp://127.0.0.1:\(port)"
        case "[::]", "[*]", "::": return "tcp://[::1]:\(port)"
        default: return endpoint
        }
    }
}
