import ChimeRuntime
import Foundation
import HTTPServer
import Synchronization

/// What the coordinator's HTTP endpoints read, shared between the loop (and the journal
/// writer) and libmicrohttpd's thread. The loop never waits for HTTP: each turn it stores
/// its start in an atomic and checks an atomic flag; only when a scrape raised the flag does
/// it take a `CoordinatorMetrics` snapshot and publish it under the lock, which the scrape
/// waits for (at most `metricsWait`; a stalled loop's scrape gets the previous snapshot).
public final class CoordinatorProbe: Sendable {
    /// Where the coordinator is in its life.
    public enum Phase: String, Sendable {
        /// Before the store is opened.
        case starting
        /// Waiting for the store lock another coordinator holds.
        case standby
        /// Holding the lock, recovering the schedule from the store.
        case recovering
        /// Serving: the only coordinator writing the store.
        case active
        /// Stopping (a signal, or the store was lost).
        case stopping
    }

    /// The store's figures, published by the journal writer and the loop.
    struct StoreFigures {
        var journalBytes: Int?
        var fsyncDuration = Histogram(upperBounds: Histogram.durationSecondsBounds)
        /// How long each journal `write(2)` took (fsyncs left out), seconds.
        var writeDuration = Histogram(upperBounds: Histogram.durationSecondsBounds)
        var snapshotBytes: Int?
        /// When the newest snapshot was written, in seconds since the Unix epoch.
        var lastSnapshotAt: Double?
        var isFull = false
        var hasStore = false
    }

    private struct Shared {
        var phase = Phase.starting
        var metrics: CoordinatorMetrics?
        var generation: UInt64 = 0
        var store = StoreFigures()
    }

    /// How long the loop may go without starting a turn before `/healthz` fails, in seconds.
    public static let healthWindowSeconds = HealthWindow.seconds
    /// How long a scrape waits for the loop's snapshot, in seconds.
    static let metricsWait = 1.0

    private let shared = Mutex(Shared())
    private let origin = ContinuousClock.now
    /// When the last loop turn began, in nanoseconds after `origin`; -1 before the first.
    private let lastTurnNanoseconds = Atomic<Int64>(-1)
    private let isMetricsWanted = Atomic<Bool>(false)

    /// The shard this coordinator serves in a cluster of several shards (every sample then
    /// carries `shard="N"`, and `chime_shard_info` says which map); `nil` for one coordinator.
    let shard: Int?
    /// The epoch of the shard map the loop serves under now, with `shard`: set at start and
    /// again by the loop each time it adopts a register's record (a committed slot move).
    private let currentMapEpoch: Atomic<UInt64>

    /// The shard map's epoch the loop serves under now.
    var mapEpoch: UInt64 { currentMapEpoch.load(ordering: .relaxed) }

    /// Records the epoch of the map the loop now serves under (one atomic store).
    func noteMapEpoch(_ epoch: UInt64) { currentMapEpoch.store(epoch, ordering: .relaxed) }

    /// Makes a probe in the `starting` phase.
    /// - Parameters:
    ///   - shard: the shard served in a cluster of several shards; `nil` for one coordinator.
    ///   - mapEpoch: the epoch of the shard map it serves under at start (`noteMapEpoch` follows changes).
    /// The forwarder's ban list and subscription count (`chime_subscriber_bans_total`,
    /// `chime_subscriptions`), shared with the ZAP handler.
    public let subscriberBans = SubscriberBans()

    public init(shard: Int? = nil, mapEpoch: UInt64 = 1) {
        self.shard = shard
        currentMapEpoch = Atomic(mapEpoch)
    }

    // MARK: The coordinator's side

    /// Records that a loop turn began at `instant`: one atomic store.
    func noteTurn(at instant: ContinuousClock.Instant) {
        lastTurnNanoseconds.store(nanoseconds(instant - origin), ordering: .relaxed)
    }

    /// Whether a scrape waits for a snapshot: one atomic load a turn.
    var wantsMetrics: Bool { isMetricsWanted.load(ordering: .relaxed) }

    /// Publishes the loop's snapshot for the waiting scrape.
    func publish(_ metrics: CoordinatorMetrics) {
        isMetricsWanted.store(false, ordering: .relaxed)
        shared.withLock {
            $0.metrics = metrics
            $0.generation &+= 1
        }
    }

    /// Enters a phase of the coordinator's life.
    func enter(_ phase: Phase) { shared.withLock { $0.phase = phase } }

    /// Changes the store figures (from the journal writer's thread or the loop).
    func updateStore(_ change: (inout StoreFigures) -> Void) { shared.withLock { change(&$0.store) } }

    // MARK: The HTTP side

    /// The current phase.
    public var phase: Phase { shared.withLock { $0.phase } }

    /// `/healthz`: for the active coordinator, 200 when its loop began a turn within
    /// `healthWindowSeconds`, else 503 naming how long it has been stuck (a liveness probe
    /// then restarts it and the standby takes over); 200 in every other phase, so a long
    /// recovery or a standby loading its warm copy is not killed.
    public func health(at instant: ContinuousClock.Instant = .now) -> HTTPResponse {
        let phase = self.phase
        guard phase == .active else { return HTTPResponse(status: 200, text: "ok: \(phase.rawValue)\n") }
        let last = lastTurnNanoseconds.load(ordering: .relaxed)
        guard last >= 0 else { return HTTPResponse(status: 200, text: "ok: \(phase.rawValue), first turn under way\n") }
        let idle = Double(nanoseconds(instant - origin) - last) / 1e9
        if idle > Self.healthWindowSeconds {
            return HTTPResponse(status: 503, text: String(format: "unhealthy: the loop has not turned for %.1f s\n", idle))
        }
        return HTTPResponse(status: 200, text: "ok: \(phase.rawValue)\n")
    }

    /// `/readyz`: 200 only for the active coordinator (recovered, owning the store, whose
    /// store takes writes); 503 with the reason otherwise.
    public func readiness() -> HTTPResponse {
        let (phase, isFull) = shared.withLock { ($0.phase, $0.store.isFull) }
        let reason: String
        switch phase {
        case .active where isFull: reason = "store full: changes are refused until space returns"
        case .active: return HTTPResponse(status: 200, text: "ready: active\n")
        case .starting: reason = "starting"
        case .standby: reason = "standby: waiting for the store lock"
        case .recovering: reason = "recovering the store"
        case .stopping: reason = "stopping"
        }
        return HTTPResponse(status: 503, text: "not ready: \(reason)\n")
    }

    /// `/metrics`: the coordinator's snapshot (fresh from the loop when it is active), the
    /// store's figures and the `process_*` metrics, in the text exposition format.
    public func metricsResponse() -> HTTPResponse {
        var exposition = MetricsExposition()
        let (phase, metrics, store) = freshMetrics()
        if let shard {
            exposition.constantLabels = [("shard", String(shard))]
            exposition.gauge(
                "chime_shard_info", help: "1, labelled with the shard this coordinator serves and the shard map's epoch.",
                [([("map_epoch", String(mapEpoch))], 1)])
        }
        exposition.gauge(
            "chime_coordinator_phase", help: "1 for the phase the coordinator is in (starting, standby, recovering, active, stopping).",
            [Phase.starting, .standby, .recovering, .active, .stopping].map { ([("phase", $0.rawValue)], $0 == phase ? 1 : 0) })
        metrics?.write(into: &exposition)
        exposition.gauge(
            "chime_subscriptions", help: "Subscriptions the event forwarder's subscribers hold (events.maxSubscriptionsPerPeer bounds each peer).",
            value: Double(subscriberBans.subscriptionCount))
        exposition.counter(
            "chime_subscriber_bans_total",
            help: "Subscriber peers cut off for passing a subscription bound (keys banned, connections without keys dropped).",
            value: Double(subscriberBans.banCount))
        exposition.counter(
            "chime_subscriber_connections_dropped_total",
            help: "Subscriber connections the event forwarder shut down because their peer passed a subscription bound.",
            value: Double(subscriberBans.droppedConnectionCount))
        exposition.gauge(
            "chime_subscriber_backlog_bytes",
            help: "Bytes the event forwarder estimates subscribers that fell behind hold in its queues (sampled every 100 ms; events.subscriberQueueBytesTotal bounds it).",
            value: Double(subscriberBans.backlogBytes))
        exposition.counter(
            "chime_slow_subscribers_dropped_total",
            help: "Subscriber connections the event forwarder shut down because subscribers that fell behind together held past events.subscriberQueueBytesTotal (the ones behind longest first).",
            value: Double(subscriberBans.slowDroppedCount))
        if store.hasStore {
            exposition.histogram(
                "chime_journal_fsync_duration_seconds", help: "Seconds each fdatasync of a journal segment took.", store.fsyncDuration)
            exposition.histogram(
                "chime_journal_write_duration_seconds",
                help: "Seconds each journal write(2) took (fdatasync left out): the journal writer's latency; past 2 ms the loop stops writing inline.",
                store.writeDuration)
            if let bytes = store.journalBytes {
                exposition.gauge("chime_journal_bytes", help: "Bytes in journal segments.", value: Double(bytes))
            }
            if let bytes = store.snapshotBytes {
                exposition.gauge("chime_snapshot_bytes", help: "Bytes in the snapshot files kept.", value: Double(bytes))
            }
            if let time = store.lastSnapshotAt {
                exposition.gauge(
                    "chime_last_snapshot_timestamp_seconds", help: "When the newest snapshot was written, in seconds since the Unix epoch.",
                    value: time)
            }
            exposition.gauge("chime_store_full", help: "1 while the store is full and changes are refused.", value: store.isFull ? 1 : 0)
        }
        ProcessMetrics.current().write(into: &exposition)
        return HTTPResponse(status: 200, contentType: MetricsExposition.contentType, text: exposition.text)
    }

    /// Asks an active loop for a snapshot and waits for it (polling every millisecond, at
    /// most `metricsWait`); otherwise the last one.
    private func freshMetrics() -> (Phase, CoordinatorMetrics?, StoreFigures) {
        let (phase, generation) = shared.withLock { ($0.phase, $0.generation) }
        if phase == .active {
            isMetricsWanted.store(true, ordering: .relaxed)
            let deadline = ContinuousClock.now + .seconds(Self.metricsWait)
            while shared.withLock({ $0.generation == generation }) && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
        }
        return shared.withLock { ($0.phase, $0.metrics, $0.store) }
    }

    private func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ attoseconds / 1_000_000_000
    }
}
