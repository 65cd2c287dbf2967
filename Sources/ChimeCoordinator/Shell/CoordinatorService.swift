import ChimeCore
import ChimeRuntime
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import HTTPServer
import ZeroMQ
import ChimeSecurity

/// The coordinator process's shell: an executor. It owns the sockets and the helper threads,
/// reads and decodes what arrives, hands it to ``CoordinatorState`` (every decision —
/// admission, dispatch, the store's upkeep, slot moves — is the state's) and carries out the
/// directives it gets back. One thread (the caller of `run`) owns every socket but the
/// forwarder's.
///
/// `run` binds (`bindLoopSockets`), serves turns (`turn`, in `CoordinatorService+Turn.swift`)
/// and stops (`finishServing`). Each turn: poll (zmq_poll) until a socket is ready, the
/// journal writer reports a write, or the next firing is due; read and decode what is ready
/// into the state's inputs; tick the state; carry out (`CoordinatorService+CarryOut.swift`):
/// dispatch batches at once, hand the turn's journal entries to the writer thread
/// (`JournalWriter`, group commit), queue every reply and event in the one ``Outbox`` until
/// the entries it depends on are durable, and do the store's and the map register's work on
/// their threads, whose results come back as inputs the next turns take.
///
/// Its stored state is a few values: the ``ServiceSetup`` it was made with, the ``StoreSession``
/// (storage, writers, ownership), the ``Outbox``, the ``LoopTelemetry``, the ``InboundGate``
/// (rate limits, worker keys, codec) and the map register it follows (``MapFollowing``).
public final class CoordinatorService {
    let configuration: ChimeConfiguration
    let logger: Logger
    let stop: StopSignal
    /// Where the loop reads the time it schedules by.
    let clock: any ServiceClock
    /// CURVE keys and allow-lists; `nil` serves without CURVE (loopback only, unless
    /// `security.insecure`).
    let security: ServerSecurity?
    /// The supervisor (systemd's `NOTIFY_SOCKET`), told `READY=1`, `STATUS=`, `WATCHDOG=1`
    /// and `STOPPING=1`; `nil` when nobody supervises this process that way.
    let notifier: SystemdNotifier?
    /// What `/metrics`, `/healthz` and `/readyz` read (see `CoordinatorService+HTTP.swift`).
    public let probe: CoordinatorProbe
    let setup: ServiceSetup
    /// Why `notifications.stringsDirectory` could not be read; `run` throws it.
    let stringsError: StringTablesError?
    /// Every decision and the durable state.
    var state: CoordinatorState
    var store = StoreSession()
    var outbox = Outbox()
    var telemetry: LoopTelemetry
    var inbound: InboundGate
    var mapFollowing = MapFollowing()

    /// The cluster's map register (`cluster.register`: a file or a Kubernetes ConfigMap),
    /// polled about once a second for a new map on a thread of its own while `run` serves
    /// (`CoordinatorService+MapRegister.swift`); `nil`: the map is the configured one.
    public var mapRegister: (any SlotMapRegistering)? {
        get { mapFollowing.register }
        set { mapFollowing.register = newValue }
    }

    /// How often the register's stamp is compared.
    var mapRegisterPollInterval: Duration {
        get { mapFollowing.pollInterval }
        set { mapFollowing.pollInterval = newValue }
    }

    /// Makes a coordinator service; nothing is opened or bound until `run`.
    /// - Parameters:
    ///   - standby: wait for the store lock (another coordinator is active) and take over
    ///     when it is released, instead of failing.
    ///   - clock: the time the schedule runs by (`SystemClock` in a process).
    ///   - context: the ZeroMQ context for the sockets; `nil` makes one. With a shared
    ///     context every endpoint may be `inproc://`.
    ///   - security: CURVE on every endpoint that is not `inproc://`, with a ZAP handler in
    ///     the context and roles from its allow-lists; `nil` serves without keys.
    ///   - notifier: the service supervisor to notify (`SystemdNotifier(environment:)` in a
    ///     process started by systemd or a test supervisor); `nil` notifies nobody.
    ///   - warmStandby: with `standby`, load the snapshot and follow the journal while
    ///     waiting, so a takeover replays only the last records (it holds a copy of the
    ///     state: as much memory as the active coordinator); `false` recovers at takeover.
    ///   - http: where to serve `/metrics`, `/healthz` and `/readyz` (from before the store
    ///     is opened, so a standby and a recovery answer too); `nil` serves no HTTP.
    ///   - shardMap: the cluster's shard map (validated); `nil`: one shard owning every slot,
    ///     on `configuration.endpoints`.
    ///   - shardID: which shard of `shardMap` this coordinator serves (`configuration`'s
    ///     endpoints are then that shard's).
    public init(
        configuration: ChimeConfiguration, logger: Logger, stop: StopSignal, standby: Bool = false,
        clock: any ServiceClock = SystemClock(), context: Context? = nil, security: ServerSecurity? = nil,
        notifier: SystemdNotifier? = nil, warmStandby: Bool = true, http: HTTPListenAddress? = nil,
        shardMap: ShardMap? = nil, shardID: Int = 0
    ) {
        self.configuration = configuration
        self.logger = logger
        self.stop = stop
        self.clock = clock
        self.security = security
        self.notifier = notifier
        var tunables = CoordinatorConfiguration(from: configuration)
        do {
            tunables.strings = try StringTables.load(
                directory: configuration.notifications.stringsDirectory, developmentLocale: configuration.notifications.developmentLocale)
            stringsError = nil
        } catch {
            stringsError = error
        }
        tunables.shardMap = shardMap
        tunables.shardID = shardID
        if tunables.shardMap == nil {
            let endpoints = configuration.endpoints
            tunables.shardMap = .single(ShardMap.Endpoints(
                control: endpoints.control.connect, dispatch: endpoints.dispatch.connect, results: endpoints.results.connect,
                events: endpoints.events.connect, eventsIngest: endpoints.eventsIngest.connect))
        }
        setup = ServiceSetup(
            tunables: tunables, isStandby: standby, isWarmStandby: warmStandby, httpAddress: http, sharedContext: context,
            sounds: SoundLibrary(directory: configuration.notifications.soundsDirectory))
        telemetry = LoopTelemetry(watchdog: WatchdogPacer(notifier: notifier), operatorLog: OperatorLog(logger: logger))
        inbound = InboundGate(
            rateLimiter: ControlRateLimiter(limit: configuration.control.rateLimit),
            fairQueue: ControlFairQueue(limits: .init(
                maxBytesPerConnection: configuration.limits.controlPendingBytesPerConnection,
                maxBytesTotal: configuration.limits.controlPendingBytesTotal)),
            peerLog: PeerLog(logger: logger))
        self.probe = CoordinatorProbe(shard: tunables.eventShard, mapEpoch: tunables.shardMap?.mapEpoch ?? 1)
        self.state = CoordinatorState(configuration: tunables, startedAt: clock.now)
    }

    /// Recovers from the store (after waiting for its lock as a standby), binds the sockets,
    /// starts the forwarder and serves until the stop signal.
    /// - Parameter onReady: called once every socket is bound.
    /// - Throws: `SecurityError` when an endpoint is not loopback and there are no keys (and
    ///   no `security.insecure`), or the ZAP self-test lets an unknown key in;
    ///   `ZeroMQError` when a socket cannot be bound; `JournalError` when the store
    ///   is locked, damaged beyond its tail, or fails to write other than for want of space
    ///   (the coordinator then stops: it cannot promise durability; a full disk is a mode,
    ///   see `CoordinatorService+StoreFull.swift`), and `.lockLost` when `LOCK` was deleted or
    ///   replaced while it ran, or the `EPOCH` file passed this coordinator's epoch (checked
    ///   every 100 ms and after every stall; it then stops without writing what is queued or
    ///   sending anything more).
    public func run(onReady: () -> Void = {}) throws {
        // A strings directory that cannot be read stops the start, naming the file.
        if let stringsError { throw stringsError }
        // Not shut down by the stop signal: the loop sees the signal within one poll (≤ 100 ms)
        // and then still answers the requests whose journal entries become durable.
        try SecuritySettings.checkBinds(configuration, isSecured: security != nil)
        let context = try setup.sharedContext ?? Context()
        // Stopped last (deferred first), after every socket closed.
        let zapHandler = try startZAPHandler(context: context)
        defer { zapHandler?.stop() }
        var httpServer = try startHTTP(isStandby: setup.isStandby)
        defer {
            probe.enter(.stopping)
            httpServer?.stop()
        }
        if let security {
            logger.info(
                "CURVE on every endpoint; ZAP self-test refused an unknown key",
                ["keys": security.directory.path, "serverKey": security.serverKeys.publicKey]
                    .merging(security.policy.keyCounts.map { ($0.key.rawValue, String($0.value)) }) { $1 })
        }
        // The event forwarder is bound as soon as the store is ours, before recovery: workers
        // and subscribers then connect and pass subscriptions along while the schedule loads,
        // so workers are ready to publish when the first firing leaves.
        var forwarder: EventForwarder?
        defer { forwarder?.stop() }
        // Once the store is ours, every bind may retry while a predecessor on this host still
        // releases the address (`ListenerHandover`), up to one deadline for all of them.
        var bindDeadline = ContinuousClock.now + ListenerHandover.bindDeadline
        let opened = try openStorage(tunables: setup.tunables) {
            bindDeadline = ContinuousClock.now + ListenerHandover.bindDeadline
            forwarder = try makeForwarder(context: context, until: bindDeadline)
        }
        guard let (storage, recovered) = opened else { return }
        store.storage = storage
        self.state = recovered
        if httpServer == nil && setup.httpAddress != nil { httpServer = try startHTTPAfterTakeover(until: bindDeadline) }
        publishSnapshotFigures()
        defer {
            // Every listener closed, and confirmed released, before the lock goes: a standby
            // binds these endpoints once it has the lock (the sockets of the loop were closed
            // by the defer below, which runs first).
            forwarder?.stop()
            forwarder = nil
            probe.enter(.stopping)
            httpServer?.stop()
            httpServer = nil
            releaseStore()
        }

        let sockets = try bindLoopSockets(context: context, until: bindDeadline)
        if case .file(let fileStore) = store.storage {
            store.journalWriter = try JournalWriter(
                store: fileStore, context: context, signalEndpoint: sockets.signalEndpoint, unwrittenEntries: store.unwrittenAtStart,
                probe: probe)
        }
        defer {
            stopHelpers()
            sockets.close()
        }
        try startEncoders(context: context, signalEndpoint: sockets.signalEndpoint)
        let endpoints = configuration.endpoints
        logger.info(
            "coordinator ready", ["control": "\(endpoints.control.bind)", "dispatch": "\(endpoints.dispatch.bind)",
                                  "results": "\(endpoints.results.bind)", "events": "\(endpoints.events.bind)",
                                  "eventsIngest": "\(endpoints.eventsIngest.bind)", "pid": .integer(getpid()),
                                  "http": "\(Self.httpDescription(httpServer))"])
        notifier?.notifyReady(status: activeStatusLine())
        probe.enter(.active)
        onReady()

        try serve(sockets)
        try finishServing(sockets)
    }
}
