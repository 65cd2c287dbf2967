import ChimeCore
import ChimeRuntime
import ChimeWire
import HelperThreads

/// One shard's running ``WorkerService``.
struct RunningService {
    var shard: ShardMap.Shard
    /// Stops this service only (the process's stop requests it too).
    var stop: StopSignal
    var thread: HelperThread
}

extension ShardedWorker {
    /// Starts shard `shard`'s service on a thread of its own with a place in the capacity
    /// pool; the first service started while none serves HTTP takes HTTP and the systemd
    /// notifier.
    func startService(_ shard: ShardMap.Shard, workerID: WorkerID) {
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
        let takesHTTP = httpHolder == nil
        if takesHTTP { httpHolder = shard.id }
        let serviceStop = StopSignal()
        stop.onStop { serviceStop.requestStop() }
        let service = UncheckedBox(WorkerService(
            configuration: shardConfiguration, id: workerID, logger: shardLogger, stop: serviceStop, curve: curve,
            notifier: takesHTTP ? notifier : nil, http: takesHTTP ? http : nil, shard: isTagged ? shard.id : nil,
            capacityShare: capacity, shared: shared))
        let thread = HelperThread(name: "chime-worker-shard-\(shard.id)")
        thread.start { [stop, failure] in
            do {
                try service.value.run()
            } catch {
                failure.record(error)
                stop.requestStop()
            }
        }
        running[shard.id] = RunningService(shard: shard, stop: serviceStop, thread: thread)
    }

    /// Stops the services of `shards` (each hands back what it holds) and waits for them.
    func stopServices(_ shards: [Int]) {
        let stopping = shards.compactMap { running.removeValue(forKey: $0) }
        for service in stopping { service.stop.requestStop() }
        for service in stopping { service.thread.join() }
        for service in stopping { capacityPool.leave(shard: service.shard.id) }
        if let holder = httpHolder, shards.contains(holder) { httpHolder = nil }
    }

    /// Carries out an adopted map's change: stops first (a restarted service's HTTP port and
    /// routing id are free again), then starts (the pool recomputes every share on each).
    func apply(_ change: MapFollower.Change, workerID: WorkerID) {
        let holder = httpHolder
        stopServices(change.stopped + change.reconnected.map(\.id))
        var starting = change.started + change.reconnected
        // The HTTP probe and systemd notifier left with a stopped shard and nothing new takes
        // them: the lowest remaining shard's service restarts with them.
        if holder != nil, httpHolder == nil, starting.isEmpty, http != nil || notifier != nil,
            let lowest = running.keys.min(), let shard = running[lowest]?.shard
        {
            stopServices([lowest])
            starting.append(shard)
        }
        for shard in starting.sorted(by: { $0.id < $1.id }) { startService(shard, workerID: workerID) }
    }
}

/// Hands a `WorkerService` to the one thread that runs it: made on this thread, used only
/// there afterwards (never shared), which is why the unchecked conformance is sound.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
