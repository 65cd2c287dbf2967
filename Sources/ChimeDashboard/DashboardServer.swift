import ChimeClient
import ChimeRuntime
import ChimeSecurity
import Foundation
import HTTPServer
import Synchronization

/// `chime dashboard` running: the HTTP server on its address, a sampler thread that records
/// every shard's figures into the charts' ring buffer every ``sampleInterval``, and one
/// events subscriber thread feeding the live tail from every shard (a SUB socket per shard,
/// one poll: ``TopicSubscriber``). ``stop()`` ends all of them.
public final class DashboardServer: Sendable {
    /// A shard's events endpoint (XPUB) the tail subscribes to.
    public struct EventsEndpoint: Sendable {
        /// The shard id.
        public var shard: Int
        /// The endpoint, such as `tcp://127.0.0.1:7703`.
        public var endpoint: String

        /// Creates the value from its fields.
        public init(shard: Int, endpoint: String) {
            self.shard = shard
            self.endpoint = endpoint
        }
    }

    /// The router the server answers with.
    public let router: DashboardRouter
    private let http: HTTPServer
    private let stopSignal = StopSignal()
    private let finished = DispatchGroup()
    /// The sampling period of the charts.
    public let sampleInterval: Duration

    /// The TCP port the server listens on.
    public var port: UInt16 { http.port }

    /// Starts serving at once.
    /// - Parameters:
    ///   - address: where to listen (loopback unless the operator chose otherwise).
    ///   - events: each shard's events endpoint; empty for no live tail.
    ///   - curve: the operator's CURVE keys for the events subscriptions; `nil` without CURVE.
    ///   - tls: the certificate and key to serve HTTPS with; `nil` serves HTTP.
    /// - Throws: `HTTPServerError` when the address cannot be listened on, or TLS is asked for
    ///   and unavailable or refuses the certificate.
    public init(
        address: HTTPListenAddress, router: DashboardRouter, events: [EventsEndpoint], curve: CurveClientKeys?,
        sampleInterval: Duration = .seconds(5), tls: HTTPTLSIdentity? = nil
    ) throws(HTTPServerError) {
        self.router = router
        self.sampleInterval = sampleInterval
        http = try HTTPServer(address: address, maximumBodyBytes: DashboardRouter.maximumBodyBytes, tls: tls) { request in
            router.respond(to: request)
        }
        startSampler()
        if !events.isEmpty { startSubscriber(events, curve: curve) }
    }

    private func startSampler() {
        let wake = DispatchSemaphore(value: 0)
        stopSignal.onStop { wake.signal() }
        let (router, stop, interval) = (router, stopSignal, sampleInterval)
        finished.enter()
        let thread = Thread { [finished] in
            while !stop.isStopRequested {
                router.history.record(router.overviews.refresh(from: router.source))
                let milliseconds = Int(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
                _ = wake.wait(timeout: .now() + .milliseconds(max(100, milliseconds)))
            }
            finished.leave()
        }
        thread.name = "chime-dashboard-sampler"
        thread.start()
    }

    private func startSubscriber(_ endpoints: [EventsEndpoint], curve: CurveClientKeys?) {
        let (tail, stop) = (router.tail, stopSignal)
        finished.enter()
        let thread = Thread { [finished] in
            // Made on its thread: a subscriber is used by one thread only.
            let subscriber = TopicSubscriber(
                endpoints: endpoints.map(\.endpoint), prefix: "", recipient: nil, stop: stop, highWaterMark: 10_000, curve: curve)
            do {
                try subscriber.run(onEndpointMessage: { index, topic, payload in
                    tail.append(topic: topic, payload: payload, shard: endpoints[index].shard)
                })
            } catch {
                let named = endpoints.map { "shard \($0.shard) at \($0.endpoint)" }.joined(separator: ", ")
                StandardStreams.writeError("chime dashboard: events of \(named): \(error)\n")
            }
            finished.leave()
        }
        thread.name = "chime-dashboard-events"
        thread.start()
    }

    /// Stops the HTTP server (a request under way finishes first), the sampler and the
    /// subscribers, and waits for their threads (at most `deadline`).
    /// - Returns: whether every thread ended within the deadline.
    @discardableResult
    public func stop(deadline: Duration = .seconds(5)) -> Bool {
        http.stop()
        stopSignal.requestStop()
        let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
        return finished.wait(timeout: .now() + seconds) == .success
    }
}
