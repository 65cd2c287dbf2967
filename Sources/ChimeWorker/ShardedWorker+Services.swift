import ChimeCore
import ChimeRuntime
import ChimeWire

/// One shard's running ``WorkerService``, as the map reader's thread knows it.
struct RunningService {
    var shard: ShardMap.Shard
    /// Stops this service only (the process's stop requests it too).
    var stop: StopSignal
    /// Finished once the service has handed back and left the loop.
    var end: ServiceEnd
}

extension ShardedWorker {
    /// Makes shard `shard`'s service with a place in the capacity pool, for the loop to run.
    func makeService(_ shard: ShardMap.Shard, workerID: WorkerID) -> WorkerService {
        let capacity = capacityPool.join(shard: shard.id)
        var shardConfiguration = configuration
        let endpoints = shard.endpoints
        shardConfiguration.endpoints.control = .init(bind: endpoints.control, connect: endpoints.control)
        shardConfiguration.endpoints.dispatch = .init(bind: endpoints.dispatch, connect: endpoints.dispatch)
        shardConfiguration.endpoints.results = .init(bind: endpoints.results, connect: endpoints.results)
        shardConfiguration.endpoints.events = .init(bind: endpoints.events, connect: endpoints.events)
        shardConfiguration.endpoints.eventsIngest = .init(bind: endpoints.eventsIngest, connect: endpoints.eventsIngest)
        shardConfiguration.worker.capacity = capacity.share.value
        // One coordinator's events carry no shard (absent means 0), as before sharding.
        let isTagged = follower.map.shards.count > 1
        var shardLogger = logger
        if isTagged { shardLogger.metadata["shard"] = .int(shard.id) }
        let serviceStop = StopSignal()
        stop.onStop { serviceStop.requestStop() }
        let service = WorkerService(
            configuration: shardConfiguration, id: workerID, logger: shardLogger, stop: serviceStop, curve: curve,
            shard: isTagged ? shard.id : nil, capacityShare: capacity, shared: shared)
        running[shard.id] = RunningService(shard: shard, stop: serviceStop, end: service.end)
        return service
    }

    /// Starts shard `shard`'s service: the loop opens it at its next turn.
    func startService(_ shard: ShardMap.Shard, workerID: WorkerID, in loop: WorkerLoop) {
        loop.add(makeService(shard, workerID: workerID))
    }

    /// Stops the services of `shards` (each hands back what it holds, while the loop goes on
    /// serving the others) and waits for them to have left.
    func stopServices(_ shards: [Int]) {
        let stopping = shards.compactMap { running.removeValue(forKey: $0) }
        for service in stopping { service.stop.requestStop() }
        for service in stopping { service.end.wait() }
        for service in stopping { capacityPool.leave(shard: service.shard.id) }
    }

    /// Carries out an adopted map's change: stops first (a restarted service's routing id is
    /// free again), then starts (the pool recomputes every share on each).
    func apply(_ change: MapFollower.Change, workerID: WorkerID, in loop: WorkerLoop) {
        stopServices(change.stopped + change.reconnected.map(\.id))
        for shard in (change.started + change.reconnected).sorted(by: { $0.id < $1.id }) {
            startService(shard, workerID: workerID, in: loop)
        }
    }
}

/// Hands a value that is not `Sendable` (a `WorkerService`, a ZeroMQ context) to the one
/// thread that uses it afterwards (the ``WorkerLoop``'s): the thread that made it touches
/// only its `Sendable` parts from then on, which is why the unchecked conformance is sound.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
