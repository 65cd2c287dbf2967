import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ZeroMQ
import ChimeSecurity

/// Receives fire events from the coordinator's XPUB endpoint; with a control client, with
/// no gap and no duplicate across coordinator restarts (``GapFiller``).
///
/// Topics match by prefix in ZeroMQ (`fire.al` would also match `fire.alice`), so
/// `recipient` is also compared exactly on every event.
///
/// With `catchUp`, the client subscribes first, then asks `events` over the control socket
/// (from `since`, or from the settled watermark "now" when `since` is `nil`) and from then
/// on delivers in `seq` order: a live event waits until every earlier `seq` is settled and
/// the missing ones were replayed (ZeroMQ Guide ch. 5, "Clone"). A failed fetch (the
/// coordinator restarting) is retried; each firing id is delivered once. The catch-up's
/// request joins the events socket's poll (`EventStreams`, the same loop a
/// ``ClusterSubscriber`` runs for every shard): live events are taken while it is answered.
public final class SubscriberClient {
    let endpoint: String
    let recipient: RecipientID?
    let stop: StopSignal

    /// - Parameters:
    ///   - endpoint: the events endpoint to connect to (`tcp://127.0.0.1:7703`).
    ///   - recipient: one recipient's events only; every fire event when `nil`.
    ///   - stop: ends the subscription: a receive under way returns once it is signalled.
    ///   - highWaterMark: events queued before ZeroMQ drops (ZMQ_RCVHWM).
    ///   - curve: this subscriber's key and the coordinator's public key; `nil` without CURVE.
    public init(
        endpoint: String, recipient: RecipientID?, stop: StopSignal, highWaterMark: Int32 = 250_000,
        curve: CurveClientKeys? = nil
    ) {
        self.curve = curve
        self.endpoint = endpoint
        self.recipient = recipient
        self.stop = stop
        self.highWaterMark = highWaterMark
    }

    let highWaterMark: Int32
    let curve: CurveClientKeys?
    /// A tighter bound on event frames: the cluster's `events.maxEventBytes` (a frame over it
    /// plus 1 KiB is refused, `ZMQ_MAXMSGSIZE`); `nil`: ``SubscriberSocket/defaultMaximumMessageBytes``.
    /// libzmq ends the connection for good on such a frame (a protocol error; it does not
    /// reconnect), so set it only to the coordinators' own value, never a smaller one.
    public var maxEventBytes: Int?
    /// Called once per turn of the receive loop (at least every 100 ms): a cluster
    /// subscriber's clock for events it holds (``SlotOrder``).
    var onTurn: (() -> Void)?
    /// Whether a catch-up answered `wrong_shard` (this shard no longer owns the recipient's
    /// slot) is retried at the catch-up's pace instead of ending
    /// ``run(catchUp:onReady:onEvent:onHandOver:)``: live events keep coming until the
    /// shard's hand-over, each delivered once it has waited the gap filler's
    /// ``GapFiller/Settings/maximumWait`` for a fill that cannot come
    /// (``GapFiller/onFetchRefused(at:)``). Set by a cluster subscriber that follows the map
    /// (it subscribes the slot's new owner).
    var retriesWrongShard = false

    /// Calls `onEvent` for every fire event until the stop signal, with the event's JSON.
    /// - Parameters:
    ///   - catchUp: the control client and the `seq` after which to replay retained events
    ///     first (`nil`: none, start now); with it, restarts and gaps are filled.
    ///   - onReady: called once the subscription is sent.
    ///   - onEvent: called with each event and its JSON bytes, each firing id once.
    ///   - onHandOver: with it (and no `recipient`), topic `handover` is subscribed too and
    ///     each hand-over event (a slot move's end on this shard) is passed with its JSON,
    ///     once, in `seq` order among the fire events: the slots' events before it came from
    ///     this shard, those after it come from the target's stream.
    /// - Throws: `ZeroMQError` when the endpoint is invalid; `WireError` when the
    ///   coordinator refuses an `events` request (a failed exchange is retried).
    public func run(
        catchUp: (client: ControlClient, since: UInt64?)? = nil, onReady: () -> Void = {},
        onEvent: (FireEvent, Data) -> Void, onHandOver: ((HandOverEvent, Data) -> Void)? = nil
    ) throws {
        let streams = try EventStreams(
            recipient: recipient, handOvers: onHandOver != nil, stop: stop, highWaterMark: highWaterMark, curve: curve,
            maxEventBytes: maxEventBytes)
        do {
            try streams.add(shard: 0, endpoint: endpoint, catchUp: catchUp, retriesWrongShard: retriesWrongShard)
        } catch let error as ZeroMQError where error.code == .contextTerminated {
            return
        }
        onReady()
        try streams.run(
            adopt: {}, onTurn: { onTurn?() },
            deliver: { _, event, raw in
                switch event {
                case .fire(let fire): onEvent(fire, raw)
                case .handOver(let handOver): onHandOver?(handOver, raw)
                }
            })
    }
}
