internal import CZeroMQ

/// A libzmq context: the I/O threads and the `inproc://` namespace its sockets share.
///
/// Create one context per process and pass it to every ``Socket``. Each socket holds its
/// context strongly, so the context is terminated only after its last socket is gone and
/// termination never waits on a socket that is still in use. Call ``shutdown()`` from any
/// thread to stop the process: blocking calls on the context's sockets then fail with
/// ``ZeroMQError/Code/contextTerminated``, and their owners close them.
///
/// The corresponding libzmq call is `zmq_ctx_new`.
public final class Context: @unchecked Sendable {
    // `@unchecked Sendable` is sound: the only stored property is an immutable pointer,
    // and zmq_ctx_new(3) documents contexts as thread safe ("may be shared among as many
    // application threads as necessary"). Through it we call zmq_socket and
    // zmq_ctx_shutdown, both thread safe, and zmq_ctx_term only in deinit, when no other
    // reference exists.
    let handle: Handle

    /// Creates a context with `ioThreads` background I/O threads.
    ///
    /// One I/O thread handles about a gigabyte a second; a context used only for
    /// `inproc://` may have zero.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/tooManySockets`` when the
    ///   process is out of file descriptors, or ``ZeroMQError/Code/invalidArgument`` for
    ///   a negative or absurd thread count.
    ///
    /// The corresponding libzmq calls are `zmq_ctx_new` and `zmq_ctx_set(ZMQ_IO_THREADS)`.
    public init(ioThreads: Int = 1) throws {
        let handle = try Calls.contextNew()
        do {
            // libzmq rejects -1 with EINVAL, so an out-of-range count throws rather than traps.
            try Calls.contextSet(handle, option: ZMQ_IO_THREADS, value: Int32(exactly: ioThreads) ?? -1)
        } catch {
            Calls.contextTerm(handle)
            throw error
        }
        self.handle = handle
    }

    /// Makes every blocking and future call on this context's sockets fail with
    /// ``ZeroMQError/Code/contextTerminated``; safe from any thread, and idempotent.
    ///
    /// Sockets stay open until their owners close them; the context terminates once
    /// they are all gone.
    ///
    /// The corresponding libzmq call is `zmq_ctx_shutdown`.
    public func shutdown() {
        Calls.contextShutdown(handle)
    }

    deinit {
        // Sockets hold the context strongly, so every socket is closed by now and
        // termination waits at most for their linger periods.
        Calls.contextTerm(handle)
    }
}
