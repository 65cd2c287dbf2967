internal import CZeroMQ

/// Waits until one of several sockets is ready to receive or send.
///
/// Register sockets once, then call ``poll(timeout:)`` in a loop and read
/// ``events(at:)`` for each registration index. Like its sockets, a poller belongs to one
/// thread and is not `Sendable`. It keeps its sockets alive; closing a registered socket
/// and then polling is a programming error and traps.
///
/// This uses libzmq's stable `zmq_poll`, not the draft `zmq_poller` that Debian's build lacks.
///
/// The corresponding libzmq call is `zmq_poll`.
public final class Poller {
    private var sockets: [Socket] = []
    private var items: [zmq_pollitem_t] = []

    /// Creates a poller with no sockets.
    public init() {}

    /// The number of registered sockets.
    public var count: Int {
        sockets.count
    }

    /// Adds `socket`, to be reported when it has any of `events`.
    ///
    /// - Returns: The index to pass to ``events(at:)``: 0 for the first registration,
    ///   then 1, 2, …
    ///
    /// The corresponding libzmq structure is `zmq_pollitem_t`.
    @discardableResult
    public func register(_ socket: Socket, for events: PollEvents) -> Int {
        sockets.append(socket)
        items.append(zmq_pollitem_t(socket: socket.handle, fd: 0, events: events.rawValue, revents: 0))
        return sockets.count - 1
    }

    /// Waits until at least one registered socket is ready or `timeout` passes.
    ///
    /// The wait never ends early: sub-millisecond remainders round up, and a wait cut
    /// short by a signal resumes for the remaining time.
    ///
    /// - Parameter timeout: The longest wait, or `nil` to wait until a socket is ready.
    /// - Returns: The number of ready sockets; 0 when the timeout passed.
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/contextTerminated`` after
    ///   ``Context/shutdown()``.
    ///
    /// The corresponding libzmq call is `zmq_poll`.
    public func poll(timeout: Duration?) throws -> Int {
        let deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }
        for index in items.indices {
            items[index].socket = sockets[index].handle
            items[index].revents = 0
        }
        return try items.withUnsafeMutableBufferPointer { items in
            try Calls.poll(items, until: deadline)
        }
    }

    /// The readiness the last ``poll(timeout:)`` reported for the socket registered at `index`.
    ///
    /// The corresponding libzmq field is `zmq_pollitem_t.revents`.
    public func events(at index: Int) -> PollEvents {
        PollEvents(rawValue: items[index].revents)
    }
}

@available(*, unavailable)
extension Poller: Sendable {}
