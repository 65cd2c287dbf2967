import ChimeRuntime
import ChimeSecurity
import Foundation
import ZeroMQ

/// The sockets one `run` of the coordinator serves on, all owned by the loop's thread.
struct LoopSockets {
    /// ROUTER: control requests in, replies out.
    let control: Socket
    /// ROUTER: batches to the worker the coordinator picks; heartbeats in.
    let dispatch: Socket
    /// PUB: the coordinator's own events (badges, finished actions), into the forwarder.
    let events: Socket
    /// PULL: acknowledgements and action outcomes from workers.
    let results: Socket
    /// PULL: the journal writer's, reply encoder's and snapshot writer's wake-ups.
    let journalSignal: Socket
    /// The `inproc://` endpoint `journalSignal` is bound to.
    let signalEndpoint: String

    /// A poller for the sockets the loop reads, registered at the ``Polled`` indices.
    func makePoller() -> Poller {
        let poller = Poller()
        poller.register(control, for: .readable)
        poller.register(results, for: .readable)
        poller.register(dispatch, for: .readable)
        poller.register(journalSignal, for: .readable)
        return poller
    }

    /// The registration index of each socket in ``makePoller()``'s poller.
    enum Polled {
        static let control = 0
        static let results = 1
        static let dispatch = 2
        static let journalSignal = 3
    }

    /// Closes every socket.
    func close() {
        control.close()
        dispatch.close()
        results.close()
        events.close()
        journalSignal.close()
    }
}

extension CoordinatorService {
    /// Bound before any CURVE socket: without a handler libzmq admits every client that knows
    /// the server key. It also refuses subscriber keys the forwarder banned (``SubscriberBans``)
    /// and tags each events connection's `User-Id` with a serial (``SubscriberBans/tagConnection()``),
    /// which the forwarder tells connections apart by. Without security, a handler for the
    /// events socket only (the XPUB sets a ZAP domain) that lets everyone in with a tag; `nil`
    /// when the events endpoint is `inproc://` or the context has a handler already.
    /// - Throws: `SecurityError` when the ZAP self-test lets an unknown key in.
    func startZAPHandler(context: Context) throws -> ZAPHandler? {
        let bans = probe.subscriberBans
        let events = SocketDomain.events.rawValue
        guard let security else {
            guard !configuration.endpoints.events.bind.hasPrefix("inproc://") else { return nil }
            do {
                return try ZAPHandler(context: context) { request in
                    .allow(userID: request.domain == events ? bans.tagConnection() : "")
                }
            } catch let error as ZeroMQError where error.code == .addressInUse {
                logger.warning("the context has a ZAP handler already: subscriber connections are told apart by descriptor only")
                return nil
            }
        }
        let operatorLog = telemetry.operatorLog
        return try security.startZAPHandler(
            context: context, refuse: bans.refusal(for:), tag: { $0.domain == events ? bans.tagConnection() : nil }
        ) { [operatorLog] request, decision in
            if case .deny(let reason) = decision, request.domain != SocketDomain.selfTest.rawValue {
                operatorLog.refusedConnections.record(
                    examples: [request.address], metadata: ["socket": "\(request.domain)", "reason": "\(reason)"])
            }
        }
    }

    /// The forwarder between workers' and the coordinator's events and subscribers, bound
    /// (retrying until `deadline` while a predecessor releases the addresses).
    /// - Throws: `ZeroMQError` when an endpoint cannot be bound.
    func makeForwarder(context: Context, until deadline: ContinuousClock.Instant) throws -> EventForwarder {
        let endpoints = configuration.endpoints
        return try EventForwarder(
            context: context, ingest: endpoints.eventsIngest.bind, publish: endpoints.events.bind,
            lingerMilliseconds: configuration.lingerMilliseconds, highWaterMark: configuration.eventHighWaterMark,
            subscriberHighWaterMark: configuration.events.subscriberHighWaterMark,
            maxSubscriptionBytes: configuration.events.maxSubscriptionBytes, maxEventBytes: configuration.events.maxEventBytes,
            maxSubscriptionsPerPeer: configuration.events.maxSubscriptionsPerPeer,
            maxSubscriptionBytesTotal: configuration.events.maxSubscriptionBytesTotal,
            subscriberQueueBytesTotal: configuration.events.subscriberQueueBytesTotal, bans: probe.subscriberBans,
            logger: logger,
            security: security,
            bindDeadline: deadline)
    }

    /// Makes and binds the loop's sockets (each bind retrying until `deadline`).
    /// - Throws: `ZeroMQError` when a socket cannot be made or bound.
    func bindLoopSockets(context: Context, until deadline: ContinuousClock.Instant) throws -> LoopSockets {
        let endpoints = configuration.endpoints
        let linger = configuration.lingerMilliseconds
        let control = try Socket(.router, context: context)
        try control.set(.linger(milliseconds: linger))
        // Requests beyond 4× the limit drop the connection; up to that we reply too_large.
        try control.set(.maxMessageSize(bytes: Int64(configuration.coordinator.maxRequestBytes) * 4))
        // A reply to a connection whose queue is full fails at once (EAGAIN) instead of being
        // dropped silently, so the loop sees who does not read (`UnreadReplies`); the queue
        // holds `controlQueueBytesPerConnection` of replies of `maxReplyBytes` at most.
        try control.set(.routerMandatory(true))
        try control.set(.sendHighWaterMark(Self.controlSendHighWaterMark(configuration.limits)))
        try security?.secure(control, as: .control, for: endpoints.control.bind)
        try bind(control, to: endpoints.control.bind, until: deadline)
        let dispatch = try makeDispatchSocket(context: context, until: deadline)
        // The coordinator's own events (badges, finished actions) enter the forwarder in-process.
        let events = try Socket(.publisher, context: context)
        try events.set(.linger(milliseconds: linger))
        try events.set(.sendHighWaterMark(configuration.eventHighWaterMark))
        try events.connect(to: EventForwarder.inprocIngest)
        let results = try Socket(.pull, context: context)
        try results.set(.linger(milliseconds: linger))
        try results.set(.maxMessageSize(bytes: Int64(configuration.limits.maxResultBytes)))
        try security?.secure(results, as: .results, for: endpoints.results.bind)
        try bind(results, to: endpoints.results.bind, until: deadline)
        // The journal writer's "durable up to ticket N" wake-ups.
        let journalSignal = try Socket(.pull, context: context)
        try journalSignal.set(.linger(milliseconds: 0))
        let signalEndpoint = "inproc://chime-journal-\(UUID().uuidString)"
        try journalSignal.bind(to: signalEndpoint)
        return LoopSockets(
            control: control, dispatch: dispatch, events: events, results: results, journalSignal: journalSignal,
            signalEndpoint: signalEndpoint)
    }

    /// The control ROUTER's send high-water mark, in messages: the replies of at most
    /// `maxReplyBytes` that `controlQueueBytesPerConnection` holds (512 by default), at least 16.
    static func controlSendHighWaterMark(_ limits: ChimeConfiguration.Bounds) -> Int32 {
        Int32(clamping: max(16, limits.controlQueueBytesPerConnection / max(1, limits.maxReplyBytes)))
    }

    /// ROUTER, not PUSH: the coordinator picks the worker (credit-based flow control), so it
    /// knows which firings a silent worker holds and redelivers them at once.
    private func makeDispatchSocket(context: Context, until deadline: ContinuousClock.Instant) throws -> Socket {
        let endpoint = configuration.endpoints.dispatch.bind
        let dispatch = try Socket(.router, context: context)
        try dispatch.set(.linger(milliseconds: configuration.lingerMilliseconds))
        try dispatch.set(.routerMandatory(true))
        // The newest connection claiming a routing id takes it: without handover libzmq parks
        // the second one unread for good, with everything it sent and its pipes, even after it
        // closes (issue 37). A live worker's route is not guessable instead (`WorkerRoutes`).
        // No ZMTP heartbeats: libzmq 4.3.4 aborts (`!_io_error`, stream_engine_base.cpp:331,
        // zeromq/libzmq#4364) when a heartbeat falls on a connection whose input stopped at
        // the receive mark and that the peer then reset, which a worker key can arrange.
        try dispatch.set(.routerHandover(true))
        try dispatch.set(.sendHighWaterMark(configuration.coordinator.dispatchHighWaterMark))
        // Workers send only heartbeats here: a larger frame drops the connection before it is
        // read.
        try dispatch.set(.maxMessageSize(bytes: Int64(configuration.limits.maxWorkerMessageBytes)))
        try dispatch.set(.receiveHighWaterMark(Self.dispatchReceiveHighWaterMark))
        try security?.secure(dispatch, as: .dispatch, for: endpoint)
        try bind(dispatch, to: endpoint, until: deadline)
        return dispatch
    }

    /// Starts the map register's reader thread (with a register), the reply encoder and, with
    /// a file store, the snapshot writer (the journal writer is already running).
    /// - Throws: `ZeroMQError` when a helper's signal socket cannot connect.
    func startEncoders(context: Context, signalEndpoint: String) throws {
        startMapRegisterFollower()
        outbox.maxReplyBytes = configuration.limits.maxReplyBytes
        outbox.replyBacklog = ConnectionBacklog(
            totalBytes: configuration.limits.controlQueueBytesTotal,
            perConnectionBytes: configuration.limits.controlQueueBytesPerConnection)
        outbox.dispatchBacklog = ConnectionBacklog(
            totalBytes: configuration.limits.dispatchQueueBytesTotal,
            perConnectionBytes: configuration.limits.dispatchQueueBytesPerConnection, holdsToBound: true)
        outbox.encoder = try ReplyEncoder(
            context: context, signalEndpoint: signalEndpoint, maxReplyBytes: configuration.limits.maxReplyBytes)
        if case .file(let fileStore) = store.storage, let journalWriter = store.journalWriter {
            store.snapshotWriter = try SnapshotWriter(
                store: fileStore, journalWriter: journalWriter, context: context, signalEndpoint: signalEndpoint)
        }
    }

    /// Stops the helper threads (the map register's reader first: nothing it reads is adopted
    /// any more; the journal writer after the encoders: it writes what is
    /// queued unless ownership was lost), keeping the journal position for a stop after a
    /// journal change.
    func stopHelpers() {
        stopMapRegisterFollower()
        store.snapshotWriter?.stop()
        store.snapshotWriter = nil
        outbox.encoder?.stop()
        outbox.encoder = nil
        if let journalWriter = store.journalWriter {
            store.submittedSequenceAtStop = journalWriter.submittedPosition.sequence
            if store.hasLostOwnership { journalWriter.abandon() } else { journalWriter.stop() }
            store.journalWriter = nil
        }
    }

    /// Closes what outlives the loop's sockets, in order: the forwarder and HTTP (every
    /// listener confirmed released, so a standby can bind them once it has the lock), then the
    /// store (abandoned when ownership was lost) and with it the lock.
    func releaseStore() {
        releaseListeners()
        guard case .file(let fileStore) = store.storage else { return }
        if store.hasLostOwnership {
            if store.isJournalChanged, let sequence = store.submittedSequenceAtStop {
                keepStateAfterJournalChange(fileStore, through: sequence)
            }
            fileStore.abandon()
        } else {
            do { try fileStore.close() } catch { logger.error("closing the store failed", ["error": "\(error)"]) }
        }
    }
}
