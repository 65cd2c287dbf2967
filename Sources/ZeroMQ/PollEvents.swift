internal import CZeroMQ

/// The readiness a ``Poller`` waits for and reports: readable, writable, or both.
public struct PollEvents: OptionSet, Sendable, Hashable {
    /// The raw `short` bit mask libzmq uses.
    public var rawValue: Int16

    /// Creates a set from libzmq's bit mask.
    public init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    /// At least one message can be received without blocking.
    ///
    /// The corresponding libzmq constant is `ZMQ_POLLIN`.
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))

    /// At least one message can be sent without blocking.
    ///
    /// The corresponding libzmq constant is `ZMQ_POLLOUT`.
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
}
