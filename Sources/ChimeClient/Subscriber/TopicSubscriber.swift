import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ
import ChimeSecurity

/// Receives the live `badge.<recipient>` or `action.<recipient>` events (no catch-up: these
/// are not retained by the coordinator; fire events go through ``SubscriberClient``).
public final class TopicSubscriber {
    let endpoint: String
    let prefix: String
    let recipient: RecipientID?
    let stop: StopSignal
    let highWaterMark: Int32
    let curve: CurveClientKeys?
    /// A tighter bound on event frames: the cluster's `events.maxEventBytes` (a frame over it
    /// plus 1 KiB is refused, `ZMQ_MAXMSGSIZE`); `nil`: ``SubscriberSocket/defaultMaximumMessageBytes``.
    /// libzmq ends the connection for good on such a frame (a protocol error; it does not
    /// reconnect), so set it only to the coordinators' own value, never a smaller one.
    public var maxEventBytes: Int?

    /// - Parameters:
    ///   - endpoint: the events endpoint to connect to (`tcp://127.0.0.1:7703`).
    ///   - prefix: the topic family with its dot, `badge.` or `action.`.
    ///   - recipient: one recipient's events only (compared exactly); all when `nil`.
    ///   - stop: ends the subscription: a receive under way returns once it is signalled.
    ///   - highWaterMark: events queued before ZeroMQ drops (ZMQ_RCVHWM).
    ///   - curve: this subscriber's key and the coordinator's public key; `nil` without CURVE.
    public init(
        endpoint: String, prefix: String, recipient: RecipientID?, stop: StopSignal, highWaterMark: Int32 = 250_000,
        curve: CurveClientKeys? = nil
    ) {
        self.endpoint = endpoint
        self.prefix = prefix
        self.recipient = recipient
        self.stop = stop
        self.highWaterMark = highWaterMark
        self.curve = curve
    }

    /// Calls `onMessage` with each event's topic and JSON until the stop signal.
    /// - Throws: `ZeroMQError` when the endpoint is invalid.
    public func run(onReady: () -> Void = {}, onMessage: (String, Data) -> Void) throws {
        let topic = prefix + (recipient?.rawValue ?? "")
        let socket = try SubscriberSocket.make(
            endpoint: endpoint, topics: [topic], highWaterMark: highWaterMark, curve: curve, stop: stop,
            maxMessageBytes: maxEventBytes.map { Int64($0) + 1024 } ?? SubscriberSocket.defaultMaximumMessageBytes)
        defer { socket.close() }
        onReady()
        do {
            while !stop.isStopRequested {
                guard let frames = try socket.receiveMessage(dontWait: false), frames.count == 2 else { continue }
                // Topics match by prefix: `badge.al` would also match `badge.alice`.
                if recipient != nil, frames[0] != Data(topic.utf8) { continue }
                onMessage(String(decoding: frames[0], as: UTF8.self), frames[1])
            }
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return
        }
    }
}
