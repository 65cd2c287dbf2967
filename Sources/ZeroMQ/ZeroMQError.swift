internal import CZeroMQ

/// A failed libzmq call: the `errno` it reported, the call, and the endpoint involved.
///
/// Two errors are equal when their codes are equal, so tests and callers can match with
/// `#expect(throws: ZeroMQError(code: .addressInUse, operation: "zmq_bind"))` or compare
/// `error.code`. New codes may be added without breaking callers.
public struct ZeroMQError: Error, Equatable, CustomStringConvertible {
    /// An `errno` value reported by libzmq, with names for the ones callers act on.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The raw `errno` value.
        public var rawValue: Int32

        /// Creates a code from a raw `errno` value.
        public init(rawValue: Int32) {
            self.rawValue = rawValue
        }

        /// A non-blocking call could not complete now (`EAGAIN`): a high-water mark was
        /// reached, no peer is connected, or a send or receive timeout elapsed.
        public static let wouldBlock = Code(rawValue: EAGAIN)
        /// The context was shut down or terminated (`ETERM`); close the socket and stop.
        public static let contextTerminated = Code(rawValue: ETERM)
        /// A signal interrupted the call (`EINTR`); the wrappers in this module retry it.
        public static let interrupted = Code(rawValue: EINTR)
        /// An argument, option value or endpoint was malformed (`EINVAL`).
        public static let invalidArgument = Code(rawValue: EINVAL)
        /// The endpoint's address is already bound by another socket or process (`EADDRINUSE`).
        public static let addressInUse = Code(rawValue: EADDRINUSE)
        /// The address is not local to this machine (`EADDRNOTAVAIL`).
        public static let addressNotAvailable = Code(rawValue: EADDRNOTAVAIL)
        /// The endpoint names a transport libzmq does not know (`EPROTONOSUPPORT`).
        public static let protocolNotSupported = Code(rawValue: EPROTONOSUPPORT)
        /// The endpoint names a network interface that does not exist (`ENODEV`).
        public static let noDevice = Code(rawValue: ENODEV)
        /// A `ROUTER` with `routerMandatory` was asked to send to an unknown peer (`EHOSTUNREACH`).
        public static let hostUnreachable = Code(rawValue: EHOSTUNREACH)
        /// A message or option value exceeded a size limit (`EMSGSIZE`).
        public static let messageTooLarge = Code(rawValue: EMSGSIZE)
        /// The operation is not supported by this socket type or library build (`ENOTSUP`).
        public static let notSupported = Code(rawValue: ENOTSUP)
        /// The context reached its socket limit or the process ran out of descriptors (`EMFILE`).
        public static let tooManySockets = Code(rawValue: EMFILE)
        /// The socket's pattern forbids the call now, such as two sends on a `REQ` socket (`EFSM`).
        public static let invalidState = Code(rawValue: EFSM)
        /// The transport is incompatible with the socket type (`ENOCOMPATPROTO`).
        public static let incompatibleProtocol = Code(rawValue: ENOCOMPATPROTO)
        /// The context has no I/O thread for the transport (`EMTHREAD`).
        public static let noIOThread = Code(rawValue: EMTHREAD)
        /// Unbinding or disconnecting an endpoint the socket never used (`ENOENT`).
        public static let endpointNotFound = Code(rawValue: ENOENT)
    }

    /// The `errno` value libzmq reported.
    public var code: Code
    /// The libzmq call that failed, such as `"zmq_bind"` or `"zmq_setsockopt ZMQ_LINGER"`.
    public var operation: String
    /// The endpoint passed to the call, when the call took one.
    public var endpoint: String?
    /// libzmq's description of the code, such as "Address already in use".
    public var message: String

    /// Creates an error for `code`, taking the message from libzmq.
    ///
    /// The corresponding libzmq call is `zmq_strerror`.
    public init(code: Code, operation: String, endpoint: String? = nil) {
        self.code = code
        self.operation = operation
        self.endpoint = endpoint
        self.message = Calls.errorMessage(code.rawValue)
    }

    /// Compares codes only; the operation, endpoint and message are context.
    public static func == (lhs: ZeroMQError, rhs: ZeroMQError) -> Bool {
        lhs.code == rhs.code
    }

    /// The call, endpoint, message and errno, such as
    /// "zmq_bind tcp://127.0.0.1:7700: Address already in use (errno 98)".
    public var description: String {
        let subject = endpoint.map { "\(operation) \($0)" } ?? operation
        return "\(subject): \(message) (errno \(code.rawValue))"
    }
}
