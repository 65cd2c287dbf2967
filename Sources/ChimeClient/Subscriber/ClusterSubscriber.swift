import ChimeCore
import ChimeRuntime
import ChimeSecurity
import ChimeWire
import Foundation
import Synchronization
import ZeroMQ

/// Receives fire events from every shard of a cluster, with no gap and no duplicate per
/// shard across any shard's restart or failover: per shard an events socket, a ``GapFiller``
/// (one watermark per shard: `seq` counts per shard) and a catch-up from that shard's control
/// endpoint, all polled by one thread (`EventStreams`). A subscription thus costs one
/// thread and one ZeroMQ context whatever the shard count, and one more thread to follow the
/// map when it does; a shard that is down or restarting holds up no other shard's events.
///
/// A recipient lives on one shard, so its events come from that shard alone: with
/// `recipient` only its shard is subscribed. Events of different shards are delivered in
/// arrival order (no order holds across shards), except across a slot move: without
/// `recipient`, topic `handover` is subscribed too and, per slot, the events before a
/// hand-over (from the source) are delivered before it and those after it (from the target)
/// after it (``SlotOrder``: a target's event of the slot waits for the hand-over, 5 s at
/// most). `onEvent` is called by one thread at a time.
///
/// With ``MapFollowing`` the map is read again every `interval`, and a shard that joins later
/// (or, with `recipient`, the shard a move hands the recipient's slot to) is subscribed as it
/// appears, from its first retained event when there is a catch-up: a cluster that grows while
/// the subscription runs loses none of the new shard's events.
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

    /// How the subscription follows a map that changes while it runs.
    public struct MapFollowing: Sendable {
        /// How often the map is read again.
        public var interval: Duration
        /// Reads the cluster's current map; `nil` when it cannot be read now (tried again after
        /// `interval`). Called on the thread that called ``ClusterSubscriber/run(catchUp:following:onReady:onEvent:onHandOver:onRecipientHandOver:)``.
        public var read: @Sendable () -> ShardMap?

        /// Creates the value from its fields (see each property for meaning and units).
        public init(interval: Duration, read: @escaping @Sendable () -> ShardMap?) {
            self.interval = interval
            self.read = read
        }
    }

    /// The shards subscribed: the recipient's alone, or every shard.
    public var shards: [ShardMap.Shard] { Self.shards(of: map, for: recipient) }

    /// `map`'s shards that hold `recipient`'s events (its owner), or all of them for `nil`.
    static func shards(of map: ShardMap, for recipient: RecipientID?) -> [ShardMap.Shard] {
        guard let recipient, let owner = map.shard(of: recipient) else { return map.shards }
        return [owner]
    }

    /// Calls `onEvent` for every fire event of every shard subscribed until the stop signal.
    /// - Parameters:
    ///   - catchUp: with it, each shard's gaps and restarts are filled from its catch-up.
    ///   - following: with it, shards that appear in a later map are subscribed too (from
    ///     seq 0 with `catchUp`: their whole retained history, which begins when they joined);
    ///     a shard is known by its id, and one that leaves the map stays subscribed (it sends
    ///     nothing more). With `recipient` too, a shard's catch-up answered `wrong_shard`
    ///     (the recipient's slot moved away) is retried at the catch-up's pace instead of
    ///     ending the subscription: that shard's live events still arrive (until its
    ///     hand-over), and its catch-up resumes if a later move gives the slot back. Without
    ///     it the subscription keeps the map it started with.
    ///   - onReady: called once every shard of the first map has its subscription sent.
    ///   - onEvent: called with each event and its JSON bytes, by one thread at a time.
    ///   - onRecipientHandOver: with `recipient` and `following`, called (by the same one
    ///     thread at a time as `onEvent`) when a newer map gives the recipient's slot to
    ///     another shard: the recipient's own subscription receives no `handover` events.
    ///   - onHandOver: with it (and no `recipient`), each shard's hand-over events (a slot
    ///     move's end on its source) are passed too, in that shard's `seq` order among its
    ///     fire events, by the same one thread at a time. Per slot, the events before a
    ///     hand-over came from its `shard`, the later ones from its `target` (both followed
    ///     here when the map names the target; a map without it is older than the move's
    ///     `mapEpoch`: read the map again and subscribe the target from seq 0).
    /// - Throws: the first error a shard's subscriber threw (`ZeroMQError` for a bad
    ///   endpoint, `WireError` when a shard refuses `events`); the other shards are stopped.
    public func run(
        catchUp: CatchUp?, following: MapFollowing? = nil, onReady: @escaping @Sendable () -> Void = {},
        onEvent: @escaping @Sendable (FireEvent, Data) -> Void, onHandOver: (@Sendable (HandOverEvent, Data) -> Void)? = nil,
        onRecipientHandOver: (@Sendable (RecipientHandOver) -> Void)? = nil
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
        /// Shards to subscribe at the receiving thread's next turn, with the `seq` their
        /// catch-up starts after (`nil`: now): the first map's, then those the map follower finds.
        let joining = Mutex<[(shard: ShardMap.Shard, since: UInt64?)]>(shards.map { ($0, catchUp?.since[$0.id]) })
        // Following a recipient whose slot moves: the source keeps its live events until the
        // hand-over and answers the catch-up `wrong_shard` from some point of the move on;
        // the map then names the new owner.
        let retriesWrongShard = following != nil && recipient != nil
        /// Receives every shard's events until the stop (the one receiving thread).
        @Sendable func receive() throws {
            let streams = try EventStreams(
                recipient: recipient, handOvers: ordersSlots, stop: stop, highWaterMark: highWaterMark, curve: curve,
                maxEventBytes: maxEventBytes)
            var isReady = false
            /// Subscribes the shards joining since the last turn.
            func adopt() throws {
                let pending = joining.withLock { pending -> [(shard: ShardMap.Shard, since: UInt64?)] in
                    defer { pending = [] }
                    return pending
                }
                for (shard, since) in pending {
                    var source: (client: ControlClient, since: UInt64?)?
                    if let catchUp {
                        let client = try ControlClient(
                            endpoint: shard.endpoints.control, timeout: catchUp.timeout, retries: catchUp.retries, curve: curve,
                            context: catchUp.context)
                        source = (client, since)
                    }
                    try streams.add(
                        shard: shard.id, endpoint: shard.endpoints.events, catchUp: source, retriesWrongShard: retriesWrongShard)
                }
                if !isReady {
                    isReady = true
                    onReady()
                }
            }
            try streams.run(
                adopt: adopt,
                onTurn: {
                    guard ordersSlots else { return }
                    delivery.withLock { order in if order.hasHeldEvents { emit(order.onTick(at: Date())) } }
                },
                deliver: { shard, event, raw in
                    delivery.withLock { order in
                        switch event {
                        case .fire(let fire):
                            if ordersSlots { emit(order.onFire(fire, raw: raw, from: shard, at: Date())) } else { onEvent(fire, raw) }
                        case .handOver(let handOver): emit(order.onHandOver(handOver, raw: raw))
                        }
                    }
                })
        }
        guard let following else {
            do {
                try receive()
            } catch {
                // An error after the stop (a catch-up context shut down) is the stop's echo.
                if !stop.isStopRequested { throw error }
            }
            return
        }
        let failure = Mutex<(any Error)?>(nil)
        let group = DispatchGroup()
        group.enter()
        let thread = Thread { [self] in
            defer { group.leave() }
            do {
                try receive()
            } catch {
                if !stop.isStopRequested { failure.withLock { if $0 == nil { $0 = error } } }
                stop.requestStop()
            }
        }
        thread.name = "chime-subscriber"
        thread.start()
        var known = Set(shards.map(\.id))
        var followed = map
        let wake = DispatchSemaphore(value: 0)
        stop.onStop { wake.signal() }
        // At least 1 ms, at most a day (no overflow whatever the interval).
        let nanoseconds = min(max(following.interval.components.seconds, 0), 86_400) * 1_000_000_000
            + max(following.interval.components.attoseconds, 0) / 1_000_000_000
        while !stop.isStopRequested {
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(clamping: max(1_000_000, nanoseconds))))
            guard !stop.isStopRequested, let newer = following.read() else { continue }
            if let recipient, newer.mapEpoch > followed.mapEpoch {
                if let handOver = RecipientHandOver.between(followed, newer, of: recipient) {
                    delivery.withLock { _ in onRecipientHandOver?(handOver) }
                }
                followed = newer
            }
            for shard in Self.shards(of: newer, for: recipient) where !known.contains(shard.id) {
                known.insert(shard.id)
                joining.withLock { $0.append((shard, catchUp == nil ? nil : 0)) }
            }
        }
        group.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
