import ChimeCore
import Foundation

extension Topic {
    /// `handover`: a slot move committed and the source released its slots (published by the
    /// source shard, whose stream carries no event of those slots after it).
    public static let handOver = "handover"
}

/// The end of a set of slots' events on one shard's stream: a slot move committed, and the
/// source shard released the slots to the target. Published on topic `handover` by the
/// source, with a `seq` of the source's stream (the same count as its fire events), kept for
/// `events` catch-up (`handOvers` in the reply) and re-served after a restart.
///
/// Every event of those slots the source published has a lower `seq` (it made no firing of
/// them from the hand-over on, and all it made were settled before the release); every later
/// one is on the target's stream, whose own `seq` count a gap-free subscriber of every shard
/// already follows. `mapEpoch` is the map epoch of the commit: a subscriber whose map is older
/// (it lacks the target) reads the map again and subscribes the target from `seq` 0.
///
/// JSON shape: `{"type": "handover", "seq": 812, "shard": 0, "move": "m-…", "slots": [[0, 63]],
/// "target": 2, "mapEpoch": 3, "at": "…Z"}` (instants RFC 3339 UTC with milliseconds).
public struct HandOverEvent: Codable, Hashable, Sendable {
    /// The source's sequence number of this event (its stream's count, shared with fire events).
    public var seq: UInt64
    /// The source shard, which published it.
    public var shard: Int
    /// The move's id (`SlotMoveID`'s text).
    public var move: String
    /// The slots handed over, as inclusive ranges in order.
    public var slots: [ShardMap.SlotRange]
    /// The shard whose stream carries the slots' events from here on.
    public var target: Int
    /// The map epoch the move committed at (the first map naming the target for the slots).
    public var mapEpoch: UInt64
    /// When the source released the slots (UTC).
    public var at: Date

    /// Creates the value from its fields (see each property for meaning and units).
    public init(seq: UInt64, shard: Int, move: String, slots: [ShardMap.SlotRange], target: Int, mapEpoch: UInt64, at: Date) {
        self.seq = seq
        self.shard = shard
        self.move = move
        self.slots = slots
        self.target = target
        self.mapEpoch = mapEpoch
        self.at = at
    }

    /// The inclusive ranges of `slots`: its maximal runs, in order.
    public static func ranges(of slots: some Sequence<Int>) -> [ShardMap.SlotRange] {
        var ranges: [ShardMap.SlotRange] = []
        for slot in slots.sorted() {
            if let last = ranges.last, slot <= last.last || slot - 1 == last.last {
                ranges[ranges.count - 1].last = max(last.last, slot)
            } else {
                ranges.append(ShardMap.SlotRange(slot, slot))
            }
        }
        return ranges
    }

    /// Whether `slot` is one of the slots handed over.
    public func covers(slot: Int) -> Bool { slots.contains { $0.first <= slot && slot <= $0.last } }

    private enum CodingKeys: String, CodingKey {
        case type, seq, shard, move, slots, target, mapEpoch, at
    }

    /// Decodes the JSON shape above.
    /// - Throws: `DecodingError` when a field is missing or of the wrong type, `type` is not
    ///   `"handover"`, a shard is negative, or a range is empty or negative.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard try container.decode(String.self, forKey: .type) == "handover" else {
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "a hand-over event has type \"handover\"")
        }
        seq = try container.decode(UInt64.self, forKey: .seq)
        shard = try container.decode(Int.self, forKey: .shard)
        move = try container.decode(String.self, forKey: .move)
        slots = try container.decode([ShardMap.SlotRange].self, forKey: .slots)
        target = try container.decode(Int.self, forKey: .target)
        mapEpoch = try container.decode(UInt64.self, forKey: .mapEpoch)
        at = try container.decode(Date.self, forKey: .at)
        guard shard >= 0, target >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .shard, in: container, debugDescription: "shard ids are not negative")
        }
        guard slots.allSatisfy({ $0.first >= 0 && $0.first <= $0.last }) else {
            throw DecodingError.dataCorruptedError(forKey: .slots, in: container, debugDescription: "a slot range is [first, last] with 0 <= first <= last")
        }
    }

    /// Encodes the JSON shape above.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("handover", forKey: .type)
        try container.encode(seq, forKey: .seq)
        try container.encode(shard, forKey: .shard)
        try container.encode(move, forKey: .move)
        try container.encode(slots, forKey: .slots)
        try container.encode(target, forKey: .target)
        try container.encode(mapEpoch, forKey: .mapEpoch)
        try container.encode(at, forKey: .at)
    }
}
