import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ
import ChimeSecurity

/// Receives the live `badge.<recipient>` or `action.<recipient>` events (no catch-up: these
/// are not retained by the coordinator; fire events go through ``SubscriberClient``), from
/// one events endpoint or from several (every shard's): a SUB socket per endpoint, all
/// polled by the calling thread in one ZeroMQ context, so several shards cost no thread
/// of their own.
public final class TopicSubscriber {
    /// The events endpoints, each read by a socket of its own (its index names it).
    let endpoints: [String]
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
    public convenience init(
        endpoint: String, prefix: String, recipient: RecipientID?, stop: StopSignal, highWaterMark: Int32 = 250_000,
        curve: CurveClientKeys? = nil
    ) {
        self.init(endpoints: [endpoint], prefix: prefix, recipient: recipient, stop: stop, highWaterMark: highWaterMark, curve: curve)
    }

    /// The same subscription on every one of `endpoints` (each shard's events endpoint);
    /// `highWaterMark` bounds each endpoint's queue. The other parameters are as for
    /// ``init(endpoint:prefix:recipient:stop:highWaterMark:curve:)``.
    public init(
        endpoints: [String], prefix: String, recipient: RecipientID?, stop: StopSignal, highWaterMark: Int32 = 250_000,
        curve: CurveClientKeys? = nil
    ) {
        self.endpoints = endpoints
        self.prefix = prefix
        self.recipient = recipient
        self.stop = stop
        self.highWaterMark = highWaterMark
        self.curve = curve
    }

    /// Calls `onMessage` with each event's topic and JSON until the stop signal.
    /// - Throws: `ZeroMQError` when an endpoint is invalid.
    public func run(onReady: () -> Void = {}, onMessage: (String, Data) -> Void) throws {
        try run(onReady: onReady) { _, topic, raw in onMessage(topic, raw) }
    }

    /// The most messages one turn takes from one endpoint's socket before the next one's.
    static let messagesPerTurn = 1_000

    /// Calls `onMessage` with the index in `endpoints` each event came from, its topic and its
    /// JSON, until the stop signal; an endpoint's events come in the order it sent them, and
    /// one turn takes at most 1,000 messages from each, so none waits behind another's flood.
    /// - Throws: `ZeroMQError` when an endpoint is invalid.
    public func run(onReady: () -> Void = {}, onEndpointMessage onMessage: (Int, String, Data) -> Void) throws {
        let topic = prefix + (recipient?.rawValue ?? "")
        let exactTopic = Data(topic.utf8)
        let context = try Context()
        stop.onStop { context.shutdown() }
        var sockets: [Socket] = []
        defer { for socket in sockets { socket.close() } }
        let poller = Poller()
        do {
            for endpoint in endpoints {
                let socket = try SubscriberSocket.make(
                    endpoint: endpoint, topics: [topic], highWaterMark: highWaterMark, curve: curve, context: context,
                    maxMessageBytes: maxEventBytes.map { Int64($0) + 1024 } ?? SubscriberSocket.defaultMaximumMessageBytes)
                sockets.append(socket)
                poller.register(socket, for: .readable)
            }
            onReady()
            while !stop.isStopRequested {
                guard try poller.poll(timeout: .milliseconds(100)) > 0 else { continue }
                for (index, socket) in sockets.enumerated() where poller.events(at: index).contains(.readable) {
                    for _ in 0..<Self.messagesPerTurn {
                        guard let frames = try socket.receiveMessage(dontWait: true) else { break }
                        guard frames.count == 2 else { continue }
                        // Topics match by prefix: `badge.al` would also match `badge.alice`.
                        if recipient != nil, frames[0] != exactTopic { continue }
                        onMessage(index, String(decoding: frames[0], as: UTF8.self), frames[1])
                    }
                }
            }
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return
        }
    }
}
