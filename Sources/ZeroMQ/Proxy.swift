internal import CZeroMQ
import Foundation

/// Forwards messages between `frontend` and `backend` in both directions on the calling
/// thread until the context is shut down, copying each one to `capture` when given.
///
/// Typical pairs are `xsubscriber`/`xpublisher` (a pub/sub forwarder: subscriptions flow
/// back upstream), `router`/`dealer` (a request broker) and `pull`/`push` (a streamer).
/// All sockets must belong to the calling thread. Prefer ``proxySteerable(frontend:backend:control:capture:)``
/// when the forwarder must stop without ending the whole context.
///
/// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated`` once
///   ``Context/shutdown()`` is called, which is the normal way this function ends.
///
/// The corresponding libzmq call is `zmq_proxy`.
public func proxy(frontend: Socket, backend: Socket, capture: Socket? = nil) throws {
    try Calls.proxy(frontend: frontend.handle, backend: backend.handle, capture: capture?.handle)
}

/// Forwards messages like ``proxy(frontend:backend:capture:)`` and also obeys
/// ``ProxyCommand``s received on `control`, returning after ``ProxyCommand/terminate``.
///
/// `control` is typically a `pair` or `pull` socket bound to an `inproc://` endpoint; the
/// thread that wants the forwarder stopped connects to it and sends
/// `ProxyCommand.terminate.frame`.
///
/// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated`` when the
///   context is shut down before a terminate command arrives.
///
/// The corresponding libzmq call is `zmq_proxy_steerable`.
public func proxySteerable(frontend: Socket, backend: Socket, control: Socket, capture: Socket? = nil) throws {
    try Calls.proxySteerable(
        frontend: frontend.handle, backend: backend.handle, capture: capture?.handle, control: control.handle
    )
}

/// A command for ``proxySteerable(frontend:backend:control:capture:)``, sent as one frame.
public enum ProxyCommand: String, Sendable, CaseIterable {
    /// Stops forwarding, leaving messages queued, until ``resume``.
    case pause = "PAUSE"
    /// Resumes forwarding after ``pause``.
    case resume = "RESUME"
    /// Makes the proxy return.
    case terminate = "TERMINATE"

    /// The frame to send to the proxy's control socket: the command's ASCII name.
    ///
    /// The corresponding libzmq call is `zmq_proxy_steerable`.
    public var frame: Data {
        Data(rawValue.utf8)
    }
}
