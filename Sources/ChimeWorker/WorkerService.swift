import ChimeCore
import ChimeDelivery
import ChimeRuntime
import ChimeWire
import Foundation
import HTTPServer
import ZeroMQ
import ChimeSecurity

/// The worker process's shell: pulls dispatch batches, publishes fire events, pushes
/// acknowledgements and heartbeats. One thread (the caller of `run`) owns every socket.
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

    /// Connects and serves until the stop signal.
    /// - Throws: `ZeroMQError` when an endpoint is invalid; `HTTPServerError` when the HTTP
    ///   address cannot be listened on.
    public func run(onReady: () -> Void = {}) throws {
        processProbe?.adopt(probe)
        defer { processProbe?.release(probe) }
        let httpServer = try httpAddress.map { address throws(HTTPServerError) in
            try HTTPServer(address: address) { [routes = (processProbe ?? probe).routes] in routes.respond(to: $0) }
        }
        defer { httpServer?.stop() }
        // Not shut down by the stop signal: the loop sees the flag within one poll (≤ 100 ms)
        // and then hands back what it holds (`handBack`) over the still open sockets.
        let context = try sharedContext ?? Context()
        let endpoints = configuration.endpoints
        let linger = configuration.lingerMilliseconds
        // DEALER whose routing id is the worker id, `/` and a random nonce: announcements over
        // this connection tell the coordinator's ROUTER the route, and the nonce keeps another
        // connection from taking it over (the ROUTER hands a claimed routing id to the newest).
        let incoming = try Socket(.dealer, context: context)
        try incoming.set(.linger(milliseconds: linger))
        try incoming.set(.routingID(DispatchRoute.makeRoutingID(for: state.id)))
        try incoming.set(.receiveHighWaterMark(configuration.worker.receiveHighWaterMark))
        try curve?.secure(incoming, for: endpoints.dispatch.connect)
        try incoming.connect(to: endpoints.dispatch.connect)
        let results = try Socket(.push, context: context)
        try results.set(.linger(milliseconds: linger))
        try curve?.secure(results, for: endpoints.results.connect)
        try results.connect(to: endpoints.results.connect)
        // XPUB, not PUB: the subscriptions coming back tell when the path to subscribers is
        // up (below), and it publishes like PUB.
        let events = try Socket(.xpublisher, context: context)
        try events.set(.linger(milliseconds: linger))
        try events.set(.sendHighWaterMark(configuration.eventHighWaterMark))
        // Subscriptions come from the forwarder, which caps them; this bounds them here too.
        try events.set(.maxMessageSize(bytes: configuration.events.subscriptionFrameLimit(curve: curve != nil)))
        try curve?.secure(events, for: endpoints.eventsIngest.connect)
        try events.connect(to: endpoints.eventsIngest.connect)
        defer {
            incoming.close()
            results.close()
            events.close()
        }
        logger.info(
            "worker ready",
            ["id": state.id.rawValue, "dispatch": endpoints.dispatch.connect,
             "http": httpServer.map { HTTPListenAddress(host: $0.address.host, port: $0.port).description } ?? "off"])
        notifier?.notifyReady(status: "worker \(state.id.rawValue): connected to \(endpoints.dispatch.connect)")
        onReady()
        var watchdog = WatchdogPacer(notifier: notifier)

        // Slow joiner (ZeroMQ Guide ch. 1): events published before the forwarder has passed a
        // subscription up to this socket are dropped, which after a restart lost the first
        // few thousand firings of a burst. So the worker announces itself (and gets firings)
        // only once a subscription has arrived, or after `eventPathWait` seconds when nobody
        // subscribes (the coordinator binds its forwarder before recovering, so a restarted
        // worker normally hears the subscriptions well before that).
        var isEventPathReady = false
        // Real time, not `clock`: this waits for sockets, not for the schedule.
        let eventPathDeadline = Date().addingTimeInterval(Self.eventPathWait)
        // The dispatch socket joins the poll set once the event path is ready.
        var poller = Poller()
        poller.register(events, for: .readable)
        func becomeReady() {
            isEventPathReady = true
            probe.noteTakingFirings()
            state.announceAtNextTick()
            poller = Poller()
            poller.register(incoming, for: .readable)
            poller.register(events, for: .readable)
        }
        do {
            while !stop.isStopRequested {
                let turnStart = ContinuousClock.now
                watchdog.pingIfDue(at: turnStart)
                probe.noteTurn(
                    at: turnStart, delivered: state.deliveredCount, notResent: state.redeliveriesNotResent,
                    awaiting: state.awaitingDestinationsCount)
                let now = clock.monotonic
                var wait = state.nextWake.map { max(0, min(0.1, $0 - now)) } ?? 0
                if !isEventPathReady { wait = max(0, min(wait, eventPathDeadline.timeIntervalSince(Date()))) }
                // `zmq_poll` counts whole milliseconds, rounded up: it waits the whole ones
                // before a held firing's due instant, and `fireHeldDue` sleeps the rest.
                if let due = state.nextHeldDue {
                    wait = min(wait, max(0, (due.timeIntervalSince(clock.now) * 1000).rounded(.down) / 1000))
                }
                _ = try poller.poll(timeout: .microseconds(Int64(wait * 1_000_000)))
                while let frames = try events.receiveMessage(dontWait: true) {
                    // XPUB delivers subscriptions as a frame starting with byte 1 (0: unsubscribe).
                    if !isEventPathReady, frames.first?.first == 1 { becomeReady() }
                }
                if !isEventPathReady && Date() >= eventPathDeadline {
                    becomeReady()
                    logger.info("no subscriber yet; taking firings", ["id": state.id.rawValue])
                }
                // Until then nothing is read either: batches routed to a previous run of this
                // worker id wait in the socket rather than be published to no one.
                for _ in 0..<(isEventPathReady ? 64 : 0) {
                    guard let frames = try incoming.receiveMessage(dontWait: true) else { break }
                    try deliver(frames, events: events)
                }
                try fireHeldDue(events: events)
                for outcome in actions.takeFinished() { state.onJobFinished(outcome) }
                for report in deliveries.takeFinished(owner: deliveryOwner) { state.onDeliveryReport(report, monotonic: clock.monotonic) }
                if let capacityShare {
                    capacityShare.report(unacknowledged: state.unacknowledgedCount, monotonic: clock.monotonic)
                    state.changeCapacity(to: min(max(0, capacityShare.share.value), WorkerMessage.maximumCapacity))
                }
                for directive in state.onTick(monotonic: clock.monotonic) {
                    switch directive {
                    case .report(let message):
                        if try !results.send(codec.encodeFrames(message), dontWait: true) {
                            state.onReportNotSent(message)
                        }
                    case .announce(let message):
                        // Dropped when the coordinator is unreachable; the next heartbeat retries.
                        guard isEventPathReady else { continue }
                        _ = try incoming.send([codec.encode(message)], dontWait: true)
                    case .publish, .run, .deliverToDestinations:
                        preconditionFailure("onTick neither publishes, runs jobs nor delivers")
                    }
                }
            }
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            // A shared context shut down by its owner: unacknowledged firings are redelivered by lease.
            logger.info("worker stopping", ["id": "\(state.id.rawValue)", "delivered": .int(state.deliveredCount)])
            return
        }
        notifier?.notifyStopping(status: "worker \(state.id.rawValue): handing back and stopping")
        try handBack(incoming: incoming, results: results, events: events, isEventPathReady: isEventPathReady)
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

    /// Delivers the held firings that are due, first sleeping until the earliest one's due
    /// instant when that is at most `heldFiringSleep` away (the poll before woke up to a
    /// millisecond early).
    /// - Throws: `ZeroMQError` from the events socket.
    func fireHeldDue(events: Socket) throws {
        guard let due = state.nextHeldDue else { return }
        let remaining = due.timeIntervalSince(clock.now)
        if remaining > Self.heldFiringSleep { return }
        if remaining > 0 { Thread.sleep(forTimeInterval: remaining) }
        let now = clock.now
        try carryOut(state.onTimer(at: now, monotonic: clock.monotonic), events: events, at: now)
    }

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
