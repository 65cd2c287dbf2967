import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ

extension WorkerService {
    /// A service's sockets to its shard and where it is in its life, kept from ``open(context:)``
    /// to ``close()``.
    struct Link {
        /// DEALER to the shard's dispatch: batches in, announcements out.
        let incoming: Socket
        /// PUSH to the shard's results: acknowledgements, outcomes and heartbeats.
        let results: Socket
        /// XPUB to the shard's events ingest: fire and action events out, subscriptions in.
        let events: Socket
        /// Whether a subscription has arrived (or `eventPathWait` passed): only then does the
        /// service announce itself and read batches.
        var isEventPathReady = false
        /// When the service takes firings even with no subscription (real time).
        let eventPathDeadline: Date
        /// Set once the service's stop was seen: it delivered what its socket held and waits
        /// (until this instant at the latest) for its running action hooks before it leaves.
        var leavingBy: ContinuousClock.Instant?
        /// When the leaving began, and how many firings it delivered then (for the last log line).
        var leavingSince: ContinuousClock.Instant?
        var deliveredWhileLeaving = 0
    }

    /// The most dispatch batches a service reads in one turn.
    static let batchesPerTurn = 64
    /// The most subscription messages a service reads from its events socket in one turn.
    static let messagesPerTurn = 1_000

    /// Opens the service's three sockets in `context` and connects them to its shard.
    /// - Throws: `ZeroMQError` when an endpoint is invalid.
    func open(context: Context) throws {
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
        // Slow joiner (ZeroMQ Guide ch. 1): events published before the forwarder has passed a
        // subscription up to this socket are dropped, which after a restart lost the first
        // few thousand firings of a burst. So the worker announces itself (and gets firings)
        // only once a subscription has arrived, or after `eventPathWait` seconds when nobody
        // subscribes (the coordinator binds its forwarder before recovering, so a restarted
        // worker normally hears the subscriptions well before that). Real time, not `clock`:
        // this waits for sockets, not for the schedule.
        link = Link(
            incoming: incoming, results: results, events: events, eventPathDeadline: Date().addingTimeInterval(Self.eventPathWait))
        processProbe?.adopt(probe)
        logger.info("worker ready", ["id": state.id.rawValue, "dispatch": endpoints.dispatch.connect])
    }

    /// Closes the sockets (their linger lets a last message out) and leaves the process probe.
    func close() {
        guard let link else { return }
        link.incoming.close()
        link.results.close()
        link.events.close()
        self.link = nil
        processProbe?.release(probe)
    }

    /// Registers the sockets this service reads in `poller`: the events socket (subscriptions)
    /// and, once the event path is ready, the dispatch socket; none while it leaves.
    /// - Returns: their indices in `poller`.
    func register(in poller: Poller) -> [Int] {
        guard let link, link.leavingBy == nil else { return [] }
        var indices = [poller.register(link.events, for: .readable)]
        if link.isEventPathReady { indices.append(poller.register(link.incoming, for: .readable)) }
        return indices
    }

    /// The longest the loop may wait before this service's next turn, in seconds (at most
    /// 0.1): its next heartbeat or acknowledgement, the event path's deadline, the whole
    /// milliseconds before its earliest held firing (`zmq_poll` counts whole milliseconds,
    /// rounded up: the loop sleeps the rest), or 10 ms while it waits for its hooks to leave.
    func wait() -> Double {
        guard let link else { return 0.1 }
        if link.leavingBy != nil { return 0.01 }
        let now = clock.monotonic
        var wait = state.nextWake.map { max(0, min(0.1, $0 - now)) } ?? 0
        if !link.isEventPathReady { wait = max(0, min(wait, link.eventPathDeadline.timeIntervalSince(Date()))) }
        if let due = heldDueIn { wait = min(wait, max(0, (due * 1000).rounded(.down) / 1000)) }
        return wait
    }

    /// One turn of this service after the loop's poll: reads subscriptions and up to 64
    /// batches, fires the held firings now due, takes finished hooks and deliveries, and sends
    /// what `onTick` says (acknowledgements, heartbeats, announcements).
    /// - Returns: whether the sockets to poll changed (the event path became ready).
    /// - Throws: `ZeroMQError` from the sockets.
    func turn(at turnStart: ContinuousClock.Instant) throws -> Bool {
        guard var link, link.leavingBy == nil else { return false }
        probe.noteTurn(
            at: turnStart, delivered: state.deliveredCount, notResent: state.redeliveriesNotResent,
            awaiting: state.awaitingDestinationsCount)
        var becameReady = false
        // At most `messagesPerTurn` subscription messages a turn (the forwarder caps what it
        // passes up, but one shard's socket must not keep the loop from the others).
        for _ in 0..<Self.messagesPerTurn {
            guard let frames = try link.events.receiveMessage(dontWait: true) else { break }
            // XPUB delivers subscriptions as a frame starting with byte 1 (0: unsubscribe).
            if !link.isEventPathReady, frames.first?.first == 1 { becameReady = true }
        }
        if !link.isEventPathReady && !becameReady && Date() >= link.eventPathDeadline {
            becameReady = true
            logger.info("no subscriber yet; taking firings", ["id": state.id.rawValue])
        }
        if becameReady {
            link.isEventPathReady = true
            self.link = link
            probe.noteTakingFirings()
            state.announceAtNextTick()
        }
        // Until then nothing is read either: batches routed to a previous run of this
        // worker id wait in the socket rather than be published to no one.
        for _ in 0..<(link.isEventPathReady ? Self.batchesPerTurn : 0) {
            guard let frames = try link.incoming.receiveMessage(dontWait: true) else { break }
            try deliver(frames, events: link.events)
        }
        try fireHeldDue(events: link.events)
        for outcome in actions.takeFinished() { state.onJobFinished(outcome) }
        for report in deliveries.takeFinished(owner: deliveryOwner) { state.onDeliveryReport(report, monotonic: clock.monotonic) }
        if let capacityShare {
            capacityShare.report(unacknowledged: state.unacknowledgedCount, monotonic: clock.monotonic)
            state.changeCapacity(to: min(max(0, capacityShare.share.value), WorkerMessage.maximumCapacity))
        }
        for directive in state.onTick(monotonic: clock.monotonic) {
            switch directive {
            case .report(let message):
                if try !link.results.send(codec.encodeFrames(message), dontWait: true) {
                    state.onReportNotSent(message)
                }
            case .announce(let message):
                // Dropped when the coordinator is unreachable; the next heartbeat retries.
                guard link.isEventPathReady else { continue }
                _ = try link.incoming.send([codec.encode(message)], dontWait: true)
            case .publish, .run, .deliverToDestinations:
                preconditionFailure("onTick neither publishes, runs jobs nor delivers")
            }
        }
        return becameReady
    }
}
