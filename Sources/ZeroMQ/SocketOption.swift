internal import CZeroMQ
import Foundation

/// A socket option and its value, applied with ``Socket/set(_:)``.
///
/// Durations are in milliseconds, as libzmq takes them. Options that affect connections
/// (high-water marks, `immediate`, heartbeats, CURVE keys, `maxMessageSize`) apply to
/// connections made after they are set, so set them before `bind` and `connect`.
public enum SocketOption: Sendable, Hashable {
    /// How long, in milliseconds, closing the socket waits to flush unsent messages;
    /// -1 waits forever, 0 discards them. ``Socket`` sets 1000 ms at creation.
    ///
    /// The corresponding libzmq option is `ZMQ_LINGER`.
    case linger(milliseconds: Int32)
    /// The number of outgoing messages queued per peer before sends block or drop; 0 is unlimited.
    ///
    /// The corresponding libzmq option is `ZMQ_SNDHWM`.
    case sendHighWaterMark(Int32)
    /// The number of incoming messages queued per peer before libzmq stops reading; 0 is unlimited.
    ///
    /// The corresponding libzmq option is `ZMQ_RCVHWM`.
    case receiveHighWaterMark(Int32)
    /// Queues messages only to completed connections, so a send with no live peer
    /// blocks or reports would-block instead of filling a dead peer's pipe.
    ///
    /// The corresponding libzmq option is `ZMQ_IMMEDIATE`.
    case immediate(Bool)
    /// Receives messages whose first frame starts with `prefix` (empty: every message);
    /// `subscriber` sockets only.
    ///
    /// The corresponding libzmq option is `ZMQ_SUBSCRIBE`.
    case subscribe(Data)
    /// Removes one earlier subscription to exactly `prefix`; `subscriber` sockets only.
    ///
    /// The corresponding libzmq option is `ZMQ_UNSUBSCRIBE`.
    case unsubscribe(Data)
    /// The identity a `router` peer sees for this socket: 1 to 255 bytes, not starting with 0.
    ///
    /// The corresponding libzmq option is `ZMQ_ROUTING_ID`.
    case routingID(Data)
    /// Sends a ZMTP PING every so many milliseconds on each connection; 0 disables heartbeats.
    ///
    /// The corresponding libzmq option is `ZMQ_HEARTBEAT_IVL`.
    case heartbeatInterval(milliseconds: Int32)
    /// Drops a connection when no traffic arrives within this many milliseconds after a PING.
    ///
    /// The corresponding libzmq option is `ZMQ_HEARTBEAT_TIMEOUT`.
    case heartbeatTimeout(milliseconds: Int32)
    /// Asks the peer to drop the connection after this many milliseconds without traffic
    /// (libzmq keeps tenths of a second, at most 6 553 599 ms).
    ///
    /// The corresponding libzmq option is `ZMQ_HEARTBEAT_TTL`.
    case heartbeatTTL(milliseconds: Int32)
    /// Drops the connection of a peer that sends a message larger than `bytes`; -1 is unlimited.
    ///
    /// The corresponding libzmq option is `ZMQ_MAXMSGSIZE`.
    case maxMessageSize(bytes: Int64)
    /// The wait in milliseconds before reconnecting a dropped connection; -1 never reconnects.
    ///
    /// The corresponding libzmq option is `ZMQ_RECONNECT_IVL`.
    case reconnectInterval(milliseconds: Int32)
    /// The cap in milliseconds for the doubling reconnect wait; 0 keeps `reconnectInterval`.
    ///
    /// The corresponding libzmq option is `ZMQ_RECONNECT_IVL_MAX`.
    case reconnectIntervalMax(milliseconds: Int32)
    /// How long, in milliseconds, a blocking send waits before reporting would-block; -1 forever.
    ///
    /// The corresponding libzmq option is `ZMQ_SNDTIMEO`.
    case sendTimeout(milliseconds: Int32)
    /// How long, in milliseconds, a blocking receive waits before returning `nil`; -1 forever.
    ///
    /// The corresponding libzmq option is `ZMQ_RCVTIMEO`.
    case receiveTimeout(milliseconds: Int32)
    /// Makes a `router` throw ``ZeroMQError/Code/hostUnreachable`` for an unknown routing ID
    /// instead of dropping the message silently.
    ///
    /// The corresponding libzmq option is `ZMQ_ROUTER_MANDATORY`.
    case routerMandatory(Bool)
    /// Lets a `router` hand a routing ID over to a new connection that claims it (a restarted
    /// peer with the same ID) instead of ignoring the newcomer.
    ///
    /// The corresponding libzmq option is `ZMQ_ROUTER_HANDOVER`.
    case routerHandover(Bool)
    /// Makes an `xpublisher` pass on every subscription message, not only the first per prefix.
    ///
    /// The corresponding libzmq option is `ZMQ_XPUB_VERBOSE`.
    case xpubVerbose(Bool)
    /// Makes an `xpublisher` pass on every subscription and every unsubscription message
    /// (repeats, and one per topic of a connection that ends, without metadata), so the
    /// reader can count each connection's subscriptions.
    ///
    /// The corresponding libzmq option is `ZMQ_XPUB_VERBOSER`.
    case xpubVerboser(Bool)
    /// Turns TCP keepalive probes on or off (the operating system's default when unset).
    ///
    /// The corresponding libzmq option is `ZMQ_TCP_KEEPALIVE`.
    case tcpKeepalive(Bool)
    /// Lets TCP endpoints use IPv6 as well as IPv4.
    ///
    /// The corresponding libzmq option is `ZMQ_IPV6`.
    case ipv6(Bool)
    /// Makes the socket the CURVE server of its connections; it then needs `curveSecretKey`.
    ///
    /// The corresponding libzmq option is `ZMQ_CURVE_SERVER`.
    case curveServer(Bool)
    /// This socket's long-term public key as 40 Z85 characters; CURVE clients only.
    ///
    /// The corresponding libzmq option is `ZMQ_CURVE_PUBLICKEY`.
    case curvePublicKey(String)
    /// This socket's long-term secret key as 40 Z85 characters.
    ///
    /// The corresponding libzmq option is `ZMQ_CURVE_SECRETKEY`.
    case curveSecretKey(String)
    /// The server's public key as 40 Z85 characters; setting it makes the socket a CURVE client.
    ///
    /// The corresponding libzmq option is `ZMQ_CURVE_SERVERKEY`.
    case curveServerKey(String)
    /// The ZAP domain this socket's connections are authenticated in (RFC 27), at most 254
    /// bytes; a ZAP handler tells sockets apart by it. With CURVE every connection is put to
    /// the handler bound at `inproc://zeromq.zap.01`, if any; with the NULL mechanism only
    /// when a domain is set.
    ///
    /// The corresponding libzmq option is `ZMQ_ZAP_DOMAIN`.
    case zapDomain(String)

    /// Receives messages whose first frame starts with the UTF-8 bytes of `prefix`.
    ///
    /// The corresponding libzmq option is `ZMQ_SUBSCRIBE`.
    public static func subscribe(prefix: String) -> SocketOption {
        .subscribe(Data(prefix.utf8))
    }

    /// Removes one earlier subscription to exactly the UTF-8 bytes of `prefix`.
    ///
    /// The corresponding libzmq option is `ZMQ_UNSUBSCRIBE`.
    public static func unsubscribe(prefix: String) -> SocketOption {
        .unsubscribe(Data(prefix.utf8))
    }
}

extension SocketOption {
    /// How a value crosses `zmq_setsockopt`.
    enum Value {
        case int(Int32)
        case int64(Int64)
        case bytes(Data)
        /// A NUL-terminated string, as libzmq expects Z85 keys.
        case string(String)
    }

    /// The libzmq option number, its C name for error messages, and the value to pass.
    var setting: (option: Int32, name: String, value: Value) {
        switch self {
        case .linger(let milliseconds): (ZMQ_LINGER, "ZMQ_LINGER", .int(milliseconds))
        case .sendHighWaterMark(let count): (ZMQ_SNDHWM, "ZMQ_SNDHWM", .int(count))
        case .receiveHighWaterMark(let count): (ZMQ_RCVHWM, "ZMQ_RCVHWM", .int(count))
        case .immediate(let isOn): (ZMQ_IMMEDIATE, "ZMQ_IMMEDIATE", .int(isOn ? 1 : 0))
        case .subscribe(let prefix): (ZMQ_SUBSCRIBE, "ZMQ_SUBSCRIBE", .bytes(prefix))
        case .unsubscribe(let prefix): (ZMQ_UNSUBSCRIBE, "ZMQ_UNSUBSCRIBE", .bytes(prefix))
        case .routingID(let identity): (ZMQ_ROUTING_ID, "ZMQ_ROUTING_ID", .bytes(identity))
        case .heartbeatInterval(let milliseconds):
            (ZMQ_HEARTBEAT_IVL, "ZMQ_HEARTBEAT_IVL", .int(milliseconds))
        case .heartbeatTimeout(let milliseconds):
            (ZMQ_HEARTBEAT_TIMEOUT, "ZMQ_HEARTBEAT_TIMEOUT", .int(milliseconds))
        case .heartbeatTTL(let milliseconds):
            (ZMQ_HEARTBEAT_TTL, "ZMQ_HEARTBEAT_TTL", .int(milliseconds))
        case .maxMessageSize(let bytes): (ZMQ_MAXMSGSIZE, "ZMQ_MAXMSGSIZE", .int64(bytes))
        case .reconnectInterval(let milliseconds):
            (ZMQ_RECONNECT_IVL, "ZMQ_RECONNECT_IVL", .int(milliseconds))
        case .reconnectIntervalMax(let milliseconds):
            (ZMQ_RECONNECT_IVL_MAX, "ZMQ_RECONNECT_IVL_MAX", .int(milliseconds))
        case .sendTimeout(let milliseconds): (ZMQ_SNDTIMEO, "ZMQ_SNDTIMEO", .int(milliseconds))
        case .receiveTimeout(let milliseconds): (ZMQ_RCVTIMEO, "ZMQ_RCVTIMEO", .int(milliseconds))
        case .routerMandatory(let isOn):
            (ZMQ_ROUTER_MANDATORY, "ZMQ_ROUTER_MANDATORY", .int(isOn ? 1 : 0))
        case .routerHandover(let isOn):
            (ZMQ_ROUTER_HANDOVER, "ZMQ_ROUTER_HANDOVER", .int(isOn ? 1 : 0))
        case .xpubVerbose(let isOn): (ZMQ_XPUB_VERBOSE, "ZMQ_XPUB_VERBOSE", .int(isOn ? 1 : 0))
        case .xpubVerboser(let isOn): (ZMQ_XPUB_VERBOSER, "ZMQ_XPUB_VERBOSER", .int(isOn ? 1 : 0))
        case .tcpKeepalive(let isOn): (ZMQ_TCP_KEEPALIVE, "ZMQ_TCP_KEEPALIVE", .int(isOn ? 1 : 0))
        case .ipv6(let isOn): (ZMQ_IPV6, "ZMQ_IPV6", .int(isOn ? 1 : 0))
        case .curveServer(let isOn): (ZMQ_CURVE_SERVER, "ZMQ_CURVE_SERVER", .int(isOn ? 1 : 0))
        case .curvePublicKey(let key): (ZMQ_CURVE_PUBLICKEY, "ZMQ_CURVE_PUBLICKEY", .string(key))
        case .curveSecretKey(let key): (ZMQ_CURVE_SECRETKEY, "ZMQ_CURVE_SECRETKEY", .string(key))
        case .curveServerKey(let key): (ZMQ_CURVE_SERVERKEY, "ZMQ_CURVE_SERVERKEY", .string(key))
        case .zapDomain(let domain): (ZMQ_ZAP_DOMAIN, "ZMQ_ZAP_DOMAIN", .bytes(Data(domain.utf8)))
        }
    }
}
