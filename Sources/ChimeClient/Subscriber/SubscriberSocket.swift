import ChimeRuntime
import ChimeSecurity
import Foundation
import ZeroMQ

/// The one way Chime makes a SUB socket on the events endpoint: the fire-event client, the
/// badge and action subscriber, the benchmark's raw subscriber and the test collectors.
///
/// Topics match by prefix in ZeroMQ (`fire.al` also matches `fire.alice`): a reader that
/// wants one recipient compares each message's topic exactly.
public enum SubscriberSocket {
    /// The default bound on one received frame, in bytes: the largest `events.maxEventBytes` a
    /// configuration may set (1 GiB) plus 1 KiB for the topic; pass the cluster's own
    /// `maxEventBytes + 1024` for a tighter one. A larger frame is not a live event (a worker
    /// never publishes one) and libzmq drops the connection instead (`ZMQ_MAXMSGSIZE`) — for
    /// good: a protocol error is not reconnected, so the socket receives nothing more.
    public static let defaultMaximumMessageBytes: Int64 = (1 << 30) + 1024

    /// A SUB socket with linger 0 and ZMQ_RCVHWM `highWaterMark` (messages; 0: no limit,
    /// `nil`: libzmq's default), receiving frames of at most `maxMessageBytes`, secured as a
    /// CURVE client when `curve` is given, subscribed to each of `topics` and connected to
    /// `endpoint`, in `context`.
    /// - Throws: `ZeroMQError` for a bad endpoint or option.
    ///
    /// The corresponding libzmq calls are `zmq_socket(ZMQ_SUB)`, `zmq_setsockopt` and
    /// `zmq_connect`.
    public static func make(
        endpoint: String, topics: [String], highWaterMark: Int32?, curve: CurveClientKeys?, context: Context,
        maxMessageBytes: Int64 = defaultMaximumMessageBytes
    ) throws -> Socket {
        let socket = try Socket(.subscriber, context: context)
        try socket.set(.linger(milliseconds: 0))
        try socket.set(.maxMessageSize(bytes: maxMessageBytes))
        if let highWaterMark { try socket.set(.receiveHighWaterMark(highWaterMark)) }
        for topic in topics { try socket.set(.subscribe(Data(topic.utf8))) }
        try curve?.secure(socket, for: endpoint)
        try socket.connect(to: endpoint)
        return socket
    }

    /// The same socket in a context of its own, which `stop` shuts down: a receive under
    /// way then ends with `ZeroMQError.Code.contextTerminated`, the normal way out.
    /// - Throws: as `make(endpoint:topics:highWaterMark:curve:context:)`.
    public static func make(
        endpoint: String, topics: [String], highWaterMark: Int32?, curve: CurveClientKeys?, stop: StopSignal,
        maxMessageBytes: Int64 = defaultMaximumMessageBytes
    ) throws -> Socket {
        let context = try Context()
        stop.onStop { context.shutdown() }
        return try make(
            endpoint: endpoint, topics: topics, highWaterMark: highWaterMark, curve: curve, context: context,
            maxMessageBytes: maxMessageBytes)
    }
}
