import ChimeRuntime
import ChimeSecurity
import Foundation
import ZeroMQ

/// How the forwarder makes its XPUB: every option is set on the new socket (CURVE server keys
/// and ZAP domain, ZMQ_MAXMSGSIZE, both high-water marks, ZMQ_LINGER, ZMQ_XPUB_VERBOSER), its
/// monitor is attached before it binds, and the bind retries until a deadline while a
/// predecessor releases the address.
struct PublishSocketRecipe: Sendable {
    /// Subscription messages queued per subscriber connection (the XPUB's ZMQ_RCVHWM).
    static let subscriptionHighWaterMark: Int32 = 16
    /// Where subscribers connect.
    let endpoint: String
    let lingerMilliseconds: Int32
    let highWaterMark: Int32
    let subscriberHighWaterMark: Int32
    let maxSubscriptionBytes: Int
    let security: ServerSecurity?

    /// Makes, monitors and binds a new XPUB.
    /// - Throws: `ZeroMQError` when the socket cannot be made or bound by `deadline`.
    func make(context: Context, monitorEndpoint: String, until deadline: ContinuousClock.Instant) throws -> Socket {
        let backend = try Socket(.xpublisher, context: context)
        try backend.set(.linger(milliseconds: lingerMilliseconds))
        try backend.set(.sendHighWaterMark(subscriberHighWaterMark))
        // Small: libzmq moves a connection's queued subscriptions into its trie whenever the
        // socket processes commands (inside each receive), ahead of the loop that counts them;
        // a small inbound queue keeps that lead to about one batch, so a flooder is cut off
        // with little more than the bound in the trie.
        try backend.set(.receiveHighWaterMark(Self.subscriptionHighWaterMark))
        try backend.set(.maxMessageSize(bytes: ChimeConfiguration.Events.subscriptionFrameLimit(maxSubscriptionBytes, curve: security != nil)))
        // Every subscribe and unsubscribe reaches the forwarder, which counts them per connection.
        try backend.set(.xpubVerboser(true))
        // The coordinator's ZAP handler tags each connection's User-Id with a serial (which
        // tells connections apart that share a descriptor over time); with keys it also
        // refuses banned keys. Without keys it refuses nothing.
        if let security {
            try security.secure(backend, as: .events, for: endpoint)
        } else if !endpoint.hasPrefix("inproc://") {
            try backend.set(.zapDomain(SocketDomain.events.rawValue))
        }
        // Before the bind, so no connection's accept or disconnect is missed.
        try backend.monitor(at: monitorEndpoint, events: [.accepted, .disconnected])
        try ListenerHandover.bind(backend, to: endpoint, until: deadline)
        return backend
    }
}

/// The forwarder's thread: moves events from the XSUB to the XPUB, keeps the
/// ``SubscriptionBook`` of the XPUB's subscriptions, passes the publishers only a topic's
/// first subscribe and last unsubscribe, and cuts off a peer that goes past a bound: a key is
/// banned, and each of the peer's connections is shut down on its own
/// (``ConnectionSocket``), so other subscribers keep their connections and events. Lives on
/// one thread; not `Sendable`.
final class ForwarderLoop {
    /// Events moved before the other sockets get a turn.
    static let batch = 512
    /// Subscriptions read before they are counted: few, since each receive lets libzmq move
    /// more of them into its trie ahead of the count.
    static let subscriptionBatch = 16

    private let frontend: Socket
    private let control: Socket
    private let backend: Socket
    private let monitor: Socket
    private var book: SubscriptionBook
    private var backlog: SubscriberBacklog
    private let bans: SubscriberBans
    private let trimmer: SubscriberMemoryTrimmer
    /// One line a second at most, however many subscribers a storm cuts off.
    private let cutOffLog: RateLimitedLog?
    /// One line a second at most for subscribers cut off for falling behind.
    private let slowLog: RateLimitedLog?
    private let poller = Poller()

    init(
        context: Context, recipe: PublishSocketRecipe, frontend: Socket, control: Socket, limits: SubscriptionBook.Limits,
        backlog: SubscriberBacklog, bans: SubscriberBans, trimmer: SubscriberMemoryTrimmer, logger: Logger?, until deadline: ContinuousClock.Instant
    ) throws {
        self.frontend = frontend
        self.control = control
        self.book = SubscriptionBook(limits: limits)
        self.backlog = backlog
        self.bans = bans
        self.trimmer = trimmer
        cutOffLog = logger.map {
            RateLimitedLog(logger: $0, level: .warning, message: "subscribers cut off: their connections are dropped, other subscribers keep theirs", examplesKey: "peers")
        }
        slowLog = logger.map {
            RateLimitedLog(
                logger: $0, level: .warning,
                message: "slow subscribers cut off: those behind held past events.subscriberQueueBytesTotal together; others keep their connections",
                examplesKey: "estimatedBytes")
        }
        let monitorEndpoint = Self.newMonitorEndpoint()
        backend = try recipe.make(context: context, monitorEndpoint: monitorEndpoint, until: deadline)
        monitor = try Self.connectMonitor(context: context, at: monitorEndpoint)
        poller.register(frontend, for: .readable)
        poller.register(backend, for: .readable)
        poller.register(control, for: .readable)
        poller.register(monitor, for: .readable)
    }

    /// Forwards until a `TERMINATE` arrives on the control socket, then closes every socket.
    /// - Throws: `ZeroMQError` (`contextTerminated` when the process stops first).
    func run() throws {
        defer { closeAll() }
        while true {
            // At least once a second, so the end of a storm of cut-offs is logged; with
            // subscribers connected, as often as their queues are sampled.
            let ready = try poller.poll(timeout: backlog.connections.isEmpty ? .seconds(1) : .milliseconds(100))
            cutOffLog?.flush()
            slowLog?.flush()
            sampleBacklog()
            guard ready > 0 else { continue }
            if poller.events(at: 2).contains(.readable), let frames = try control.receiveMessage(dontWait: true),
                frames.first == ProxyCommand.terminate.frame
            {
                return
            }
            if poller.events(at: 0).contains(.readable) { try forwardEvents() }
            if poller.events(at: 3).contains(.readable) { try readMonitor() }
            if poller.events(at: 1).contains(.readable) { try readSubscriptions() }
        }
    }

    private func forwardEvents() throws {
        for _ in 0..<Self.batch {
            guard let frames = try frontend.receiveMessage(dontWait: true) else { return }
            _ = try backend.send(frames)
            backlog.onForwarded(bytes: frames.reduce(0) { $0 + $1.count })
        }
    }

    /// Applies what the monitor reported, in order: a disconnect takes the connection's topics
    /// out of the book and ends its descriptor; an accept opens the descriptor again.
    ///
    /// A connection can end before its first subscription is read; its serial is unknown
    /// then. Read before the events, the ZAP handler's last serial covers every connection
    /// handshaken so far: for a descriptor whose last event here is a disconnect, no connection
    /// was accepted on it since (an accept precedes the handshake), so every serial on it up
    /// to that one has ended.
    private func readMonitor() throws {
        let issued = bans.lastConnectionSerial
        var changes: [SubscriptionBook.Upstream] = []
        var disconnects = 0
        var lastWasDisconnect: [Int32: Bool] = [:]
        while let frames = try monitor.receiveMessage(dontWait: true) {
            guard let event = SocketMonitorEvent(frames: frames), let descriptor = Int32(exactly: event.value) else { continue }
            switch event.kind {
            case .disconnected:
                changes += book.disconnect(descriptor: descriptor)
                backlog.onDisconnected(descriptor)
                disconnects += 1
                lastWasDisconnect[descriptor] = true
            case .accepted:
                book.accepted(descriptor: descriptor)
                backlog.onAccepted(descriptor, socket: ConnectionSocket.identity(of: descriptor))
                lastWasDisconnect[descriptor] = false
            default:
                continue
            }
        }
        for (descriptor, disconnected) in lastWasDisconnect where disconnected {
            book.endSerials(on: descriptor, through: issued)
        }
        try forward(changes)
        if disconnects > 0 {
            bans.noteSubscriptions(book.subscriptions)
            // libzmq frees a connection's subscriptions when it ends; glibc keeps the pages.
            trimmer.noteDisconnect()
        }
    }

    private func readSubscriptions() throws {
        let names = [MessageProperty.userID, MessageProperty.peerAddress, MessageProperty.fileDescriptor]
        var batch: [(frames: [Data], properties: [String?])] = []
        while batch.count < Self.subscriptionBatch, let message = try backend.receiveMessage(dontWait: true, properties: names) {
            batch.append(message)
        }
        // A connection's disconnect is reported before its descriptor can be reused, and its
        // accept before any of its messages, so reading the monitor now applies every event
        // that preceded these messages.
        try readMonitor()
        for message in batch {
            // Subscriptions arrive one frame each; anything else a subscriber sends is dropped
            // (the publishers never read it).
            guard
                let subscription = SubscriptionMessage(
                    frames: message.frames, userID: message.properties[0], address: message.properties[1],
                    fileDescriptor: message.properties[2])
            else { continue }
            let topic = subscription.topic
            let connection = subscription.connection
            guard subscription.subscribe else {
                try forward(book.unsubscribe(topic: topic, connection: connection))
                continue
            }
            // The identity is read when the connection is new, before its descriptor can be reused.
            let socket = book.isNew(connection) ? ConnectionSocket.identity(of: connection.descriptor) : nil
            let (changes, verdict) = book.subscribe(topic: topic, connection: connection, peer: subscription.peer, socket: socket)
            try forward(changes)
            try enforce(verdict)
        }
        bans.noteSubscriptions(book.subscriptions)
    }

    /// Samples the subscribers' queues when due (``SubscriberBacklog``) and cuts off the ones
    /// behind longest while all together hold past `events.subscriberQueueBytesTotal`.
    private func sampleBacklog() {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        guard backlog.isSampleDue(at: now) else { return }
        let cut = backlog.sample(at: now, probe: SystemConnectionProbe())
        bans.noteBacklog(bytes: backlog.estimatedTotal, dropped: cut.count)
        guard !cut.isEmpty else { return }
        slowLog?.record(
            cut.count, examples: cut.prefix(LogRateWindow.maximumExamples).map { "\($0.bytes)" },
            metadata: ["limit": "\(backlog.totalBytes)", "estimatedBytesLeft": "\(backlog.estimatedTotal)"])
    }

    /// Cuts off the peer a verdict past a bound names: bans it when it is a key, takes its
    /// connections out of the book (what they still send is ignored) and shuts each down.
    private func enforce(_ verdict: SubscriptionBook.Verdict) throws {
        let peer: String
        var metadata: [String: LogValue] = [:]
        switch verdict {
        case .within:
            return
        case .peerOverLimit(let over, let subscriptions):
            peer = over
            metadata = [
                "bound": "events.maxSubscriptionsPerPeer", "subscriptions": "\(subscriptions)",
                "limit": "\(book.limits.maxPerPeer)",
            ]
        case .totalOverLimit(let named, let bytes):
            // Only this process's own subscribers hold anything: nothing to cut off.
            guard let named else { return }
            peer = named
            metadata = [
                "bound": "events.maxSubscriptionBytesTotal", "bytes": "\(bytes)", "limit": "\(book.limits.maxTotalBytes)",
                "peerBytes": "\(book.usage[named]?.bytes ?? 0)",
            ]
        }
        let length = bans.cutOff(peer)
        let (connections, changes) = book.drop(peer: peer)
        try forward(changes)
        var cut = 0
        for connection in connections {
            if let socket = connection.socket, ConnectionSocket.cut(connection.id.descriptor, ifStill: socket) { cut += 1 }
        }
        bans.noteDropped(cut)
        bans.noteSubscriptions(book.subscriptions)
        metadata["connections"] = "\(cut)"
        if let length { metadata["banSeconds"] = "\(length.components.seconds)" }
        cutOffLog?.record(examples: [peer], metadata: metadata)
    }

    private func forward(_ changes: [SubscriptionBook.Upstream]) throws {
        for change in changes {
            var frame = Data([change.subscribe ? 1 : 0])
            frame.append(change.topic)
            _ = try frontend.send([frame])
        }
    }

    private func closeAll() {
        monitor.close()
        backend.close()
        frontend.close()
        control.close()
    }

    private static func newMonitorEndpoint() -> String {
        "inproc://chime-forwarder-monitor-\(UUID().uuidString)"
    }

    private static func connectMonitor(context: Context, at endpoint: String) throws -> Socket {
        let monitor = try Socket(.pair, context: context)
        try monitor.set(.linger(milliseconds: 0))
        try monitor.connect(to: endpoint)
        return monitor
    }
}
