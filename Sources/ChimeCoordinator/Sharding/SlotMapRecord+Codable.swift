import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// The JSON form of a ``SlotMapRecord`` (the map register file's content):
/// `{"format": 1, "version": 7, "map": {…the map reply's shape…}, "open": [{"id": "m1",
/// "slots": [3, 4], "source": 0, "target": 2, "slotCount": 4096}], "outcomes": [{"move":
/// "m0", "committed": true, "mapEpoch": 2}, {"move": "m9", "committed": false}]}`.
/// Decoding is total: any bytes either decode to a record that passes ``SlotMapRecord/validate()``
/// or throw `WireError(.invalidArgument)`.
extension SlotMapRecord: Codable {
    /// The format this code writes and reads.
    public static let format = 1

    private enum CodingKeys: String, CodingKey { case format, version, map, open, outcomes }

    private struct OutcomeRecord: Codable {
        var move: SlotMoveID
        var committed: Bool
        var mapEpoch: UInt64?
    }

    /// Encodes the record (moves and outcomes in id order).
    /// - Throws: the encoder's errors only.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.format, forKey: .format)
        try container.encode(version, forKey: .version)
        try container.encode(map, forKey: .map)
        try container.encode(open.values.sorted { $0.id < $1.id }, forKey: .open)
        let outcomes = self.outcomes.sorted { $0.key < $1.key }.map { id, outcome in
            switch outcome {
            case .committed(let mapEpoch): OutcomeRecord(move: id, committed: true, mapEpoch: mapEpoch)
            case .aborted: OutcomeRecord(move: id, committed: false, mapEpoch: nil)
            }
        }
        try container.encode(outcomes, forKey: .outcomes)
    }

    /// Decodes a record of format 1 and checks it (``validate()``).
    /// - Throws: `DecodingError`, or `WireError(.invalidArgument)` for a record that breaks a rule.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let format = try container.decode(Int.self, forKey: .format)
        guard format == Self.format else {
            throw WireError(.invalidArgument, "map register format \(format) is not this version's \(Self.format)", field: "format")
        }
        self.init(map: try container.decode(ShardMap.self, forKey: .map))
        version = try container.decode(UInt64.self, forKey: .version)
        for move in try container.decode([SlotMove].self, forKey: .open) {
            guard open.updateValue(move, forKey: move.id) == nil else {
                throw WireError(.invalidArgument, "move \(move.id) is open twice", field: "open")
            }
        }
        for record in try container.decode([OutcomeRecord].self, forKey: .outcomes) {
            let outcome: SlotMoveOutcome
            if record.committed {
                guard let mapEpoch = record.mapEpoch else {
                    throw WireError(.invalidArgument, "committed move \(record.move) names no mapEpoch", field: "outcomes")
                }
                outcome = .committed(mapEpoch: mapEpoch)
            } else {
                outcome = .aborted
            }
            guard outcomes.updateValue(outcome, forKey: record.move) == nil else {
                throw WireError(.invalidArgument, "move \(record.move) has two outcomes", field: "outcomes")
            }
        }
        try validate()
    }

    /// Checks the record's rules: version 1 or more, a valid map, each open move of at least
    /// one slot within the map's slot count, between two distinct shards of the map, owned by
    /// its source, in no other open move, and without an outcome.
    /// - Throws: `WireError(.invalidArgument)` naming the first broken rule.
    public func validate() throws(WireError) {
        guard version >= 1 else { throw WireError(.invalidArgument, "the register's version is 0", field: "version") }
        try map.validate()
        var taken = Set<Int>()
        for move in open.values.sorted(by: { $0.id < $1.id }) {
            guard !move.slots.isEmpty, move.slotCount == map.slotCount, move.source != move.target,
                map.shard(id: move.source) != nil, map.shard(id: move.target) != nil,
                move.slots.allSatisfy({ (0..<map.slotCount).contains($0) && map.ownerID(ofSlot: $0) == move.source })
            else {
                throw WireError(.invalidArgument, "open \(move) does not fit the map (epoch \(map.mapEpoch))", field: "open")
            }
            guard taken.isDisjoint(with: move.slots), outcomes[move.id] == nil else {
                throw WireError(.invalidArgument, "open \(move) overlaps another move or was decided", field: "open")
            }
            taken.formUnion(move.slots)
        }
    }
}
