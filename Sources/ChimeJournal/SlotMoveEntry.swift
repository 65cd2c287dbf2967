import ChimeCore
import ChimeWire
import Foundation

/// A durable fact of a slot move on one shard, in past tense, journaled as
/// `JournalEntry.slotMove` in the order it was decided among the coordinator's other
/// entries: the shard's move ledger (part of its durable state) is the fold of these, and
/// `released` and `committed` change the rest of the durable state. Every entry names its
/// move; one naming a move the ledger finished, or a step already taken, changes nothing, so
/// every step is idempotent.
///
/// Entries of earlier versions decode: `handedOver` and `adopted` carried a journal sequence
/// (`through`, always a constant) that is ignored, and `tailApplied` was never written.
public enum SlotMoveEntry: Hashable, Sendable {
    /// Source: the move began; the slots' slice is shipped to the target.
    case migrating(SlotMove, at: Date)
    /// Source: the slots were handed over at the cut-over instant `cut` (UTC): from here the
    /// source makes no firing for them and refuses their writes (`try_again` until it learns
    /// the outcome, then `wrong_shard`).
    case handedOver(SlotMoveID, cut: Date)
    /// Source: the move was aborted; the slots are the source's again.
    case resumed(SlotMoveID, at: Date)
    /// Source: the move committed (at map epoch `mapEpoch`): the target holds everything of the
    /// slots durably, the source's copy of them is deleted, and the source's event stream gets
    /// the hand-over event with sequence number `eventSeq` (both absent in entries of earlier
    /// versions, which publish none).
    case released(SlotMoveID, at: Date, eventSeq: UInt64? = nil, mapEpoch: UInt64? = nil)
    /// Target: the move began; incoming data is staged, neither fired nor served.
    case importing(SlotMove, at: Date)
    /// Target: the staged slice, final at the source's hand-over at the cut-over instant `cut`,
    /// is durable here. `slice`: the slice's durable state in the coordinator's snapshot
    /// encoding (decoded by the fold; a slice that does not decode leaves the move unadopted).
    case adopted(SlotMoveID, slice: Data, cut: Date)
    /// Target: the map register committed the move (map epoch `mapEpoch`): the slice joins the
    /// live state (replacing anything of the slots held here before); the target fires the
    /// slots' occurrences due from the cut on and serves them.
    case committed(SlotMoveID, mapEpoch: UInt64)
    /// Target: the move ended here after its commit; nothing of it is kept but its ending.
    case completed(SlotMoveID, at: Date)
    /// Target: the move was aborted; the staged data is dropped.
    case dropped(SlotMoveID, at: Date)

    /// The move the entry is about.
    public var moveID: SlotMoveID {
        switch self {
        case .migrating(let move, _), .importing(let move, _): move.id
        case .handedOver(let id, _), .resumed(let id, _), .released(let id, _, _, _), .adopted(let id, _, _),
            .committed(let id, _), .completed(let id, _), .dropped(let id, _):
            id
        }
    }
}

extension SlotMoveEntry: Codable {
    // The synthesized form of earlier versions (`{"handedOver": {"_0": id, "cut": …}}`), kept
    // byte for byte for the steps that did not change, so old journals read and new entries
    // look the same.
    private enum Step: String, CodingKey {
        case migrating, handedOver, resumed, released, importing, adopted, tailApplied, committed, completed, dropped
    }
    private enum Field: String, CodingKey { case _0, at, cut, through, slice, eventSeq, mapEpoch }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Step.self)
        guard container.allKeys.count == 1, let step = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: container.codingPath, debugDescription: "a slot-move step names exactly one step"))
        }
        let fields = try container.nestedContainer(keyedBy: Field.self, forKey: step)
        switch step {
        case .migrating: self = .migrating(try fields.decode(SlotMove.self, forKey: ._0), at: try fields.decode(Date.self, forKey: .at))
        case .handedOver: self = .handedOver(try fields.decode(SlotMoveID.self, forKey: ._0), cut: try fields.decode(Date.self, forKey: .cut))
        case .resumed: self = .resumed(try fields.decode(SlotMoveID.self, forKey: ._0), at: try fields.decode(Date.self, forKey: .at))
        case .released:
            self = .released(
                try fields.decode(SlotMoveID.self, forKey: ._0), at: try fields.decode(Date.self, forKey: .at),
                eventSeq: try fields.decodeIfPresent(UInt64.self, forKey: .eventSeq), mapEpoch: try fields.decodeIfPresent(UInt64.self, forKey: .mapEpoch))
        case .importing: self = .importing(try fields.decode(SlotMove.self, forKey: ._0), at: try fields.decode(Date.self, forKey: .at))
        case .adopted:
            self = .adopted(
                try fields.decode(SlotMoveID.self, forKey: ._0), slice: try fields.decode(Data.self, forKey: .slice),
                cut: try fields.decode(Date.self, forKey: .cut))
        case .committed:
            self = .committed(try fields.decode(SlotMoveID.self, forKey: ._0), mapEpoch: try fields.decode(UInt64.self, forKey: .mapEpoch))
        case .completed: self = .completed(try fields.decode(SlotMoveID.self, forKey: ._0), at: try fields.decode(Date.self, forKey: .at))
        case .dropped: self = .dropped(try fields.decode(SlotMoveID.self, forKey: ._0), at: try fields.decode(Date.self, forKey: .at))
        case .tailApplied:
            throw DecodingError.dataCorruptedError(
                forKey: step, in: container, debugDescription: "tailApplied is a step no version of Chime journaled")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Step.self)
        switch self {
        case .migrating(let move, let at):
            var fields = container.nestedContainer(keyedBy: Field.self, forKey: .migrating)
            try fields.encode(move, forKey: ._0)
            try fields.encode(at, forKey: .at)
        case .handedOver(let id, let cut):
            var fields = container.nestedContainer(keyedBy: Field.self, forKey: .handedOver)
            try fields.encode(id, forKey: ._0)
            try fields.encode(cut, forKey: .cut)
        case .resumed(let id, let at):
            var fields = container.nestedContainer(keyedBy: Field.self, forKey: .resumed)
            try fields.encode(id, forKey: ._0)
            try fields.encode(at, forKey: .at)
        case .released(let id, let at, let eventSeq, let mapEpoch):
            var fields = container.nestedContainer(keyedBy: Field.self, forKey: .released)
            try fields.encode(id, forKey: ._0)
            try fields.encode(at, forKey: .at)
            try fields.encodeIfPresent(eventSeq, forKey: .eventSeq)
            try fields.encodeIfPresent(mapEpoch, forKey: .mapEpoch)
        case .importing(let move, let at):
            var fields = container.nestedContainer(keyedBy: Field.self, forKey: .importing)
            try fields.encode(move, forKey: ._0)
            try fields.encode(at, forKey: .at)
        case .adopted(let id, let slice, let cut):
            var fields = container.nestedContainer(keyedBy: Field.self, forKey: .adopted)
            try fields.encode(id, forKey: ._0)
            try fields.encode(slice, forKey: .slice)
            try fields.encode(cut, forKey: .cut)
        case .committed(let id, let mapEpoch):
            var fields = container.nestedContainer(keyedBy: Field.self, forKey: .committed)
            try fields.encode(id, forKey: ._0)
            try fields.encode(mapEpoch, forKey: .mapEpoch)
        case .completed(let id, let at):
            var fields = container.nestedContainer(keyedBy: Field.self, forKey: .completed)
            try fields.encode(id, forKey: ._0)
            try fields.encode(at, forKey: .at)
        case .dropped(let id, let at):
            var fields = container.nestedContainer(keyedBy: Field.self, forKey: .dropped)
            try fields.encode(id, forKey: ._0)
            try fields.encode(at, forKey: .at)
        }
    }
}
