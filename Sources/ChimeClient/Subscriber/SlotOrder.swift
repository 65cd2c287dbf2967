import ChimeCore
import ChimeWire
import Foundation

/// Per slot, a cluster subscriber's order across slot moves: a slot's events from the shard
/// it moved to are delivered after the hand-over event that ends them on the shard it left,
/// so a subscriber sees the slot's events in order even though the two shards' streams
/// arrive independently (each already in its own `seq` order, ``GapFiller``). Pure: the
/// caller passes time in.
///
/// Each slot has a current stream: its owner in the subscriber's map, then the `target` of
/// each hand-over of it. An event of a slot from another shard is held: it is either a later
/// owner's (its hand-over is still on the way: released just after the hand-over) or an
/// earlier owner's replayed history (released just before the hand-over that ends it). An
/// event held longer than ``maximumHold`` (the subscription began after the hand-over, or
/// its source is not followed) is delivered anyway, and its shard becomes the slot's stream.
public struct SlotOrder: Sendable {
    /// What to pass on, in order.
    public enum Delivery: Sendable, Equatable {
        /// A fire event with its JSON and the shard it came from.
        case fire(FireEvent, Data, shard: Int)
        /// A hand-over event with its JSON.
        case handOver(HandOverEvent, Data)
    }

    struct Held: Sendable {
        var event: FireEvent
        var raw: Data
        var shard: Int
        var slot: Int
        var since: Date
    }

    let map: ShardMap
    /// Seconds an event waits for its hand-over at most.
    public let maximumHold: Double
    /// Each slot's current stream (its shard id), -1 when no shard owns it.
    private var streams: [Int]
    private var held: [Held] = []

    /// An order starting from `map`'s owners.
    public init(map: ShardMap, maximumHold: Double = 5) {
        self.map = map
        self.maximumHold = maximumHold
        var streams = [Int](repeating: -1, count: max(0, map.slotCount))
        for shard in map.shards {
            for range in shard.slots where range.first >= 0 && range.first <= range.last && range.last < streams.count {
                for slot in range.first...range.last { streams[slot] = shard.id }
            }
        }
        self.streams = streams
    }

    /// Whether any event is held.
    public var hasHeldEvents: Bool { !held.isEmpty }

    /// Takes a fire event that `shard`'s stream delivered; returns what to deliver now.
    public mutating func onFire(_ event: FireEvent, raw: Data, from shard: Int, at now: Date) -> [Delivery] {
        let slot = map.slot(of: event.firing.recipient)
        guard slot < streams.count, streams[slot] >= 0, streams[slot] != shard else { return [.fire(event, raw, shard: shard)] }
        held.append(Held(event: event, raw: raw, shard: shard, slot: slot, since: now))
        return []
    }

    /// Takes a hand-over event; returns what to deliver now: the source's held events of
    /// its slots, it, then the target's held events of them.
    public mutating func onHandOver(_ event: HandOverEvent, raw: Data) -> [Delivery] {
        var ready = release { event.covers(slot: $0.slot) && $0.shard == event.shard }
        ready.append(.handOver(event, raw))
        for range in event.slots {
            let first = max(0, range.first)
            let last = min(range.last, streams.count - 1)
            guard first <= last else { continue }
            for slot in first...last { streams[slot] = event.target }
        }
        ready += release { event.covers(slot: $0.slot) && $0.shard == event.target }
        return ready
    }

    /// Delivers the events held longer than ``maximumHold``, each with every later event of
    /// its slot and shard (that shard becomes the slot's stream).
    public mutating func onTick(at now: Date) -> [Delivery] {
        var ready: [Delivery] = []
        while let first = held.first, now.timeIntervalSince(first.since) >= maximumHold {
            streams[first.slot] = first.shard
            ready += release { $0.slot == first.slot && $0.shard == first.shard }
        }
        return ready
    }

    /// Removes the held events `isReleased` accepts and returns them, in arrival order.
    private mutating func release(where isReleased: (Held) -> Bool) -> [Delivery] {
        guard !held.isEmpty else { return [] }
        var ready: [Delivery] = []
        var kept: [Held] = []
        for item in held {
            if isReleased(item) { ready.append(.fire(item.event, item.raw, shard: item.shard)) } else { kept.append(item) }
        }
        held = kept
        return ready
    }
}
