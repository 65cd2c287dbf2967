import ChimeCore
import ChimeRuntime
import ChimeSecurity
import ChimeWire
import Foundation
import Synchronization
import ZeroMQ

/// Receives fire events from every shard of a cluster, with no gap and no duplicate per
/// shard across any shard's restart or failover: one ``SubscriberClient`` per shard, each on
/// its own thread with its own events socket, its own ``GapFiller`` (one watermark per
/// shard: `seq` counts per shard) and its own catch-up from that shard's control endpoint.
///
/// A recipient lives on one shard, so its events come from that shard alone: with
/// `recipient` only its shard is subscribed. Events of different shards are delivered in
/// arrival order (no order holds across shards), except across a slot move: without
/// `recipient`, topic `handover` is subscribed too and, per slot, the events before a
/// hand-over (from the source) are delivered before it and those after it (from the target)
/// after it (``SlotOrder``: a target's event of the slot waits for the hand-over, 5 s at
/// most). `onEvent` is called by one thread at a time.
public final class ClusterSubscriber: Sendable {
    let map: ShardMap
    let recipient: RecipientID?
    let stop: StopSignal
    let highWaterMark: Int32
    let curve: CurveClientKeys?
    let maxEventBytes: Int?

    /// - Parameters:
    ///   - map: the cluster's shard map (each shard's `events` and `control` endpoints).
    ///   - recipient: one recipient's events only (its shard only); every event when `nil`.
    ///   - stop: ends the subscription: a receive under way returns once it is signalled.
    ///   - highWaterMark: events queued per shard before ZeroMQ drops (ZMQ_RCVHWM).
    ///   - curve: this subscriber's key and the coordinators' public key; `nil` without CURVE.
    ///   - maxEventBytes: the coordinators' own `events.maxEventBytes`: a frame over it plus
    ///     1 KiB is refused and ends that shard's connection for good
    ///     (``SubscriberClient/maxEventBytes``); `nil`: the default bound.
    public init(
        map: ShardMap, recipient: RecipientID?, stop: StopSignal, highWaterMark: Int32 = 250_000, curve: CurveClientKeys? = nil,
        maxEventBytes: Int? = nil
    ) {
        self.maxEventBytes = maxEventBytes
        self.map = map
        self.recipient = recipient
        self.stop = stop
        self.highWaterMark = highWaterMark
        self.curve = curve
    }

    /// Where a shard's catch-up comes from.
    public struct CatchUp: Sendable {
        /// Each control request's timeout.
        public var timeout: Duration
        /// Resends after a timeout.
        public var retries: Int
        /// The ZeroMQ context of the catch-up sockets (shut it down to end waits at once).
        public var context: Context
        /// Per shard, the `seq` after which to replay retained events first; a shard absent
        /// starts now.
        public var since: [Int: UInt64]

        /// Creates the value from its fields (see each property for meaning and units).
        public init(timeout: Duration, retries: Int, context: Context, since: [Int: UInt64]) {
            self.timeout = timeout
            self.retries = retries
            self.context = context
            self.since = since
        }
    }

    /// The shards subscribed: the recipient's alone, or every shard.
    public var shards: [ShardMap.Shard] {
        guard let recipient, let owner = map.shard(of: recipient) else { return map.shards }
        return [owner]
    }

    /// Calls `onEvent` for every fire event of every shard subscribed until the stop signal.
    /// - Parameters:
    ///   - catchUp: with it, each shard's gaps and restarts are filled from its catch-up.
    ///   - onReady: called once every shard's subscription is sent.
    ///   - onEvent: called with each event and its JSON bytes, by one thread at a time.
    ///   - onHandOver: with it (and no `recipient`), each shard's hand-over events (a slot
    ///     move's end on its source) are passed too, in that shard's `seq` order among its
    ///     fire events, by the same one thread at a time. Per slot, the events before a
    ///     hand-over came from its `shard`, the later ones from its `target` (both followed
    ///     here when the map names the target; a map without it is older than the move's
    ///     `mapEpoch`: read the map again and subscribe the target from seq 0).
    /// - Throws: the first error a shard's subscriber threw (`ZeroMQError` for a bad
    ///   endpoint, `WireError` when a shard refuses `events`); the other shards are stopped.
    public func run(
        catchUp: CatchUp?, onReady: @escaping @Sendable () -> Void = {}, onEvent: @escaping @Sendable (FireEvent, Data) -> Void,
        onHandOver: (@Sendable (HandOverEvent, Data) -> Void)? = nil
    ) throws {
        let shards = shards
        let delivery = Mutex(SlotOrder(map: map))
        let ordersSlots = recipient == nil
        /// Passes `ready` on, in order (called under `delivery`'s lock).
        @Sendable func emit(_ ready: [SlotOrder.Delivery]) {
            for item in ready {
                switch item {
                case .fire(let event, let raw, _): onEvent(event, raw)
                case .handOver(let event, let raw): onHandOver?(event, raw)
                }
            }
        }
        let failure = Mutex<(any Error)?>(nil)
        let ready = Atomic<Int>(0)
        let group = DispatchGroup()
        for shard in shards {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                do {
                    let subscriber = SubscriberClient(
                        endpoint: shard.endpoints.events, recipient: recipient, stop: stop, highWaterMark: highWaterMark, curve: curve)
                    subscriber.maxEventBytes = maxEventBytes
                    if ordersSlots {
                        subscriber.onTurn = {
                            delivery.withLock { order in if order.hasHeldEvents { emit(order.onTick(at: Date())) } }
                        }
                    }
                    let client = try catchUp.map { catchUp in
                        try ControlClient(
                            endpoint: shard.endpoints.control, timeout: catchUp.timeout, retries: catchUp.retries, curve: curve,
                            context: catchUp.context)
                    }
                    try subscriber.run(
                        catchUp: client.map { ($0, catchUp?.since[shard.id]) },
                        onReady: { if ready.add(1, ordering: .acquiringAndReleasing).newValue == shards.count { onReady() } },
                        onEvent: { event, raw in
                            delivery.withLock { order in
                                if ordersSlots { emit(order.onFire(event, raw: raw, from: shard.id, at: Date())) } else { onEvent(event, raw) }
                            }
                        },
                        onHandOver: !ordersSlots ? nil : { event, raw in delivery.withLock { order in emit(order.onHandOver(event, raw: raw)) } })
                } catch {
                    // An error after the stop (a catch-up context shut down) is the stop's echo.
                    if !stop.isStopRequested { failure.withLock { if $0 == nil { $0 = error } } }
                    stop.requestStop()
                }
            }
            thread.name = "chime-subscriber-\(shard.id)"
            thread.start()
        }
        group.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
