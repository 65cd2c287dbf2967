import ChimeCore
import ChimeRuntime
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import HTTPServer
import ZeroMQ
import ChimeSecurity

/// The coordinator process's shell: owns the sockets, feeds `CoordinatorState`, carries out
/// its directives. One thread (the caller of `run`) owns every socket but the forwarder's.
///
/// `run` binds (`bindLoopSockets`), serves turns (`turn`, in `CoordinatorService+Turn.swift`)
/// and stops (`finishServing`). Each turn: poll (zmq_poll) until a socket is ready, the
/// journal writer reports a write, or the next firing is due; read and decode what is ready;
/// decide (tick the state); carry out: dispatch batches at once, hand the turn's journal
/// entries to the writer thread (`JournalWriter`, group commit), send replies once their
/// entries are durable.
public final class CoordinatorService {
    let configuration: ChimeConfiguration
    let logger: Logger
    let stop: StopSignal
    /// Whether to wait for the store lock instead of failing when another coordinator holds it.
    let standby: Bool
    /// Whether a standby keeps a warm copy of the state while it waits (`WarmStandby`).
    let isWarmStandby: Bool
    let tunables: CoordinatorConfiguration
    /// The sounds directory named sounds are checked against (`nil`: none configured).
    let sounds: SoundLibrary?
    var state: CoordinatorState
    var storage: CoordinatorStorage = .memory(InMemoryJournal(keepsEntries: false))
    let codec = WireCodec()
    var recordsSinceSnapshot = 0
    /// Since when the state has been quiet (`CoordinatorState.isQuiet`), for snapshots: a
    /// monotonic reading in seconds.
    var quietSince: Double?
    /// The wall and monotonic readings of the previous loop turn, to notice a wall-clock step.
    var previousClocks: (wall: Date, monotonic: Double)?
    var pendingStoreRequests: [(ControlRequest, ClientAddress)] = []
    /// The thread that writes snapshots off the loop (`nil` with the in-memory journal, or
    /// outside `run`).
    var snapshotWriter: SnapshotWriter?
    /// The snapshot being written, when one is.
    var snapshotInFlight: SnapshotInFlight?
    /// `snapshot` and `compact` requests waiting for the next snapshot to start (one under
    /// way may not cover them).
    var snapshotRequests: [(ControlRequest, ClientAddress)] = []
    /// When (monotonic seconds) an automatic snapshot may be tried again after one failed.
    var snapshotRetryAt: Double?
    /// `compact` requests waiting for the journal writer to remove their segments.
    var pendingCompactions: [PendingCompaction] = []
    /// The file store's journal writer thread (`nil` with the in-memory journal).
    var journalWriter: JournalWriter?
    /// The thread that encodes long replies (pages) off the loop; set while `run` serves.
    var replyEncoder: ReplyEncoder?
    /// Where the loop reads the time it schedules by.
    let clock: any ServiceClock
    /// The ZeroMQ context to open sockets in; `nil` makes one per `run` (in-process tests
    /// pass one, so their sockets reach the service over `inproc://`).
    let sharedContext: Context?
    /// Replies and coordinator events waiting for the journal ticket they depend on, in order.
    var outbox = RingQueue<(ticket: UInt64, message: OutboundMessage)>()
    /// When the loop last checked that the store's `LOCK` still names the file it locked.
    var lastOwnershipCheck: ContinuousClock.Instant?
    /// Set when `LOCK` was deleted or replaced, or the lease lapsed, or the journal changed
    /// under this coordinator: nothing more may reach the store's journal.
    var hasLostOwnership = false
    /// Set when the journal's last segment changed under this coordinator
    /// (`.journalChanged`): its state is written as a snapshot at the stop
    /// (`CoordinatorService+JournalChange.swift`).
    var isJournalChanged = false
    /// The journal sequence number of the last entry the state reflects, kept when the journal
    /// writer is abandoned (for the snapshot of a changed journal).
    var submittedSequenceAtStop: UInt64?
    /// Whether a large refused request was freed this turn (see `handleControlMessage`), or a
    /// snapshot finished: free heap pages go back at the end of the turn.
    var isMemoryTrimDue = false
    /// Journal records submitted since the heap was last trimmed (`isGrowthTrimDue`).
    var recordsSinceMemoryTrim = 0
    /// CURVE keys and allow-lists; `nil` serves without CURVE (loopback only, unless
    /// `security.insecure`).
    let security: ServerSecurity?
    /// With security on: the key each worker id last announced itself with on the dispatch
    /// socket. Results count only from a connection with that key, whatever `worker` they claim.
    var workerKeys: [WorkerID: String] = [:]
    /// The supervisor (systemd's `NOTIFY_SOCKET`), told `READY=1`, `STATUS=`, `WATCHDOG=1`
    /// and `STOPPING=1`; `nil` when nobody supervises this process that way.
    let notifier: SystemdNotifier?
    /// Paces the loop's `WATCHDOG=1` pings (at most every half of `WATCHDOG_USEC`).
    var watchdog: WatchdogPacer
    /// When the previous loop turn began (monotonic), to notice a stalled loop.
    var previousTurnStart: ContinuousClock.Instant?
    /// Whether the journal writer found the disk full (the store-full mode, see
    /// `CoordinatorService+StoreFull.swift`).
    var isStoreFull = false
    /// Replies that depend on nothing unwritten (reads and refusals while the store is
    /// full), sent at the end of the control read.
    var immediateReplies: [(body: Data, client: ClientAddress)] = []
    /// Entries the store holds buffered since a start on a full store (0 or 1: `started`).
    var unwrittenAtStart = 0
    /// Per-peer token buckets of the control socket (`control.rateLimit`).
    var rateLimiter: ControlRateLimiter
    /// Rate-limited lines: redeliveries, dead letters, refused connections.
    lazy var operatorLog = OperatorLog(logger: logger)
    /// Warnings a peer's messages cause, a few a second per peer at most.
    lazy var peerLog = PeerLog(logger: logger)
    /// The peer of the control request being handled (its ZAP user id, else its address), for `peerLog`.
    var currentPeer: String?
    /// What `/metrics`, `/healthz` and `/readyz` read (see `CoordinatorService+HTTP.swift`).
    public let probe: CoordinatorProbe
    /// Where to serve HTTP; `nil` serves none.
    let httpAddress: HTTPListenAddress?
    /// Control requests answered since start, by operation and code, for `/metrics`.
    var requestCounts: [CoordinatorMetrics.RequestKey: Int] = [:]
    /// From reading a control request to deciding its reply, in seconds.
    var requestDuration = Histogram(upperBounds: Histogram.durationSecondsBounds)
    /// How long each loop turn took, poll wait excluded, in seconds.
    var turnDuration = Histogram(upperBounds: Histogram.durationSecondsBounds)
    /// The slowest loop turn since start, in seconds.
    var slowestTurnSeconds = 0.0
    /// The operation of the control request being decided and whether it changes something
    /// (`nil` until it decodes), for `recordRequest`.
    var decodedRequest: (operation: ControlOperation, isMutating: Bool)?
    /// The cluster's map register (`cluster.register`: a file or a Kubernetes ConfigMap),
    /// polled about once a second for a new map on a thread of its own while `run` serves
    /// (`CoordinatorService+MapRegister.swift`); `nil`: the map is the configured one.
    public var mapRegister: (any SlotMapRegistering)?
    /// How often the register's stamp is compared.
    var mapRegisterPollInterval = MapRegisterFollower.defaultInterval
    /// The register's reader thread, while `run` serves with a register.
    var mapRegisterFollower: MapRegisterFollower?
    /// The fresh reads of the map register `move` steps wait for, by request (see
    /// `awaitFreshMapRead`): the read's ticket, when it was asked for, and how many
    /// `try_again`s the step got so far.
    var freshMapReads: [String: (ticket: UInt64, since: ContinuousClock.Instant, refusals: Int)] = [:]
    /// The fresh reads of the map register whose record the loop has taken.
    var freshMapReadsDone: UInt64 = 0

    /// A message the loop sends once the journal entries it reports on are durable.
    enum OutboundMessage {
        case reply(Data, to: ClientAddress)
        /// A reply the reply encoder is still encoding (its job number).
        case encoding(UInt64, to: ClientAddress)
        case event(topic: String, body: Data)
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
        self.httpAddress = http
        self.isWarmStandby = warmStandby
        self.notifier = notifier
        self.watchdog = WatchdogPacer(notifier: notifier)
        self.configuration = configuration
        self.rateLimiter = ControlRateLimiter(limit: configuration.control.rateLimit)
        self.security = security
        self.clock = clock
        self.sharedContext = context
        self.logger = logger
        self.stop = stop
        self.standby = standby
        var tunables = CoordinatorConfiguration(from: configuration)
        tunables.shardMap = shardMap
        tunables.shardID = shardID
        if tunables.shardMap == nil {
            let endpoints = configuration.endpoints
            tunables.shardMap = .single(ShardMap.Endpoints(
                control: endpoints.control.connect, dispatch: endpoints.dispatch.connect, results: endpoints.results.connect,
                events: endpoints.events.connect, eventsIngest: endpoints.eventsIngest.connect))
        }
        self.tunables = tunables
        sounds = SoundLibrary(directory: configuration.notifications.soundsDirectory)
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
        // Not shut down by the stop signal: the loop sees the signal within one poll (≤ 100 ms)
        // and then still answers the requests whose journal entries become durable.
        try SecuritySettings.checkBinds(configuration, isSecured: security != nil)
        let context = try sharedContext ?? Context()
        // Stopped last (deferred first), after every socket closed.
        let zapHandler = try startZAPHandler(context: context)
        defer { zapHandler?.stop() }
        var httpServer = try startHTTP(isStandby: standby)
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
        let opened = try openStorage(tunables: tunables) {
            bindDeadline = ContinuousClock.now + ListenerHandover.bindDeadline
            forwarder = try makeForwarder(context: context, until: bindDeadline)
        }
        guard let (storage, recovered) = opened else { return }
        self.storage = storage
        self.state = recovered
        if httpServer == nil && httpAddress != nil { httpServer = try startHTTPAfterTakeover(until: bindDeadline) }
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
        if case .file(let store) = storage {
            journalWriter = try JournalWriter(
                store: store, context: context, signalEndpoint: sockets.signalEndpoint, unwrittenEntries: unwrittenAtStart,
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

    /// Logs a step of the wall clock (the wall clock moved more than a second more or less
    /// than the monotonic one since the last turn). Due times follow the wall clock; leases
    /// and liveness run on the monotonic one, so the step moves neither.
    func noticeWallClockStep() {
        let current = (wall: clock.now, monotonic: clock.monotonic)
        defer { previousClocks = current }
        guard let previous = previousClocks else { return }
        let step = current.wall.timeIntervalSince(previous.wall) - (current.monotonic - previous.monotonic)
        if abs(step) > Self.wallClockStepThreshold {
            logger.warning(
                "wall clock stepped", ["seconds": .rounded(step, digits: 3), "now": "\(RFC3339.format(current.wall))"])
        }
    }

    /// The wall-clock step, in seconds, that `noticeWallClockStep` reports.
    static let wallClockStepThreshold = 1.0

    /// Messages a worker's connection to the dispatch socket may queue unread (heartbeats).
    static let dispatchReceiveHighWaterMark: Int32 = 64

    /// Until the next due firing or lease expiry, at most 100 ms so the stop flag is seen.
    ///
    /// `zmq_poll` counts whole milliseconds, so the loop polls until about 1 ms before a due
    /// time, then sleeps the rest with `nanosleep` (tens of microseconds of slack, no busy
    /// wait) and polls without blocking: sub-millisecond precision on a 2-core machine.
    func pollTimeout(now: Date) -> Duration {
        guard let wake = state.nextWake else { return .milliseconds(100) }
        let remaining = wake.timeIntervalSince(now)
        if remaining <= 0 { return .zero }
        if remaining < 0.002 {
            Thread.sleep(forTimeInterval: remaining)
            return .zero
        }
        let milliseconds = Int64(((min(0.1, remaining) - 0.001) * 1000).rounded(.down))
        return .milliseconds(milliseconds)
    }

    /// Hands the turn's dispatches to workers, the turn's journal entries to the journal
    /// writer (which writes a lone request's few entries on this thread when it is idle, so
    /// the reply leaves this turn: `JournalWriter`), then queues replies and events until
    /// those entries are durable.
    ///
    /// Dispatch does not wait for the fsync: a firing whose `dispatched` entry is lost in a
    /// crash is re-derived at recovery from the durable schedule and acknowledgements and sent
    /// again with the same firing id (`FiringID(reminder:dueAt:)`), which subscribers
    /// deduplicate on. Replies (and badge events) still wait: an acknowledged request is
    /// durable.
    func carryOut(_ directives: [CoordinatorDirective], control: Socket, dispatch: Socket, events: Socket) throws {
        // Every turn, idle ones too, and before this turn's drains (store requests, snapshots).
        journalWriter?.requestFsyncIfDue()
        guard !directives.isEmpty else { return }
        try checkLeaseBeforeSending()
        var entries: [JournalEntry] = []
        // Replies to requests with a `requestId` were encoded once, for their `answered` entry.
        var answeredReplies: [String: Data] = [:]
        for directive in directives {
            switch directive {
            case .append(let entry):
                entries.append(entry)
                if case .answered(let requestId, let reply, _, _) = entry { answeredReplies[requestId] = reply }
            case .dispatch(let batch, let worker): send(batch, to: worker, on: dispatch)
            case .publish, .reply, .replyEncoded: continue
            }
        }
        // Replies and events follow every entry submitted so far (read-your-writes).
        var ticket: UInt64 = 0
        switch storage {
        case .memory(var journal):
            if !entries.isEmpty {
                journal.append(entries)
                storage = .memory(journal)
            }
        case .file:
            if let journalWriter {
                ticket = entries.isEmpty ? journalWriter.lastSubmitted : journalWriter.submit(entries, allowance: inlineAllowance())
            }
            recordsSinceSnapshot += entries.count
        }
        recordsSinceMemoryTrim += entries.count
        for directive in directives {
            switch directive {
            case .append, .dispatch:
                continue
            case .publish(let event):
                let body: Data
                switch event {
                case .badge(let badge): body = codec.encode(badge)
                case .action(let action): body = codec.encode(action)
                case .handOver(let handOver): body = codec.encode(handOver)
                }
                outbox.append((ticket, .event(topic: event.topic, body: body)))
            case .reply(let outcome, let requestId, let client):
                if let body = requestId.flatMap({ answeredReplies[$0] }) {
                    outbox.append((ticket, .reply(body, to: client)))
                } else if let replyEncoder, ReplyEncoder.isLong(outcome) {
                    outbox.append((ticket, .encoding(replyEncoder.submit(outcome, requestId: requestId), to: client)))
                } else {
                    outbox.append((ticket, .reply(outcome.encodedReply(requestId: requestId), to: client)))
                }
            case .replyEncoded(let body, let client):
                outbox.append((ticket, .reply(body, to: client)))
            }
        }
        try flushOutbox(control: control, events: events)
    }

    /// Sends the waiting replies and events whose journal entries are durable, in order.
    ///
    /// A reply still being encoded (`.encoding`) holds back the later replies to its client
    /// only: one connection's replies keep their order, and other clients (a ping) do not wait
    /// for a page's JSON.
    /// - Throws: the journal writer's error, when a write or fsync failed (the coordinator
    ///   then stops: it cannot promise durability).
    func flushOutbox(control: Socket, events: Socket) throws {
        // Asked every turn, so a failed write stops the coordinator even when no reply waits.
        var durable = UInt64.max
        if let journalWriter {
            let status = try fencing { try journalWriter.status() }
            durable = status.durableTicket
            if status.isStoreFull != isStoreFull { noteStoreMode(isFull: status.isStoreFull) }
        }
        if !outbox.isEmpty { try checkLeaseBeforeSending() }
        var held: [(ticket: UInt64, message: OutboundMessage)] = []
        var waitingClients = Set<[Data]>()
        while let next = outbox.first, next.ticket <= durable {
            _ = outbox.popFirst()
            switch next.message {
            case .reply(let body, let client):
                if waitingClients.contains(client.routing) {
                    held.append(next)
                } else {
                    sendReply(body, to: client, on: control)
                }
            case .encoding(let job, let client):
                if !waitingClients.contains(client.routing), let body = replyEncoder?.take(job) {
                    sendReply(body, to: client, on: control)
                } else {
                    waitingClients.insert(client.routing)
                    held.append(next)
                }
            case .event(let topic, let body):
                // PUB drops at its high-water mark rather than block the loop; badge state is
                // durable and `chime delivered` / `recipient` show it.
                _ = try events.send([Data(topic.utf8), body], dontWait: true)
            }
        }
        if !held.isEmpty {
            // Rare (a page is being encoded) and short: the held replies go back in front.
            var rest = held
            while let next = outbox.popFirst() { rest.append(next) }
            outbox = RingQueue(rest)
        }
    }

    func sendReply(_ body: Data, to client: ClientAddress, on control: Socket) {
        do {
            _ = try control.send(client.routing + [body], dontWait: true)
        } catch {
            // The client retries with the same requestId and gets the remembered reply.
            logger.warning("reply not sent", ["error": "\(error)"])
        }
    }

    /// Answers the store requests of this turn, now that its entries are durable.
    func serveStoreRequests(control: Socket, events: Socket) throws {
        guard !pendingStoreRequests.isEmpty else { return }
        // The snapshot must match the journal, and statistics are read from the store; earlier
        // replies go first.
        var isFull = false
        do {
            try journalWriter?.drain()
        } catch let error as JournalError where error.code == .noSpace {
            // The disk filled after these were accepted: the writer is not idle, so the store
            // cannot be read or snapshotted now.
            isFull = true
        }
        // Pages still being encoded go before these too (store requests are rare and pause anyway).
        replyEncoder?.drain()
        try flushOutbox(control: control, events: events)
        let requests = pendingStoreRequests
        pendingStoreRequests.removeAll()
        for (request, client) in requests {
            if !isFull, case .file = storage, request.operation == .snapshot || request.operation == .compact {
                // Answered once the snapshot thread has written it (`snapshotIfDue`).
                snapshotRequests.append((request, client))
                continue
            }
            let body = isFull ? storeFullReply(to: request) : handleStoreRequest(request)
            _ = try control.send(client.routing + [body], dontWait: true)
        }
    }

    /// Hands a batch to one worker; a worker that is gone or full gets it back into the line.
    func send(_ batch: DispatchBatch, to worker: WorkerID, on dispatch: Socket) {
        do {
            if try dispatch.send([Data(worker.rawValue.utf8)] + codec.encodeFrames(batch), dontWait: true) { return }
            logger.warning("worker queue full; firings wait", ["worker": "\(worker.rawValue)", "firings": .int(batch.firings.count)])
        } catch let error as ZeroMQError where error.code == .hostUnreachable {
            logger.warning("worker not connected; firings wait", ["worker": worker.rawValue])
        } catch {
            logger.error("dispatch failed", ["worker": worker.rawValue, "error": "\(error)"])
        }
        state.onDispatchFailed(batch, to: worker, at: clock.now, monotonic: clock.monotonic)
    }
}
