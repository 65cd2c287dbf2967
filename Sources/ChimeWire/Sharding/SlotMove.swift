import ChimeCore
import Foundation

/// The id of one slot move: chosen by the mover that proposes it, unique in the cluster's
/// history (the map register remembers every outcome by it), so each step of the move is
/// keyed by it and a repeated step is recognised and changes nothing.
public struct SlotMoveID: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The id's text.
    public var rawValue: String
    /// Creates the value from its text.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates the value from its text.
    public init(_ text: String) { rawValue = text }
    /// The id's text.
    public var description: String { rawValue }
    /// Ordered by text.
    public static func < (lhs: SlotMoveID, rhs: SlotMoveID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// The longest id a `move` request may carry, in UTF-8 bytes.
    public static let maximumLength = 256
}

/// One move of a set of slots from a source shard to a target shard: what the map register
/// records while it is open, both shards' ledgers record while they take part, and a `move`
/// request's `begin` step carries. (Its protocol is described in ChimeCoordinator, beside
/// `SlotMove.covers(_:)`.)
///
/// JSON shape: `{"id": "m1", "slots": [3, 4], "source": 0, "target": 2, "slotCount": 4096}`,
/// `slots` in ascending order.
public struct SlotMove: Hashable, Codable, Sendable, CustomStringConvertible {
    /// The move's id.
    public var id: SlotMoveID
    /// The slots that move.
    public var slots: Set<Int>
    /// The shard that owns them before the move.
    public var source: Int
    /// The shard that owns them after it.
    public var target: Int
    /// The cluster's slot count (fixed at its creation), which a recipient's slot is taken
    /// modulo.
    public var slotCount: Int

    /// Creates the value from its fields (see each property for meaning).
    public init(id: SlotMoveID, slots: Set<Int>, source: Int, target: Int, slotCount: Int) {
        self.id = id
        self.slots = slots
        self.source = source
        self.target = target
        self.slotCount = slotCount
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case id, slots, source, target, slotCount }

    /// Encodes the slots in ascending order, so one move always has one JSON text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(slots.sorted(), forKey: .slots)
        try container.encode(source, forKey: .source)
        try container.encode(target, forKey: .target)
        try container.encode(slotCount, forKey: .slotCount)
    }

    /// "move m1 of slots [3, 4] from shard 0 to shard 2".
    public var description: String {
        "move \(id) of slots \(slots.sorted()) from shard \(source) to shard \(target)"
    }

    /// A move as a request carries it, checked: no key but the five, an id of 1 to
    /// ``SlotMoveID/maximumLength`` bytes, a slot count of 1 to `ShardMap.maximumSlotCount`,
    /// at least one slot, each below the slot count, and two different shards (ids ≥ 0).
    /// - Parameter field: the path of the move in the request (`move`).
    /// - Throws: `DecodingError` for a key the move does not take or a value of the wrong
    ///   type; `WireError(.invalidArgument)` naming the field at fault otherwise.
    static func decodeChecked(from decoder: any Decoder, field: String) throws -> SlotMove {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(SlotMoveID.self, forKey: .id)
        let slots = try container.decodeNumber([Int].self, forKey: .slots, expected: "an array of slot numbers")
        let source = try container.decodeNumber(Int.self, forKey: .source, expected: "a shard id")
        let target = try container.decodeNumber(Int.self, forKey: .target, expected: "a shard id")
        let slotCount = try container.decodeNumber(Int.self, forKey: .slotCount, expected: "a whole number")
        guard !id.rawValue.isEmpty, id.rawValue.utf8.count <= SlotMoveID.maximumLength else {
            throw WireError(.invalidArgument, "a move's id must be 1 to \(SlotMoveID.maximumLength) bytes", field: "\(field).id")
        }
        guard (1...ShardMap.maximumSlotCount).contains(slotCount) else {
            throw WireError(
                .invalidArgument, "slotCount must be between 1 and \(ShardMap.maximumSlotCount), not \(slotCount)", field: "\(field).slotCount")
        }
        guard !slots.isEmpty else { throw WireError(.invalidArgument, "a move needs at least one slot", field: "\(field).slots") }
        if let outside = slots.first(where: { !(0..<slotCount).contains($0) }) {
            throw WireError(.invalidArgument, "slot \(outside) is not within 0…\(slotCount - 1)", field: "\(field).slots")
        }
        guard source >= 0, target >= 0, source != target else {
            throw WireError(
                .invalidArgument, "a move needs two different shards (ids ≥ 0), not \(source) and \(target)", field: "\(field).target")
        }
        return SlotMove(id: id, slots: Set(slots), source: source, target: target, slotCount: slotCount)
    }
}
