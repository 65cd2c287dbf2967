import ChimeCore
import ChimeDelivery
import ChimeRuntime
import ChimeWire
import Foundation
import HTTPServer
import ZeroMQ
import ChimeSecurity

/// One shard's part of the worker process's shell: pulls dispatch batches, publishes fire
/// events, pushes acknowledgements and heartbeats. A ``WorkerLoop`` drives it on one thread,
/// which owns its sockets: alone (``run(onReady:)``) or beside the other shards' services in
/// one poll (``ShardedWorker``).
public final class WorkerService {
    let configuration: ChimeConfiguration
    let logger: Logger
    let stop: StopSignal
    var state: WorkerState
    let codec = WireCodec()
    let actions: ActionRunner
    /// Where the loop reads the time for heartbeats and acknowledgements.
    let clock: any ServiceClock
    /// The ZeroMQ context to open sockets in; `nil` makes one per `run`.
    let sharedContext: Context?
    /// The worker key and the coordinator's public key; `nil` connects without CURVE.
    let curve: CurveClientKeys?
    /// The service supervisor (systemd's `NOTIFY_SOCKET`); `nil` when there is none.
    let notifier: SystemdNotifier?
    /// This service's loop figures: what `/metrics`, `/healthz` and `/readyz` read, alone or
    /// as a member of ``processProbe``.
    public let probe = WorkerProbe()
    /// The probe of the worker process when it serves several shards (``ShardedWorker``): it
    /// adds up this service's figures while it runs, and is what HTTP serves. `nil`: ``probe``.
    let processProbe: WorkerProbe?
    /// Who this service is to a shared ``deliveries`` engine (its reports are taken by this key).
    let deliveryOwner: Int
    /// Where to serve HTTP; `nil` serves none.
    let httpAddress: HTTPListenAddress?
    /// The largest fire event published live, in bytes (`events.maxEventBytes`).
    let maxEventBytes: Int
    /// Fire events too large to publish, one line a second at most.
    let oversizeEvents: RateLimitedLog
    /// This service's place in the worker's capacity pool when a ``ShardedWorker`` runs it
    /// (it reports what it holds and announces its share); `nil`: `worker.capacity`, fixed.
    let capacityShare: CapacityPool.Member?
    /// Delivers firings to their recipients' destinations (webhooks, APNs, FCM) off this
    /// thread: the process's, shared by the services of every shard (so its per-host and
    /// in-flight bounds hold for the process), or this service's own.
    let deliveries: DeliveryEngine
    let userInfoEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Makes a worker service; nothing connects until `run`.
    /// - Parameters:
    ///   - id: the worker's id; `<host>-<pid>` when `nil`.
    ///   - clock: the time heartbeats and `firedAt` are read from (`SystemClock` in a process).
    ///   - context: the ZeroMQ context for the sockets; `nil` makes one (and the stop signal
    ///     shuts it down). With a shared context every endpoint may be `inproc://`.
    ///   - curve: a `worker` key and the coordinator's public key, for a coordinator that
    ///     runs CURVE; `nil` connects without.
    ///   - notifier: told `READY=1` once connected, `WATCHDOG=1` from the loop (at most every
    ///     half of `WATCHDOG_USEC`) and `STOPPING=1`; `nil` notifies nobody.
    ///   - http: where to serve `/metrics`, `/healthz` and `/readyz`; `nil` serves no HTTP.
    ///   - shard: in a cluster of several shards, the shard whose endpoints
    ///     `configuration.endpoints` are: its events carry it (`ShardedWorker` runs one
    ///     service per shard); `nil` for one coordinator.
    ///   - capacityShare: the service's place in the worker's ``CapacityPool``: on every turn it
    ///     reports the firings it holds unacknowledged and announces the share it reads (which
    ///     follows demand and shards joining or leaving); `nil`: `configuration.worker.capacity`.
    public init(
        configuration: ChimeConfiguration, id: WorkerID?, logger: Logger, stop: StopSignal,
        clock: any ServiceClock = SystemClock(), context: Context? = nil, curve: CurveClientKeys? = nil,
        notifier: SystemdNotifier? = nil, http: HTTPListenAddress? = nil, shard: Int? = nil,
        capacityShare: CapacityPool.Member? = nil, channels: [String: any DeliveryChannel]? = nil,
        shared: SharedDelivery? = nil
    ) {
        self.capacityShare = capacityShare
        self.processProbe = shared?.probe
        self.deliveryOwner = shard ?? 0
        self.httpAddress = http
        self.maxEventBytes = configuration.events.maxEventBytes
        self.oversizeEvents = RateLimitedLog(
            logger: logger, level: .warning, message: "fire events too large to publish (events.maxEventBytes)",
            examplesKey: "firings")
        self.curve = curve
        self.notifier = notifier
        self.configuration = configuration
        self.clock = clock
        self.sharedContext = context
        self.logger = logger
        self.stop = stop
        let host = ProcessInfo.processInfo.hostName
        let pid = getpid()
        state = WorkerState(
            id: id ?? WorkerID("\(host)-\(pid)"), host: host, pid: pid,
            heartbeatInterval: Double(configuration.heartbeat.intervalMilliseconds) / 1000,
            // The coordinator drops messages announcing more than this.
            capacity: min(max(0, configuration.worker.capacity), WorkerMessage.maximumCapacity))
        state.shard = shard
        state.acknowledgementDelay = Double(configuration.worker.acknowledgementDelayMilliseconds) / 1000
        if let shared {
            deliveries = shared.engine
        } else {
            let standard = channels == nil ? DeliveryChannels.standard(configuration.delivery) : nil
            for problem in standard?.problems ?? [] { logger.warning("a delivery channel is not available", ["reason": "\(problem)"]) }
            deliveries = DeliveryEngine(
                channels: channels ?? standard?.channels ?? [:], limits: DeliveryChannels.limits(configuration.delivery),
                worker: state.id, onAttempt: { [probe] channel, outcome, seconds in probe.noteDelivery(channel: channel, outcome: outcome, seconds: seconds) })
        }
        actions = ActionRunner(
            hooks: configuration.notifications.hooks, timeLimit: configuration.notifications.actionTimeLimitSeconds,
            maxConcurrentHooks: configuration.notifications.maxConcurrentHooks)
    }

    /// This worker's id.
    public var id: WorkerID { state.id }

    /// How long a worker waits for a subscription before taking firings anyway, in seconds.
    static let eventPathWait = 1.0

    /// This service's sockets and where it is in its life, while a ``WorkerLoop`` drives it
    /// (from ``open(context:)`` to ``close()``); `nil` before and after.
    var link: Link?
    /// Finished once this service has left its loop (or was never opened in one that ended).
    let end = ServiceEnd()

    /// Connects and serves until the stop signal, on the calling thread: a ``WorkerLoop`` of
    /// this one service (the loop ``ShardedWorker`` runs for every shard of a cluster).
    /// - Throws: `ZeroMQError` when an endpoint is invalid; `HTTPServerError` when the HTTP
    ///   address cannot be listened on.
    public func run(onReady: () -> Void = {}) throws {
        let loop = WorkerLoop(
            stop: stop, logger: logger, context: sharedContext, notifier: notifier, http: httpAddress,
            probe: processProbe ?? probe)
        try loop.run(starting: [self], onReady: onReady)
    }

    func deliver(_ frames: [Data], events: Socket) throws {
        let batch: DispatchBatch
        do {
            batch = try codec.decodeDispatch(frames)
        } catch {
            logger.warning("dropped dispatch message", ["code": error.code.rawValue, "reason": error.message])
            return
        }
        let now = clock.now
        if batch.epoch < state.highestEpoch {
            logger.warning(
                "dropped a batch from a coordinator that lost the store (an older epoch)",
                ["epoch": .integer(batch.epoch), "current": .integer(state.highestEpoch), "firings": .int(batch.firings.count)])
        }
        try carryOut(state.onBatch(batch, at: now, monotonic: clock.monotonic), events: events, at: now)
    }

    /// Delivers the held firings that are due now. The loop sleeps for the earliest one's due
    /// instant beforehand when that is at most `heldFiringSleep` away (``WorkerLoop``: the poll
    /// before woke up to a millisecond early).
    /// - Throws: `ZeroMQError` from the events socket.
    func fireHeldDue(events: Socket) throws {
        guard let due = state.nextHeldDue, due <= clock.now else { return }
        let now = clock.now
        try carryOut(state.onTimer(at: now, monotonic: clock.monotonic), events: events, at: now)
    }

    /// Seconds until the earliest held firing is due (≤ 0: due now); `nil` when none is held.
    var heldDueIn: Double? { state.nextHeldDue.map { $0.timeIntervalSince(clock.now) } }

    /// The longest a worker sleeps for a held firing's due instant instead of polling, in
    /// seconds: a little over the millisecond `zmq_poll` counts in.
    static let heldFiringSleep = 0.0015

    /// Publishes the fire events and starts the action jobs of `directives` (those of
    /// `onBatch` and `onTimer`).
    /// - Throws: `ZeroMQError` from the events socket.
    func carryOut(_ directives: [WorkerDirective], events: Socket, at now: Date) throws {
        for directive in directives {
            switch directive {
            case .publish(let event):
                // PUB never blocks: at its high-water mark it drops, which the acknowledgement
                // path does not depend on.
                let json = event.fastJSON(userInfoEncoder: userInfoEncoder)
                // The forwarder drops the connection of a publisher that sends more: the
                // event is not published live (the acknowledgement still records it, and
                // subscribers catch up with `events`).
                guard json.count <= maxEventBytes else {
                    oversizeEvents.record(
                        examples: [event.firing.firingId.text], metadata: ["bytes": "\(json.count)", "limit": "\(maxEventBytes)"])
                    continue
                }
                _ = try events.send([Data(event.topic.utf8), json], dontWait: true)
            case .run(let job):
                if job.activationMode == .foreground {
                    var event = ActionEvent(type: "action", job: job, at: now)
                    event.shard = state.shard
                    _ = try events.send([Data(Topic.action(job.recipient).utf8), codec.encode(event)], dontWait: true)
                }
                logger.info("action", ["job": "\(job.jobId)", "action": "\(job.action)", "destructive": .bool(job.destructive)])
                actions.start(job, at: now)
            case .deliverToDestinations(let event, let destinations, let budget):
                let json = event.fastJSON(userInfoEncoder: userInfoEncoder)
                deliveries.submit(
                    DeliveryJob(firing: event.firing, eventJSON: json, destinations: destinations, budget: budget), owner: deliveryOwner)
            case .report, .announce:
                preconditionFailure("onBatch and onTimer neither report nor announce")
            }
        }
    }
}

/// What the services of a worker serving several shards share (``ShardedWorker``): one
/// delivery engine, so that `delivery.maxPerHost` and `delivery.maxInFlight` bound the
/// process rather than each shard, with one set of provider credentials and circuits; and
/// the process's probe, which counts its deliveries and adds up the services' loops.
public struct SharedDelivery: Sendable {
    /// The engine every service submits to (each under its shard id).
    public let engine: DeliveryEngine
    /// The process's probe (served over HTTP).
    public let probe: WorkerProbe

    /// The engine for `configuration.delivery`'s channels and limits, counting into a new
    /// probe; unavailable channels are logged once, with `logger`.
    public init(configuration: ChimeConfiguration, worker: WorkerID, logger: Logger) {
        let probe = WorkerProbe()
        let standard = DeliveryChannels.standard(configuration.delivery)
        for problem in standard.problems { logger.warning("a delivery channel is not available", ["reason": "\(problem)"]) }
        self.probe = probe
        self.engine = DeliveryEngine(
            channels: standard.channels, limits: DeliveryChannels.limits(configuration.delivery), worker: worker,
            onAttempt: { channel, outcome, seconds in probe.noteDelivery(channel: channel, outcome: outcome, seconds: seconds) })
    }
}
