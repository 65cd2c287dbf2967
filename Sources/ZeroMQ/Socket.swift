internal import CZeroMQ

/// A ZeroMQ socket: one endpoint of a messaging pattern, bound or connected to peers.
///
/// A socket is not thread safe and deliberately not `Sendable`: create it, use it and
/// close it on one thread (a dedicated `Thread`, never a Swift `Task`, which may resume
/// elsewhere). Other threads reach it through an `inproc://` socket of their own, and
/// ``Context/shutdown()`` is the one call that may interrupt it from outside.
///
/// The socket holds its ``Context`` strongly and closes itself in `deinit`; it lingers
/// at most ``defaultLingerMilliseconds`` to flush unsent messages unless
/// ``SocketOption/linger(milliseconds:)`` says otherwise.
///
/// The corresponding libzmq call is `zmq_socket`.
public final class Socket {
    /// The linger period, in milliseconds, every new socket starts with: long enough to
    /// deliver a reply sent just before closing, short enough never to hang termination.
    public static let defaultLingerMilliseconds: Int32 = 1000

    /// The messaging pattern this socket was created with.
    public let kind: SocketKind
    /// The context this socket belongs to, kept alive until the socket is released.
    public let context: Context

    private var openHandle: Handle?

    /// Creates a socket of `kind` in `context`, lingering ``defaultLingerMilliseconds``.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated`` after
    ///   ``Context/shutdown()``, or ``ZeroMQError/Code/tooManySockets`` at the context's
    ///   socket limit.
    ///
    /// The corresponding libzmq calls are `zmq_socket` and `zmq_setsockopt(ZMQ_LINGER)`.
    public init(_ kind: SocketKind, context: Context) throws {
        self.kind = kind
        self.context = context
        self.openHandle = try Calls.socket(context.handle, type: kind.rawType)
        // libzmq's default linger is infinite, which would let one unreachable peer block
        // context termination forever; a thrown error here closes the socket in deinit.
        try set(.linger(milliseconds: Self.defaultLingerMilliseconds))
    }

    deinit {
        close()
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool {
        openHandle == nil
    }

    /// The libzmq socket; using a closed socket is a programming error and traps.
    var handle: Handle {
        guard let openHandle else {
            preconditionFailure("ZeroMQ \(kind) socket used after close()")
        }
        return openHandle
    }

    /// Accepts connections on `endpoint`, such as `tcp://*:7700`, `tcp://127.0.0.1:*`
    /// (a free port; read it back from ``lastEndpoint``), `ipc:///run/chime.sock` or
    /// `inproc://events`.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/addressInUse``,
    ///   ``ZeroMQError/Code/invalidArgument`` for a malformed endpoint,
    ///   ``ZeroMQError/Code/protocolNotSupported`` for an unknown transport,
    ///   ``ZeroMQError/Code/noDevice`` for an unknown interface, or
    ///   ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq call is `zmq_bind`.
    public func bind(to endpoint: String) throws {
        try Calls.bind(handle, to: endpoint)
    }

    /// Connects to `endpoint`, such as `tcp://coordinator:7701`; libzmq connects in the
    /// background and reconnects after failures, so an absent peer is not an error.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/invalidArgument`` for a
    ///   malformed endpoint, ``ZeroMQError/Code/protocolNotSupported`` for an unknown
    ///   transport, or ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq call is `zmq_connect`.
    public func connect(to endpoint: String) throws {
        try Calls.connect(handle, to: endpoint)
    }

    /// Stops accepting connections on `endpoint`, which must be spelled as ``lastEndpoint``
    /// reported it when a wildcard was bound.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/endpointNotFound`` when the
    ///   socket is not bound there, or ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq call is `zmq_unbind`.
    public func unbind(from endpoint: String) throws {
        try Calls.unbind(handle, from: endpoint)
    }

    /// Drops the connection to `endpoint` made by ``connect(to:)``.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/endpointNotFound`` when the
    ///   socket is not connected there, or ``ZeroMQError/Code/contextTerminated``.
    ///
    /// The corresponding libzmq call is `zmq_disconnect`.
    public func disconnect(from endpoint: String) throws {
        try Calls.disconnect(handle, from: endpoint)
    }

    /// Closes the socket, handing unsent messages to libzmq for the linger period;
    /// calling it again does nothing.
    ///
    /// The corresponding libzmq call is `zmq_close`.
    public func close() {
        guard let openHandle else { return }
        self.openHandle = nil
        Calls.close(openHandle)
    }
}

// One socket belongs to one thread (zmq_socket(3): "ØMQ sockets are not thread safe").
@available(*, unavailable)
extension Socket: Sendable {}
