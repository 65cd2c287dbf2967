import ChimeRuntime
import Foundation
import HelperThreads
import Synchronization
import ZeroMQ
import ChimeSecurity

/// The event bus: an XSUB socket where publishers (workers, the coordinator) connect and an
/// XPUB socket where subscribers connect, joined by `zmq_proxy_steerable` on a thread of
/// its own. Subscriptions flow upstream, so publishers only send what someone wants.
/// ZeroMQ Guide ch. 2, "The Dynamic Discovery Problem".
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
    ///   - security: makes both TCP/IPC endpoints CURVE servers (workers publish into
    ///     `ingest`, subscribers read `publish`); `nil` leaves them plain.
    ///   - bindDeadline: until when a bind whose address is in use is retried
    ///     (`ListenerHandover`); `nil` tries once.
    /// - Throws: `ZeroMQError` when a socket cannot be bound (address in use, bad endpoint).
    public init(
        context: Context, ingest: String, publish: String, lingerMilliseconds: Int32, highWaterMark: Int32 = 1000,
        subscriberHighWaterMark: Int32 = 1000, maxSubscriptionBytes: Int = 1024, maxEventBytes: Int = 8192,
        security: ServerSecurity? = nil, bindDeadline: ContinuousClock.Instant? = nil
    ) throws {
        self.context = context
        self.controlEndpoint = "inproc://chime-forwarder-control-\(UUID().uuidString)"
        let controlEndpoint = controlEndpoint
        let monitorEndpoint = "inproc://chime-forwarder-monitor-\(UUID().uuidString)"
        trimmer = SubscriberMemoryTrimmer(context: context, monitorEndpoint: monitorEndpoint)
        try thread.start {
            let frontend = try Socket(.xsubscriber, context: context)
            let backend = try Socket(.xpublisher, context: context)
            let control = try Socket(.pair, context: context)
            for socket in [frontend, backend, control] { try socket.set(.linger(milliseconds: lingerMilliseconds)) }
            try frontend.set(.sendHighWaterMark(highWaterMark))
            try frontend.set(.receiveHighWaterMark(highWaterMark))
            try backend.set(.sendHighWaterMark(subscriberHighWaterMark))
            try backend.set(.receiveHighWaterMark(highWaterMark))
            try backend.set(.maxMessageSize(bytes: Int64(maxSubscriptionBytes)))
            try frontend.set(.maxMessageSize(bytes: Int64(maxEventBytes)))
            try security?.secure(frontend, as: .eventsIngest, for: ingest)
            try security?.secure(backend, as: .events, for: publish)
            let deadline = bindDeadline ?? .now
            try ListenerHandover.bind(frontend, to: ingest, until: deadline)
            try frontend.bind(to: EventForwarder.inprocIngest)
            try ListenerHandover.bind(backend, to: publish, until: deadline)
            try control.bind(to: controlEndpoint)
            // libzmq frees a subscriber's subscriptions when its connection ends, but glibc keeps
            // the pages: the trimmer gives them back after a disconnect.
            try backend.monitor(at: monitorEndpoint, events: [.disconnected])
            return (frontend, backend, control)
        } run: { sockets in
            do {
                try proxySteerable(frontend: sockets.0, backend: sockets.1, control: sockets.2)
            } catch {
                // A context shut down (the process is stopping) is the only failure libzmq
                // reports here once the sockets are bound; the sockets close as they go.
            }
        }
        try trimmer.start()
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
