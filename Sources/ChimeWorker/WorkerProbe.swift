import ChimeCore
import ChimeDelivery
import ChimeRuntime
import Foundation
import HTTPServer
import Synchronization

/// The delivery metrics a worker keeps: attempts by channel and outcome, and their latency.
struct DeliveryMetrics: Sendable {
    var counts: [String: [String: Int]] = [:]
    var latency = Histogram(upperBounds: Histogram.latencySecondsBounds)
}

/// What a worker's HTTP endpoints read (`chime worker --http ADDR`): the loop stores the
/// start of each turn and its counts in atomics (relaxed stores a turn), which
/// libmicrohttpd's thread reads.
///
/// A worker serving several shards runs one service (one loop) per shard; each keeps its own
/// probe, and the process's probe, which serves HTTP and counts the deliveries of the engine
/// the services share, adds up its **members** (``adopt(_:)``): firings delivered, summed;
/// healthy while every member's loop turns; ready once one takes firings. A member that stops
/// (its shard left) is released (``release(_:)``) and its counts stay in the sums.
public final class WorkerProbe: Sendable {
    private let origin = ContinuousClock.now
    /// When the last loop turn began, in nanoseconds after `origin`; -1 before the first.
    private let lastTurnNanoseconds = Atomic<Int64>(-1)
    private let deliveredCount = Atomic<Int>(0)
    private let redeliveriesNotResent = Atomic<Int>(0)
    private let awaitingDestinations = Atomic<Int>(0)
    private let isTakingFirings = Atomic<Bool>(false)
    private let deliveryMetrics = Mutex(DeliveryMetrics())
    /// The probes of the services this one adds up, and what released ones had counted.
    private let members = Mutex(Members())

    private struct Members: Sendable {
        var probes: [ObjectIdentifier: WorkerProbe] = [:]
        var releasedDelivered = 0
        var releasedNotResent = 0
    }

    /// Makes a probe of a worker that has not started.
    public init() {}

    /// Adds `member`'s loop to this probe's figures (a shard's service in a worker serving several).
    public func adopt(_ member: WorkerProbe) {
        members.withLock { $0.probes[ObjectIdentifier(member)] = member }
    }

    /// Stops following `member`'s loop; its delivered and not-resent counts stay in the sums.
    public func release(_ member: WorkerProbe) {
        members.withLock { members in
            guard members.probes.removeValue(forKey: ObjectIdentifier(member)) != nil else { return }
            members.releasedDelivered += member.deliveredCount.load(ordering: .relaxed)
            members.releasedNotResent += member.redeliveriesNotResent.load(ordering: .relaxed)
        }
    }

    /// This probe's own counts plus its members' (and its released members').
    private func totals() -> (delivered: Int, notResent: Int, awaiting: Int, members: [WorkerProbe]) {
        members.withLock { members in
            let probes = Array(members.probes.values)
            var delivered = deliveredCount.load(ordering: .relaxed) &+ members.releasedDelivered
            var notResent = redeliveriesNotResent.load(ordering: .relaxed) &+ members.releasedNotResent
            var awaiting = awaitingDestinations.load(ordering: .relaxed)
            for probe in probes {
                delivered &+= probe.deliveredCount.load(ordering: .relaxed)
                notResent &+= probe.redeliveriesNotResent.load(ordering: .relaxed)
                awaiting &+= probe.awaitingDestinations.load(ordering: .relaxed)
            }
            return (delivered, notResent, awaiting, probes)
        }
    }

    /// Records a loop turn that began at `instant` with `delivered` firings delivered so far,
    /// `notResent` redeliveries answered without sending again
    /// (``WorkerState/redeliveriesNotResent``) and `awaiting` firings whose destinations have no
    /// outcome yet (``WorkerState/awaitingDestinationsCount``).
    func noteTurn(at instant: ContinuousClock.Instant, delivered: Int, notResent: Int = 0, awaiting: Int = 0) {
        lastTurnNanoseconds.store(nanoseconds(at: instant), ordering: .relaxed)
        deliveredCount.store(delivered, ordering: .relaxed)
        redeliveriesNotResent.store(notResent, ordering: .relaxed)
        awaitingDestinations.store(awaiting, ordering: .relaxed)
    }

    private func nanoseconds(at instant: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = (instant - origin).components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }

    /// Records a delivery attempt (or, with no duration, a destination that ran out of
    /// attempts or time) for `chime_deliveries_total` and `chime_delivery_attempt_seconds`.
    func noteDelivery(channel: String, outcome: String, seconds: Double?) {
        deliveryMetrics.withLock { metrics in
            metrics.counts[channel, default: [:]][outcome, default: 0] += 1
            if let seconds { metrics.latency.observe(seconds) }
        }
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

    /// `/healthz`: 200 when the loop began a turn within `HealthWindow.seconds` (with
    /// members: every member's loop that has begun turning).
    public func health(at instant: ContinuousClock.Instant = .now) -> HTTPResponse {
        let probes = totals().members
        guard !probes.isEmpty else { return ownHealth(at: instant) }
        for probe in probes {
            let answer = probe.ownHealth(at: instant)
            if answer.status != 200 { return answer }
        }
        return HTTPResponse(status: 200, text: "ok\n")
    }

    private func ownHealth(at instant: ContinuousClock.Instant) -> HTTPResponse {
        let last = lastTurnNanoseconds.load(ordering: .relaxed)
        guard last >= 0 else { return HTTPResponse(status: 200, text: "ok: starting\n") }
        let idle = Double(nanoseconds(at: instant) - last) / 1e9
        if idle > HealthWindow.seconds {
            return HTTPResponse(status: 503, text: String(format: "unhealthy: the loop has not turned for %.1f s\n", idle))
        }
        return HTTPResponse(status: 200, text: "ok\n")
    }

    /// `/readyz`: 200 once the worker (one of its members) takes firings, else 503.
    public func readiness() -> HTTPResponse {
        let isReady = isTakingFirings.load(ordering: .relaxed) || totals().members.contains { $0.isTakingFirings.load(ordering: .relaxed) }
        return isReady
            ? HTTPResponse(status: 200, text: "ready: taking firings\n")
            : HTTPResponse(status: 503, text: "not ready: waiting for the event path\n")
    }

    /// `/metrics`: firings delivered and the `process_*` metrics.
    public func metricsResponse() -> HTTPResponse {
        var exposition = MetricsExposition()
        let totals = totals()
        exposition.counter(
            "chime_worker_firings_delivered_total", help: "Firings this worker delivered as fire events.",
            value: Double(totals.delivered))
        exposition.counter(
            "chime_worker_redeliveries_not_resent_total",
            help: "Firings a newer coordinator epoch handed out again that this worker had delivered, or was delivering, to every destination: answered with the outcome it had, not sent again.",
            value: Double(totals.notResent))
        exposition.gauge(
            "chime_worker_firings_awaiting_destinations", help: "Firings delivered as fire events whose destinations have no outcome yet.",
            value: Double(totals.awaiting))
        let delivery = deliveryMetrics.withLock { $0 }
        // Every channel × outcome is served from the start, at zero until it happens, so a
        // rule's rate over it has series before the first delivery (Prometheus, "Avoid
        // missing metrics").
        var samples: [(labels: MetricsExposition.Labels, value: Double)] = []
        for channel in Set(Destination.channels).union(delivery.counts.keys).sorted() {
            let counts = delivery.counts[channel, default: [:]]
            for outcome in Set(DeliveryEngine.outcomeLabels).union(counts.keys).sorted() {
                samples.append(([("channel", channel), ("outcome", outcome)], Double(counts[outcome, default: 0])))
            }
        }
        exposition.counter(
            "chime_deliveries_total",
            help: "Delivery attempts to destinations by channel and outcome (delivered, refused, removed, retry; gave_up and expired once per destination that ran out).",
            samples)
        exposition.histogram(
            "chime_delivery_attempt_seconds", help: "How long one delivery attempt to a destination took, in seconds.", delivery.latency)
        ProcessMetrics.current().write(into: &exposition)
        return HTTPResponse(status: 200, contentType: MetricsExposition.contentType, text: exposition.text)
    }
}
