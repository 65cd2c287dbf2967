import ChimeRuntime
import Foundation
import HelperThreads
import Synchronization
import ZeroMQ
import ChimeSecurity

/// The event bus: an XSUB socket where publishers (workers, the coordinator) connect and an
/// XPUB socket where subscribers connect, joined by a loop of its own on a thread of its own
/// (`ForwarderLoop`). Subscriptions flow upstream, so publishers only send what someone
/// wants. ZeroMQ Guide ch. 2, "The Dynamic Discovery Problem".
///
/// The loop counts every connection's subscriptions (`SubscriptionBook`): a peer past
/// `events.maxSubscriptionsPerPeer`, or the largest peer when all together pass
/// `events.maxSubscriptionBytesTotal`, is cut off: a CURVE key is banned (``SubscriberBans``;
/// the ZAP handler refuses it), and each of the peer's connections is shut down on its own
/// (``ConnectionSocket``), which frees its part of libzmq's subscription trie. Other
/// subscribers keep their connections and lose no event.
public final class EventForwarder: Sendable {
    private let context: Context
    private let controlEndpoint: String
    private let thread = HelperThread(name: "chime-forwarder")
    private let trimmer: SubscriberMemoryTrimmer

    /// Starts the forwarder thread and returns once both sockets are bound.
    /// - Parameters:
    ///   - ingest: where publishers connect (XSUB bind address); `inproc://chime-events` is
    ///     also bound for publishers inside this process.
    ///   - publish: where subscribers connect (XPUB bind address).
    ///   - highWaterMark: messages the XSUB side queues, and the XPUB side's incoming
    ///     subscriptions (ZMQ_RCVHWM, ZMQ_SNDHWM).
    ///   - subscriberHighWaterMark: messages queued for each subscriber at most (the XPUB's
    ///     ZMQ_SNDHWM, which libzmq applies per connection): past it, XPUB drops that
    ///     subscriber's events and sends everyone else's on, so one that stops reading
    ///     holds a bounded amount of memory and slows nobody (`events.subscriberQueueBytes`).
    ///   - maxSubscriptionBytes: the largest frame a subscriber may send (a subscription: a flag
    ///     byte and the topic): a larger one drops that subscriber's connection before libzmq
    ///     reads it into its subscription trie (ZMQ_MAXMSGSIZE on the XPUB; `events.maxSubscriptionBytes`).
    ///   - maxEventBytes: the largest frame a publisher may send (ZMQ_MAXMSGSIZE on the XSUB;
    ///     `events.maxEventBytes`): a larger one drops that publisher's connection.
    ///   - maxSubscriptionsPerPeer: subscriptions one peer (CURVE key, else address) may hold
    ///     over all its connections (`events.maxSubscriptionsPerPeer`).
    ///   - maxSubscriptionBytesTotal: topic bytes all subscribers may hold together
    ///     (`events.maxSubscriptionBytesTotal`).
    ///   - subscriberQueueBytesTotal: what subscribers that fall behind may hold together, in
    ///     bytes, as the forwarder estimates it (``SubscriberBacklog``; `events.subscriberQueueBytesTotal`).
    ///   - bans: the ban list the loop adds to and the ZAP handler reads; also the figures
    ///     for `/metrics`.
    ///   - logger: where a ban is logged (one line each); `nil` logs nothing.
    ///   - security: makes both TCP/IPC endpoints CURVE servers (workers publish into
    ///     `ingest`, subscribers read `publish`); `nil` leaves them plain.
    ///   - bindDeadline: until when a bind whose address is in use is retried
    ///     (`ListenerHandover`); `nil` tries once.
    /// - Throws: `ZeroMQError` when a socket cannot be bound (address in use, bad endpoint).
    public init(
        context: Context, ingest: String, publish: String, lingerMilliseconds: Int32, highWaterMark: Int32 = 1000,
        subscriberHighWaterMark: Int32 = 1000, maxSubscriptionBytes: Int = 1024, maxEventBytes: Int = 8192,
        maxSubscriptionsPerPeer: Int = 1000, maxSubscriptionBytesTotal: Int = 128 << 10, subscriberQueueBytesTotal: Int = 256 << 20,
        bans: SubscriberBans = SubscriberBans(), logger: Logger? = nil,
        security: ServerSecurity? = nil, bindDeadline: ContinuousClock.Instant? = nil
    ) throws {
        self.context = context
        self.controlEndpoint = "inproc://chime-forwarder-control-\(UUID().uuidString)"
        let controlEndpoint = controlEndpoint
        let trimmer = SubscriberMemoryTrimmer()
        self.trimmer = trimmer
        let recipe = PublishSocketRecipe(
            endpoint: publish, lingerMilliseconds: lingerMilliseconds, highWaterMark: highWaterMark,
            subscriberHighWaterMark: subscriberHighWaterMark, maxSubscriptionBytes: maxSubscriptionBytes, security: security)
        let limits = SubscriptionBook.Limits(maxPerPeer: maxSubscriptionsPerPeer, maxTotalBytes: maxSubscriptionBytesTotal)
        let backlog = SubscriberBacklog(
            totalBytes: subscriberQueueBytesTotal,
            perConnectionBytes: Int(subscriberHighWaterMark) * (maxEventBytes + Int(SubscriberBacklog.frameOverheadBytes)))
        try thread.start {
            let frontend = try Socket(.xsubscriber, context: context)
            let control = try Socket(.pair, context: context)
            for socket in [frontend, control] { try socket.set(.linger(milliseconds: lingerMilliseconds)) }
            try frontend.set(.sendHighWaterMark(highWaterMark))
            try frontend.set(.receiveHighWaterMark(highWaterMark))
            try frontend.set(.maxMessageSize(bytes: Int64(maxEventBytes)))
            try security?.secure(frontend, as: .eventsIngest, for: ingest)
            let deadline = bindDeadline ?? .now
            try ListenerHandover.bind(frontend, to: ingest, until: deadline)
            try frontend.bind(to: EventForwarder.inprocIngest)
            try control.bind(to: controlEndpoint)
            return try ForwarderLoop(
                context: context, recipe: recipe, frontend: frontend, control: control, limits: limits, backlog: backlog, bans: bans,
                trimmer: trimmer, logger: logger, until: deadline)
        } run: { loop in
            do {
                try loop.run()
            } catch let error as ZeroMQError where error.code == .contextTerminated {
                // The process is stopping.
            } catch {
                // A socket call that failed for another reason.
                logger?.error("event forwarder stopped: subscribers get no events", ["error": "\(error)"])
            }
        }
        trimmer.start()
    }

    /// The in-process endpoint publishers of this process connect to.
    public static let inprocIngest = "inproc://chime-events"

    /// Stops the proxy and waits (at most 2 s) for its thread to close its sockets.
    public func stop() {
        do {
            let control = try Socket(.pair, context: context)
            try control.set(.linger(milliseconds: 100))
            try control.connect(to: controlEndpoint)
            _ = try control.send([Data("TERMINATE".utf8)], dontWait: false)
        } catch {
            // The context is already shut down, which stops the proxy as well.
        }
        thread.join(timeout: .seconds(2))
        trimmer.stop()
    }
}
