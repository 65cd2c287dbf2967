internal import CZeroMQ

/// The messaging pattern of a ``Socket``.
///
/// Names follow the roles in the ZeroMQ Guide, chapter 2 ("Messaging Patterns"). The
/// draft thread-safe types (`CLIENT`, `SERVER`, `RADIO`, `DISH`, …) are absent on purpose:
/// Debian's libzmq is built without draft APIs.
public enum SocketKind: Sendable, Hashable, CaseIterable {
    /// An exclusive connection to one peer, typically between two threads over `inproc://`.
    ///
    /// The corresponding libzmq constant is `ZMQ_PAIR`.
    case pair
    /// Distributes every message to all matching subscribers; drops at the high-water mark.
    ///
    /// The corresponding libzmq constant is `ZMQ_PUB`.
    case publisher
    /// Receives the messages whose first frame starts with a subscribed prefix.
    ///
    /// The corresponding libzmq constant is `ZMQ_SUB`.
    case subscriber
    /// Sends a request and then receives its reply, strictly alternating.
    ///
    /// The corresponding libzmq constant is `ZMQ_REQ`.
    case request
    /// Receives a request and then sends its reply, strictly alternating.
    ///
    /// The corresponding libzmq constant is `ZMQ_REP`.
    case reply
    /// Sends round-robin to its peers and receives fairly from them, without envelopes.
    ///
    /// The corresponding libzmq constant is `ZMQ_DEALER`.
    case dealer
    /// Prefixes each received message with the sender's routing ID and routes replies by it.
    ///
    /// The corresponding libzmq constant is `ZMQ_ROUTER`.
    case router
    /// Receives fairly from the `push` sockets of a pipeline.
    ///
    /// The corresponding libzmq constant is `ZMQ_PULL`.
    case pull
    /// Sends round-robin to the `pull` sockets of a pipeline; blocks at the high-water mark.
    ///
    /// The corresponding libzmq constant is `ZMQ_PUSH`.
    case push
    /// A publisher that also receives its subscribers' subscription messages
    /// (`0x01` + prefix to subscribe, `0x00` + prefix to unsubscribe).
    ///
    /// The corresponding libzmq constant is `ZMQ_XPUB`.
    case xpublisher
    /// A subscriber that subscribes by sending subscription messages, as a forwarder does.
    ///
    /// The corresponding libzmq constant is `ZMQ_XSUB`.
    case xsubscriber

    var rawType: Int32 {
        switch self {
        case .pair: ZMQ_PAIR
        case .publisher: ZMQ_PUB
        case .subscriber: ZMQ_SUB
        case .request: ZMQ_REQ
        case .reply: ZMQ_REP
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .pull: ZMQ_PULL
        case .push: ZMQ_PUSH
        case .xpublisher: ZMQ_XPUB
        case .xsubscriber: ZMQ_XSUB
        }
    }
}
