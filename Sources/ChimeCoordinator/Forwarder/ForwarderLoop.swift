import ChimeRuntime
import ChimeSecurity
import Foundation
import ZeroMQ

/// How the forwarder makes its XPUB, at start and again after each recycle: every option is
/// set on the new socket (CURVE server keys and ZAP domain, ZMQ_MAXMSGSIZE, both high-water
/// marks, ZMQ_LINGER, ZMQ_XPUB_VERBOSER), its monitor is attached before it binds, and it binds
/// the same endpoint (libzmq sets SO_REUSEADDR; the bind retries while the closed socket's
/// listener is still being released).
struct PublishSocketRecipe: Sendable {
    /// Subscription messages queued per subscriber connection (the XPUB's ZMQ_RCVHWM).
    static let subscriptionHighWaterMark: Int32 = 16
    /// Where subscribers connect; after the first bind, the endpoint it resolved to when the
    /// configured one asked for any port.
    var endpoint: String
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
        if let security {
            try security.secure(backend, as: .events, for: endpoint)
        } else if !endpoint.hasPrefix("inproc://") {
            // Without keys the coordinator's ZAP handler (if the context has one) refuses banned
            // addresses; with no handler libzmq lets every NULL client in, as before.
            try backend.set(.zapDomain(SocketDomain.events.rawValue))
        }
        // Before the bind, so no connection's disconnect is missed.
        try backend.monitor(at: monitorEndpoint, events: [.disconnected])
        try ListenerHandover.bind(backend, to: endpoint, until: deadline)
        return backend
    }
}

/// The forwarder's thread: moves events from the XSUB to the XPUB, keeps the
/// ``SubscriptionBook`` of the XPUB's subscriptions, passes the publishers only a topic's
/// first subscribe and last unsubscribe, and recycles the XPUB (close, bind again) when a peer
/// goes past a bound, after banning it. Lives on one thread; not `Sendable`.
final class ForwarderLoop {
    /// Events moved before the other sockets get a turn.
    static let batch = 512
    /// Subscriptions read before they are counted: few, since each receive lets libzmq move
    /// more of them into its trie ahead of the count.
    static let subscriptionBatch = 16
    /// How long a re-bind after a recycle may wait for the address.
    static let rebindWait = Duration.seconds(5)

    private let context: Context
    private var recipe: PublishSocketRecipe
    private let frontend: Socket
    private let control: Socket
    private var backend: Socket
    private var monitor: Socket
    private var book: SubscriptionBook
    private let bans: SubscriberBans
    private let trimmer: SubscriberMemoryTrimmer
    private let logger: Logger?
    private var poller = Poller()
    /// XPUB recycles since start.
    private(set) var recycles = 0

    init(
        context: Context, recipe: PublishSocketRecipe, frontend: Socket, control: Socket, limits: SubscriptionBook.Limits,
        bans: SubscriberBans, trimmer: SubscriberMemoryTrimmer, logger: Logger?, until deadline: ContinuousClock.Instant
    ) throws {
        self.context = context
        self.frontend = frontend
        self.control = control
        self.book = SubscriptionBook(limits: limits)
        self.bans = bans
        self.trimmer = trimmer
        self.logger = logger
        let monitorEndpoint = Self.newMonitorEndpoint()
        let backend = try recipe.make(context: context, monitorEndpoint: monitorEndpoint, until: deadline)
        var recipe = recipe
        if recipe.endpoint.hasSuffix(":*") || recipe.endpoint.hasSuffix(":0") { recipe.endpoint = try backend.lastEndpoint }
        self.recipe = recipe
        self.backend = backend
        self.monitor = try Self.connectMonitor(context: context, at: monitorEndpoint)
        poller = makePoller()
    }

    /// Forwards until a `TERMINATE` arrives on the control socket, then closes every socket.
    /// - Throws: `ZeroMQError` (`contextTerminated` when the process stops first; a failed
    ///   re-bind after a recycle).
    func run() throws {
        defer { closeAll() }
        while true {
            guard try poller.poll(timeout: nil) > 0 else { continue }
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

    private func makePoller() -> Poller {
        let poller = Poller()
        poller.register(frontend, for: .readable)
        poller.register(backend, for: .readable)
        poller.register(control, for: .readable)
        poller.register(monitor, for: .readable)
        return poller
    }

    private func forwardEvents() throws {
        for _ in 0..<Self.batch {
            guard let frames = try frontend.receiveMessage(dontWait: true) else { return }
            _ = try backend.send(frames)
        }
    }

    /// Applies the disconnects the monitor reported: each connection's topics leave the book.
    private func readMonitor() throws {
        var changes: [SubscriptionBook.Upstream] = []
        var disconnects = 0
        while let frames = try monitor.receiveMessage(dontWait: true) {
            guard let event = SocketMonitorEvent(frames: frames), event.kind == .disconnected,
                let connection = Int32(exactly: event.value)
            else { continue }
            changes += book.disconnect(connection)
            disconnects += 1
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
        // A connection's disconnect is reported before its descriptor can be reused, so reading
        // the monitor now applies every disconnect that preceded these messages.
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
            let peer = subscription.peer
            let (changes, verdict) = book.subscribe(topic: topic, connection: connection, peer: peer)
            try forward(changes)
            if try enforce(verdict) { break }
        }
        bans.noteSubscriptions(book.subscriptions)
    }

    /// Bans and recycles for a verdict past a bound. - Returns: whether the XPUB was recycled.
    private func enforce(_ verdict: SubscriptionBook.Verdict) throws -> Bool {
        let peer: String
        var metadata: [String: LogValue] = [:]
        switch verdict {
        case .within:
            return false
        case .peerOverLimit(let over, let subscriptions):
            peer = over
            metadata = [
                "bound": "events.maxSubscriptionsPerPeer", "subscriptions": "\(subscriptions)",
                "limit": "\(book.limits.maxPerPeer)",
            ]
        case .totalOverLimit(let largest, let bytes):
            // Only this process's own subscribers hold anything: nothing to ban.
            guard let largest else { return false }
            peer = largest
            metadata = [
                "bound": "events.maxSubscriptionBytesTotal", "bytes": "\(bytes)", "limit": "\(book.limits.maxTotalBytes)",
                "peerBytes": "\(book.usage[largest]?.bytes ?? 0)",
            ]
        }
        let length = bans.ban(peer)
        metadata["peer"] = "\(peer)"
        metadata["banSeconds"] = "\(length.components.seconds)"
        logger?.warning("subscriber banned, events socket recycled: every subscriber reconnects", metadata)
        try recycle()
        return true
    }

    /// Closes the XPUB (dropping every subscriber connection and freeing its subscription
    /// trie) and binds a new one at the same endpoint.
    private func recycle() throws {
        try forward(book.removeAll())
        backend.close()
        monitor.close()
        let monitorEndpoint = Self.newMonitorEndpoint()
        backend = try recipe.make(context: context, monitorEndpoint: monitorEndpoint, until: .now + Self.rebindWait)
        monitor = try Self.connectMonitor(context: context, at: monitorEndpoint)
        poller = makePoller()
        recycles += 1
        bans.noteSubscriptions(0)
        bans.noteRecycle()
        trimmer.noteDisconnect()
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
