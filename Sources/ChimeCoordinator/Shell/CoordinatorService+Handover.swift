import ChimeRuntime
import Foundation
import ZeroMQ

/// The coordinator's endpoints in a hand-over (`ListenerHandover`): retried binds when it
/// takes over, confirmed releases before it lets the store go.
extension CoordinatorService {
    /// How long a stopping coordinator waits for its endpoints to stop accepting connections.
    static let releaseDeadline = Duration.seconds(2)

    /// Binds `socket` to `endpoint`, retrying while a predecessor still releases it.
    /// - Throws: `ZeroMQError` (`.addressInUse` once `deadline` passed).
    func bind(_ socket: Socket, to endpoint: String, until deadline: ContinuousClock.Instant) throws {
        try ListenerHandover.bind(socket, to: endpoint, until: deadline) {
            logger.info("waiting for an endpoint to be released (a coordinator before this one is stopping)", ["endpoint": endpoint])
        }
    }

    /// After every socket and the HTTP server closed: waits until none of this coordinator's
    /// `tcp://` and `ipc://` endpoints accepts a connection (at most `releaseDeadline`), so
    /// that the store lock, released next, goes with free endpoints.
    func releaseListeners() {
        let endpoints = configuration.endpoints
        var binds = [endpoints.control, endpoints.dispatch, endpoints.results, endpoints.events, endpoints.eventsIngest].map(\.bind)
        if let httpAddress = setup.httpAddress { binds.append(ListenerHandover.endpoint(of: httpAddress)) }
        let started = ContinuousClock.now
        let left = ListenerHandover.waitUntilReleased(binds, until: started + Self.releaseDeadline)
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        if left.isEmpty {
            logger.info("endpoints released", ["milliseconds": .rounded(milliseconds, digits: 1)])
        } else {
            logger.warning(
                "endpoints still accept connections; the next coordinator retries its binds",
                ["endpoints": "\(left.joined(separator: " "))", "milliseconds": .rounded(milliseconds, digits: 1)])
        }
    }
}
