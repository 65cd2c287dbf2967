import ChimeCore
import ChimeRuntime
import ChimeSecurity
import ChimeWire
import Dispatch
import Foundation
import HTTPServer
import HelperThreads
import Synchronization

/// A worker process serving every shard of a cluster: one ``WorkerService`` per shard, each
/// with its own sockets (a DEALER to the shard's dispatch, a PUSH to its results, an XPUB to
/// its events ingest) and its own ``WorkerState`` (credit, pending acknowledgements, the
/// highest epoch seen: a shard's epochs are its own), all driven by one thread with one poll
/// and one ZeroMQ context (``WorkerLoop``), so the threads do not grow with the shards.
///
/// Every acknowledgement and result thus goes back to the shard that dispatched the firing,
/// and each fire event is published once, into that shard's stream, carrying its id (never a
/// PUSH connected to several shards, which would round-robin). The worker's capacity is
/// shared by demand (``CapacityPool``): evenly while no shard uses it, and otherwise mostly to
/// the shards whose firings fill their share, so one shard's burst can use nearly the whole
/// worker; the loop serves HTTP (the process's figures: ``SharedDelivery``) and notifies
/// systemd for the process. The services share one delivery engine, so
/// `delivery.maxPerHost` and `delivery.maxInFlight` bound the process, not each shard.
///
/// **Following the map.** With a ``MapSource`` the worker asks for the map (`{"op":"map"}`)
/// every `interval` seconds (`cluster.mapRefreshSeconds`, 5 s by default) and on
/// ``MapRefreshTrigger/requestRefresh()`` (SIGHUP): the shards it serves first, then the
/// seeds, until one answers a valid map of a higher `mapEpoch` (``MapFollower``), on the thread
/// that called ``run()``, never the loop's. Then it stops the services of shards that left
/// (each hands back what it holds, as on SIGTERM, while the loop serves the other shards),
/// restarts those whose endpoints changed and starts the new shards' services. A map of a
/// lower or equal epoch changes nothing; an invalid one is logged (once per epoch) and refused. Without CURVE keys a newer map is followed only when a
/// majority of the shards served that answer agree on it (``MapFollower/confirmed(among:)``):
/// one peer on a shard's port cannot redirect the worker away from a live shard.
public final class ShardedWorker {
    /// Where the worker reads the current shard map.
    public struct MapSource {
        /// Seconds between two reads (`cluster.mapRefreshSeconds`).
        public var interval: Double
        /// Control endpoints asked after the shards of the map served (the configured ones).
        public var seeds: [String]
        /// One `map` exchange with the control endpoint given.
        public var fetch: (String) throws(WireError) -> ShardMap

        /// Creates the value from its fields (see each property for meaning and units).
        public init(interval: Double, seeds: [String], fetch: @escaping (String) throws(WireError) -> ShardMap) {
            self.interval = interval
            self.seeds = seeds
            self.fetch = fetch
        }
    }

    let configuration: ChimeConfiguration
    var follower: MapFollower
    let id: WorkerID?
    let logger: Logger
    let stop: StopSignal
    let curve: CurveClientKeys?
    let notifier: SystemdNotifier?
    let http: HTTPListenAddress?
    let mapSource: MapSource?
    /// Wakes the supervising loop for a map read now (SIGHUP), or for the stop.
    public let refresh = MapRefreshTrigger()
    /// The first error a shard's service threw.
    let failure = FirstFailure()
    /// The services running, by shard id (touched only by the thread in ``run()``).
    var running: [Int: RunningService] = [:]
    /// The epoch of the last newer map not followed for want of a majority (logged once).
    var unconfirmedEpoch: UInt64?
    /// The epoch of the last map refused as invalid (logged once).
    var refusedEpoch: UInt64?
    /// The delivery engine and probe every shard's service shares (made by ``run()``).
    var shared: SharedDelivery?
    /// The worker's capacity, shared by the shards' services by demand.
    let capacityPool: CapacityPool

    /// - Parameters:
    ///   - map: the shard map to start with (validated: the configuration's, or the single
    ///     shard of `configuration.endpoints`).
    ///   - configuration: the worker's configuration; each service gets it with the endpoints
    ///     of its shard and its share of `worker.capacity`.
    ///   - mapSource: where to read map changes; `nil` serves `map` until the stop.
    ///   - id, logger, stop, curve, notifier, http: as for ``WorkerService``.
    public init(
        map: ShardMap, configuration: ChimeConfiguration, id: WorkerID?, logger: Logger, stop: StopSignal,
        curve: CurveClientKeys? = nil, notifier: SystemdNotifier? = nil, http: HTTPListenAddress? = nil,
        mapSource: MapSource? = nil
    ) {
        self.follower = MapFollower(map: map)
        self.configuration = configuration
        self.id = id
        self.logger = logger
        self.stop = stop
        self.curve = curve
        self.notifier = notifier
        self.http = http
        self.mapSource = mapSource
        capacityPool = CapacityPool(total: configuration.worker.capacity)
    }

    /// The map served now.
    public var map: ShardMap { follower.map }

    /// Serves every shard of the map (following its changes) until the stop signal; the
    /// first failure of any shard's service stops them all and is rethrown.
    /// - Throws: what a ``WorkerService/run(onReady:)`` throws.
    public func run() throws {
        let workerID = id ?? WorkerID("\(ProcessInfo.processInfo.hostName)-\(getpid())")
        let shared = SharedDelivery(configuration: configuration, worker: workerID, logger: logger)
        self.shared = shared
        stop.onStop { [refresh] in refresh.wake() }
        // Every shard joins before any service is made, so none announces more than its split.
        for shard in follower.map.shards { _ = capacityPool.join(shard: shard.id) }
        let loop = WorkerLoop(stop: stop, logger: logger, context: nil, notifier: notifier, http: http, probe: shared.probe)
        let starting = UncheckedBox(follower.map.shards.map { makeService($0, workerID: workerID) })
        let thread = HelperThread(name: "chime-worker")
        thread.start { [stop, failure] in
            do {
                try loop.run(starting: starting.value)
            } catch {
                failure.record(error)
                stop.requestStop()
            }
        }
        var nextRead = ContinuousClock.now + .milliseconds(Int64((mapSource?.interval ?? 3600) * 1000))
        while !stop.isStopRequested {
            refresh.wait(until: nextRead)
            guard !stop.isStopRequested else { break }
            let now = ContinuousClock.now
            guard refresh.takeRequest() || now >= nextRead, let mapSource else { continue }
            readMap(from: mapSource, workerID: workerID, loop: loop)
            nextRead = ContinuousClock.now + .milliseconds(Int64(mapSource.interval * 1000))
        }
        stopServices(Array(running.keys))
        thread.join()
        if let error = failure.error { throw error }
    }

    /// Asks the shards served, then the seeds, for the map until one answers a newer valid
    /// one, and adopts it; without keys, asks them all and adopts the newest map a majority
    /// of the shards served confirm.
    func readMap(from source: MapSource, workerID: WorkerID, loop: WorkerLoop) {
        var seen = Set<String>()
        var answers: [String: ShardMap] = [:]
        for endpoint in follower.map.shards.map(\.endpoints.control) + source.seeds where seen.insert(endpoint).inserted {
            guard !stop.isStopRequested else { return }
            let fetched: ShardMap
            do {
                fetched = try source.fetch(endpoint)
            } catch {
                logger.debug("shard map not read", ["endpoint": "\(endpoint)", "code": "\(error.code)", "reason": "\(error.message)"])
                continue
            }
            if curve == nil {
                answers[endpoint] = fetched
                continue
            }
            if consider(fetched, from: endpoint, workerID: workerID, loop: loop) { return }
        }
        guard curve == nil else { return }
        if let confirmed = follower.confirmed(among: answers) {
            let from = answers.filter { $0.value == confirmed }.keys.sorted().joined(separator: ",")
            _ = consider(confirmed, from: from, workerID: workerID, loop: loop)
        } else if let newest = answers.values.filter({ $0.mapEpoch > follower.map.mapEpoch }).max(by: { $0.mapEpoch < $1.mapEpoch }),
            unconfirmedEpoch != newest.mapEpoch
        {
            unconfirmedEpoch = newest.mapEpoch
            let from = answers.filter { $0.value == newest }.keys.sorted().joined(separator: ",")
            logger.warning(
                "not following a shard map that most shards do not answer (no CURVE keys to trust one peer)",
                ["mapEpoch": "\(newest.mapEpoch)", "from": "\(from)", "served": "\(follower.map.mapEpoch)",
                 "shards": "\(follower.map.shards.count)"])
        }
    }

    /// Considers one map read from `endpoint`; whether it was adopted.
    private func consider(_ fetched: ShardMap, from endpoint: String, workerID: WorkerID, loop: WorkerLoop) -> Bool {
        switch follower.consider(fetched) {
        case .stale:
            return false
        case .invalid(let error):
            if refusedEpoch != fetched.mapEpoch {
                refusedEpoch = fetched.mapEpoch
                logger.warning(
                    "refused an invalid shard map; keeping the one served",
                    ["endpoint": "\(endpoint)", "mapEpoch": "\(fetched.mapEpoch)", "served": "\(follower.map.mapEpoch)",
                     "reason": "\(error.message)"])
            }
            return false
        case .adopt(let change):
            logger.info(
                "following a new shard map",
                ["mapEpoch": "\(fetched.mapEpoch)", "from": "\(endpoint)", "started": "\(change.started.map(\.id))",
                 "stopped": "\(change.stopped)", "reconnected": "\(change.reconnected.map(\.id))"])
            apply(change, workerID: workerID, in: loop)
            return true
        }
    }
}

/// Wakes a ``ShardedWorker``'s supervising loop: for a map read now (SIGHUP) or for the stop.
public final class MapRefreshTrigger: Sendable {
    private let requested = Atomic<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    /// Creates a trigger with no request pending.
    public init() {}

    /// Asks for a map read now (safe from any thread, such as the signal relay's).
    public func requestRefresh() {
        requested.store(true, ordering: .releasing)
        semaphore.signal()
    }

    /// Wakes the loop without a read (the stop).
    func wake() { semaphore.signal() }

    /// Waits until `deadline` or a wake-up.
    func wait(until deadline: ContinuousClock.Instant) {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return }
        let nanoseconds = left.components.seconds * 1_000_000_000 + left.components.attoseconds / 1_000_000_000
        _ = semaphore.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds)))
    }

    /// Whether a read was asked for since the last call.
    func takeRequest() -> Bool { requested.exchange(false, ordering: .acquiringAndReleasing) }
}

/// The first error any shard's service threw (set from their threads).
final class FirstFailure: Sendable {
    private let first = Mutex<(any Error)?>(nil)

    var error: (any Error)? { first.withLock { $0 } }

    func record(_ error: any Error) { first.withLock { $0 = $0 ?? error } }
}
