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
/// closes every listener and waits until each of its endpoints can be bound again
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

    /// Waits until each of `endpoints` (ZeroMQ `tcp://` or `ipc://` bind addresses) can be
    /// bound again (`ListenAddress.isFree`) or `deadline` passes.
    /// - Returns: the endpoints still taken at the deadline (empty: all released, or not
    ///   knowable, such as `inproc://`).
    static func waitUntilReleased(_ endpoints: [String], until deadline: ContinuousClock.Instant) -> [String] {
        var pending = endpoints
        while !pending.isEmpty {
            pending = pending.filter { ListenAddress.isFree($0) == false }
            if pending.isEmpty || ContinuousClock.now >= deadline { break }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return pending
    }

    /// The `tcp://HOST:PORT` of an HTTP listen address.
    static func endpoint(of address: HTTPListenAddress) -> String {
        let host = address.host.contains(":") ? "[\(address.host)]" : address.host
        return "tcp://\(host):\(address.port)"
    }
}
