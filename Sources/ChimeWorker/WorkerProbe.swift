import ChimeRuntime
import Foundation
import HTTPServer
import Synchronization

/// What a worker's HTTP endpoints read (`chime worker --http ADDR`): the loop stores the
/// start of each turn and its delivered count in atomics (two relaxed stores a turn), which
/// libmicrohttpd's thread reads.
public final class WorkerProbe: Sendable {
    private let origin = ContinuousClock.now
    /// When the last loop turn began, in nanoseconds after `origin`; -1 before the first.
    private let lastTurnNanoseconds = Atomic<Int64>(-1)
    private let deliveredCount = Atomic<Int>(0)
    private let isTakingFirings = Atomic<Bool>(false)

    /// Makes a probe of a worker that has not started.
    public init() {}

    /// Records a loop turn that began at `instant` with `delivered` firings delivered so far.
    func noteTurn(at instant: ContinuousClock.Instant, delivered: Int) {
        let (seconds, attoseconds) = (instant - origin).components
        lastTurnNanoseconds.store(seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000, ordering: .relaxed)
        deliveredCount.store(delivered, ordering: .relaxed)
    }

    /// Records that the worker announced itself and takes firings (its event path is up).
    func noteTakingFirings() { isTakingFirings.store(true, ordering: .relaxed) }

    /// The routes a worker serves.
    public var routes: HTTPRoutes {
        HTTPRoutes([
            "/metrics": { [self] in metricsResponse() },
            "/healthz": { [self] in health() },
            "/readyz": { [self] in readiness() },
        ])
    }

    /// `/healthz`: 200 when the loop began a turn within `HealthWindow.seconds`.
    public func health(at instant: ContinuousClock.Instant = .now) -> HTTPResponse {
        let last = lastTurnNanoseconds.load(ordering: .relaxed)
        guard last >= 0 else { return HTTPResponse(status: 200, text: "ok: starting\n") }
        let (seconds, attoseconds) = (instant - origin).components
        let idle = Double(seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000 - last) / 1e9
        if idle > HealthWindow.seconds {
            return HTTPResponse(status: 503, text: String(format: "unhealthy: the loop has not turned for %.1f s\n", idle))
        }
        return HTTPResponse(status: 200, text: "ok\n")
    }

    /// `/readyz`: 200 once the worker takes firings, else 503.
    public func readiness() -> HTTPResponse {
        isTakingFirings.load(ordering: .relaxed)
            ? HTTPResponse(status: 200, text: "ready: taking firings\n")
            : HTTPResponse(status: 503, text: "not ready: waiting for the event path\n")
    }

    /// `/metrics`: firings delivered and the `process_*` metrics.
    public func metricsResponse() -> HTTPResponse {
        var exposition = MetricsExposition()
        exposition.counter(
            "chime_worker_firings_delivered_total", help: "Firings this worker delivered as fire events.",
            value: Double(deliveredCount.load(ordering: .relaxed)))
        ProcessMetrics.current().write(into: &exposition)
        return HTTPResponse(status: 200, contentType: MetricsExposition.contentType, text: exposition.text)
    }
}
