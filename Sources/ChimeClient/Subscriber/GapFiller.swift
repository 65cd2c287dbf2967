import ChimeCore
import ChimeWire
import Foundation

/// The client side of a live subscription with no gap ("A live subscriber with no gap" in
/// <doc:WireProtocol>): live fire events are delivered in `seq` order once every earlier `seq` is known
/// to be settled, and whatever the live stream missed (a slow joiner after a coordinator
/// restart, a high-water-mark drop) is filled from the `events` catch-up first. Each
/// firing id is delivered once. Pure: the caller passes time in and does the fetches.
///
/// The watermark `W`: every retained event with `seq <= W` has been delivered (or was
/// settled before the subscription started). A live event with `seq <= W + 1` is delivered
/// at once and moves `W` to its `seq`; a later one waits until a fetch of `events` after
/// `W` reports `through >= seq - 1` (all earlier ones acknowledged, so the reply listed the
/// missing ones), and the replayed and waiting events are then delivered merged in `seq`
/// order. A coordinator restart shows as a jump of at least half a seq block
/// (`seqReserved`), so the first live event after it always waits for the fill; if the
/// live stream lost every event, the idle fetch (every ``Settings/idleFetchInterval``)
/// finds them. The Guide's Clone pattern, ch. 5, with the snapshot replaced by `events`.
///
/// A shard's stream also carries hand-over events (`HandOverEvent`, a slot move's end on
/// the source), in the same `seq` count: the ``ShardStreamEvent`` methods (`take`, `tick`)
/// deliver them in `seq` order among the fire events, each once (a live copy at or below the
/// watermark was delivered by a fetch). The `FireEvent` methods are the same filler
/// without them.
public struct GapFiller: Sendable {
    /// Timing and memory bounds.
    public struct Settings: Sendable {
        /// Seconds between fetches while nothing waits (finds events the live stream lost
        /// entirely).
        public var idleFetchInterval: Double = 1
        /// Seconds between fetches while events wait for the fill.
        public var waitingFetchInterval: Double = 0.02
        /// Seconds an event waits, counted from the first successful fetch after it
        /// arrived, before it is delivered anyway (an earlier `seq` held by a dead worker's
        /// lease does not stall the stream for the whole lease).
        public var maximumWait: Double = 2
        /// Firing ids remembered for de-duplication (the oldest are forgotten first).
        public var rememberedFiringIDs: Int = 100_000
        /// The most events that wait for the fill: past it the oldest are delivered anyway,
        /// as after ``maximumWait``, so a catch-up that never answers (the control endpoint
        /// unreachable) while live events keep coming cannot grow the subscriber without
        /// bound. The default is a subscriber socket's default high-water mark, which bounded
        /// them while they were still unread.
        public var maximumWaiting: Int = 250_000

        /// The defaults above.
        public init() {}
    }

    /// An event that waits for the fill, and since when a successful fetch has seen it wait.
    struct Waiting: Sendable {
        var event: ShardStreamEvent
        var fetchedSince: Date?
    }

    let settings: Settings
    /// `nil` until the first fetch when the subscription starts at "now".
    public private(set) var watermark: UInt64?
    /// In `seq` order (equal seqs in arrival order).
    private(set) var waiting: [Waiting] = []
    /// The seq each waiting fire event waits under, by firing id (one entry a firing).
    private var waitingSeqs: [FiringID: UInt64] = [:]
    private var delivered = Set<FiringID>()
    private var deliveredOrder = RingQueue<FiringID>()
    private(set) var lastFetchAt = Date.distantPast

    /// A subscription that replays retained events after `since` first, or, with `nil`,
    /// starts at the coordinator's settled watermark (events from now on).
    public init(since: UInt64?, settings: Settings = Settings()) {
        watermark = since
        self.settings = settings
    }

    /// The `after` of the next `events` request. Before the first fetch of a subscription
    /// that starts now, a number larger than any seq, so the reply carries only `through`.
    public var fetchAfter: UInt64 { watermark ?? UInt64(Int64.max) }

    /// Whether a fetch is due at `now`: `waitingFetchInterval` after the last attempt while
    /// events wait, else `idleFetchInterval` — also before the first fetch that sets the
    /// watermark, whose first attempt is at once and whose retries (after no answer or a
    /// `wrong_shard`) are paced like the idle reconciliation, not sent every turn.
    public func isFetchDue(at now: Date) -> Bool {
        let interval = waiting.isEmpty || watermark == nil ? settings.idleFetchInterval : settings.waitingFetchInterval
        return now.timeIntervalSince(lastFetchAt) >= interval
    }

    /// Whether any event waits for the fill.
    public var hasWaitingEvents: Bool { !waiting.isEmpty }

    /// Takes a live event; returns the events to deliver now, in order (often just it).
    public mutating func onLive(_ event: FireEvent, at now: Date) -> [FireEvent] {
        take(live: .fire(event), at: now).compactMap(\.fire)
    }

    /// Takes one page of an `events` reply (its events, `through`, and whether it was cut
    /// short); returns the events to deliver now, in order.
    public mutating func onFetched(_ events: [FireEvent], through: UInt64, at now: Date) -> [FireEvent] {
        take(fetched: events, handOvers: [], through: through, at: now).compactMap(\.fire)
    }

    /// Delivers waiting events whose wait, counted from the first fetch after they
    /// arrived, exceeded ``Settings/maximumWait``, and what then follows them in order.
    public mutating func onTick(at now: Date) -> [FireEvent] {
        tick(at: now).compactMap(\.fire)
    }

    /// Takes a live event of the stream; returns the events to deliver now, in order.
    public mutating func take(live event: ShardStreamEvent, at now: Date) -> [ShardStreamEvent] {
        switch event {
        case .fire(let fire):
            guard !delivered.contains(fire.firing.firingId) else { return [] }
        case .handOver(let handOver):
            // At or below the watermark: delivered by a fetch, or settled before the start.
            if let watermark, handOver.seq <= watermark { return [] }
        }
        if let watermark, waiting.isEmpty, event.seq <= Self.next(after: watermark) {
            self.watermark = max(watermark, event.seq)
            if case .fire(let fire) = event { remember(fire.firing.firingId) }
            return [event]
        }
        enqueue(event, fetchedSince: nil)
        return drain() + releaseOverflow()
    }

    /// Takes one page of an `events` reply (its fire events, its hand-over events and
    /// `through`); returns the events to deliver now, in order.
    public mutating func take(fetched events: [FireEvent], handOvers: [HandOverEvent], through: UInt64, at now: Date) -> [ShardStreamEvent] {
        lastFetchAt = now
        guard let watermark else {
            // The first fetch of a subscription that starts now: only the watermark counts.
            self.watermark = through
            markFetched(at: now)
            return drain()
        }
        for event in events where event.seq > watermark && !delivered.contains(event.firing.firingId) {
            enqueue(.fire(event), fetchedSince: now)
        }
        for handOver in handOvers where handOver.seq > watermark {
            enqueue(.handOver(handOver), fetchedSince: now)
        }
        self.watermark = max(watermark, through)
        markFetched(at: now)
        return drain() + releaseOverflow()
    }

    /// Records a fetch that failed (the coordinator is restarting): paces the next one.
    public mutating func onFetchFailed(at now: Date) {
        lastFetchAt = now
    }

    /// Notes a catch-up the coordinator refused (`wrong_shard`: the shard no longer holds the
    /// recipient's slot, so no fill will come): paces the next attempt as a failed one, and
    /// starts ``Settings/maximumWait`` for every event waiting, as a successful fetch that did
    /// not fill their gap would, so ``tick(at:)`` delivers them then instead of holding them
    /// for a fill that cannot come.
    public mutating func onFetchRefused(at now: Date) {
        lastFetchAt = now
        for index in waiting.indices where waiting[index].fetchedSince == nil { waiting[index].fetchedSince = now }
    }

    /// ``onTick(at:)`` with hand-over events.
    public mutating func tick(at now: Date) -> [ShardStreamEvent] {
        guard let watermark, let first = waiting.first, let since = first.fetchedSince,
            now.timeIntervalSince(since) >= settings.maximumWait
        else { return [] }
        self.watermark = max(watermark, first.event.seq - 1)
        return drain()
    }

    private mutating func enqueue(_ event: ShardStreamEvent, fetchedSince: Date?) {
        switch event {
        case .fire(let fire):
            let firingId = fire.firing.firingId
            if let seq = waitingSeqs[firingId] {
                // A redelivery or a replayed copy: keep the lower seq, so order follows the
                // first attempt; the copy takes the place of that seq (and keeps the wait).
                guard event.seq < seq, let index = waitingIndex(seq: seq, firingId: firingId) else { return }
                let kept = waiting.remove(at: index)
                insert(Waiting(event: event, fetchedSince: kept.fetchedSince))
                waitingSeqs[firingId] = event.seq
                return
            }
            waitingSeqs[firingId] = event.seq
        case .handOver:
            // A live copy and a fetched one: the same seq.
            if let index = firstWaiting(atOrAfter: event.seq), waiting[index].event.seq == event.seq { return }
        }
        insert(Waiting(event: event, fetchedSince: fetchedSince))
    }

    /// Inserts `item` after every waiting event of a lower or equal seq (searched from the
    /// end: live events mostly come in order).
    private mutating func insert(_ item: Waiting) {
        var position = waiting.count
        while position > 0, waiting[position - 1].event.seq > item.event.seq { position -= 1 }
        waiting.insert(item, at: position)
    }

    /// The index of the first waiting event whose seq is `seq` or more (binary search).
    private func firstWaiting(atOrAfter seq: UInt64) -> Int? {
        var low = 0
        var high = waiting.count
        while low < high {
            let middle = low + (high - low) / 2
            if waiting[middle].event.seq < seq { low = middle + 1 } else { high = middle }
        }
        return low < waiting.count ? low : nil
    }

    /// The index of `firingId`'s waiting fire event, which waits under `seq`.
    private func waitingIndex(seq: UInt64, firingId: FiringID) -> Int? {
        guard var index = firstWaiting(atOrAfter: seq) else { return nil }
        while index < waiting.count, waiting[index].event.seq == seq {
            if waiting[index].event.fire?.firing.firingId == firingId { return index }
            index += 1
        }
        return nil
    }

    /// `seq + 1`, or `seq` at `UInt64.max` (a seq comes off the wire: no overflow trap).
    static func next(after seq: UInt64) -> UInt64 { seq == .max ? .max : seq + 1 }

    /// Past ``Settings/maximumWaiting``, delivers the oldest waiting events anyway (the
    /// watermark moves to just before the first), and what then follows them in order.
    private mutating func releaseOverflow() -> [ShardStreamEvent] {
        var ready: [ShardStreamEvent] = []
        while waiting.count > max(settings.maximumWaiting, 0), let first = waiting.first {
            let before = first.event.seq > 0 ? first.event.seq - 1 : 0
            watermark = max(watermark ?? before, before)
            ready += drain()
        }
        return ready
    }

    private mutating func markFetched(at now: Date) {
        for index in waiting.indices where waiting[index].fetchedSince == nil {
            waiting[index].fetchedSince = now
        }
    }

    /// Delivers waiting events from the front while each one's seq is at most `W + 1`.
    private mutating func drain() -> [ShardStreamEvent] {
        guard var current = watermark else { return [] }
        var ready: [ShardStreamEvent] = []
        var taken = 0
        while taken < waiting.count, waiting[taken].event.seq <= Self.next(after: current) {
            let event = waiting[taken].event
            taken += 1
            current = max(current, event.seq)
            if case .fire(let fire) = event {
                waitingSeqs[fire.firing.firingId] = nil
                if delivered.contains(fire.firing.firingId) { continue }
                remember(fire.firing.firingId)
            }
            ready.append(event)
        }
        waiting.removeFirst(taken)
        watermark = current
        return ready
    }

    private mutating func remember(_ firingId: FiringID) {
        delivered.insert(firingId)
        deliveredOrder.append(firingId)
        if deliveredOrder.count > settings.rememberedFiringIDs, let oldest = deliveredOrder.popFirst() {
            delivered.remove(oldest)
        }
    }
}

/// One item of a shard's event stream, as a gap-free subscriber delivers it: a fire event or a
/// hand-over event, both numbered by the shard's `seq`.
public enum ShardStreamEvent: Hashable, Sendable {
    /// A delivered firing.
    case fire(FireEvent)
    /// A slot move's end on this (the source) shard: no event of its slots follows here.
    case handOver(HandOverEvent)

    /// The shard's sequence number of the event.
    public var seq: UInt64 {
        switch self {
        case .fire(let event): event.seq
        case .handOver(let event): event.seq
        }
    }

    /// The fire event, if it is one.
    public var fire: FireEvent? {
        if case .fire(let event) = self { return event }
        return nil
    }
}
