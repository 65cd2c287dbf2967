import ChimeRuntime
import Foundation
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
    private let finished = DispatchSemaphore(value: 0)

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
    ///   - security: makes both TCP/IPC endpoints CURVE servers (workers publish into
    ///     `ingest`, subscribers read `publish`); `nil` leaves them plain.
    ///   - bindDeadline: until when a bind whose address is in use is retried
    ///     (`ListenerHandover`); `nil` tries once.
    /// - Throws: `ZeroMQError` when a socket cannot be bound (address in use, bad endpoint).
    public init(
        context: Context, ingest: String, publish: String, lingerMilliseconds: Int32, highWaterMark: Int32 = 1000,
        subscriberHighWaterMark: Int32 = 1000, security: ServerSecurity? = nil, bindDeadline: ContinuousClock.Instant? = nil
    ) throws {
        self.context = context
        self.controlEndpoint = "inproc://chime-forwarder-control-\(UUID().uuidString)"
        let ready = DispatchSemaphore(value: 0)
        let startError = ErrorBox()
        let context = context
        let controlEndpoint = controlEndpoint
        let finished = finished
        let thread = Thread {
            do {
                let frontend = try Socket(.xsubscriber, context: context)
                let backend = try Socket(.xpublisher, context: context)
                let control = try Socket(.pair, context: context)
                for socket in [frontend, backend, control] { try socket.set(.linger(milliseconds: lingerMilliseconds)) }
                try frontend.set(.sendHighWaterMark(highWaterMark))
                try frontend.set(.receiveHighWaterMark(highWaterMark))
                try backend.set(.sendHighWaterMark(subscriberHighWaterMark))
                try backend.set(.receiveHighWaterMark(highWaterMark))
                try security?.secure(frontend, as: .eventsIngest, for: ingest)
                try security?.secure(backend, as: .events, for: publish)
                let deadline = bindDeadline ?? .now
                try ListenerHandover.bind(frontend, to: ingest, until: deadline)
                try frontend.bind(to: EventForwarder.inprocIngest)
                try ListenerHandover.bind(backend, to: publish, until: deadline)
                try control.bind(to: controlEndpoint)
                ready.signal()
                do {
                    try proxySteerable(frontend: frontend, backend: backend, control: control)
                } catch let error as ZeroMQError where error.code == .contextTerminated {
                    // Context shut down: the normal way out when the process stops.
                }
            } catch {
                startError.set(error)
                ready.signal()
            }
            finished.signal()
        }
        thread.name = "chime-forwarder"
        thread.start()
        ready.wait()
        if let error = startError.get() { throw error }
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
        _ = finished.wait(timeout: .now() + 2)
    }
}

/// Carries an error out of a thread. Sendable through its lock.
final class ErrorBox: Sendable {
    private let storage = Mutex<(any Error)?>(nil)
    func set(_ error: any Error) { storage.withLock { $0 = error } }
    func get() -> (any Error)? { storage.withLock { $0 } }
}
