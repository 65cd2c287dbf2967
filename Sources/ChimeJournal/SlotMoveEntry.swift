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
}

/// One move of a set of slots from a source shard to a target shard: what the map register
/// records while it is open and both shards' ledgers record while they take part. (Its
/// protocol is described in ChimeCoordinator, beside `SlotMove.covers(_:)`.)
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

    /// "move m1 of slots [3, 4] from shard 0 to shard 2".
    public var description: String {
        "move \(id) of slots \(slots.sorted()) from shard \(source) to shard \(target)"
    }
}

/// A durable fact of a slot move on one shard, in past tense, journaled as
/// `JournalEntry.slotMove` in the order it was decided among the coordinator's other
/// entries: the shard's move ledger (part of its durable state) is the fold of these, and
/// `released`, `committed` and the tail change the rest of the durable state. Every entry
/// names its move; one naming a move the ledger finished, or a step already taken, changes
/// nothing, so every step is idempotent.
public enum SlotMoveEntry: Hashable, Codable, Sendable {
    /// Source: the move began; the slots' slice and later entries are shipped to the target.
    case migrating(SlotMove, at: Date)
    /// Source: the slots were handed over at the cut-over instant `cut` (UTC) with every
    /// journal entry through sequence `through`: from here the source makes no firing for
    /// them and refuses their writes (`try_again` until it learns the outcome, then
    /// `wrong_shard`).
    case handedOver(SlotMoveID, cut: Date, through: UInt64)
    /// Source: the move was aborted; the slots are the source's again.
    case resumed(SlotMoveID, at: Date)
    /// Source: the move committed (at map epoch `mapEpoch`) and the target holds everything
    /// of the slots: the source's copy of them is deleted, and the source's event stream gets
    /// the hand-over event with sequence number `eventSeq` (both absent in entries of earlier
    /// versions, which publish none).
    case released(SlotMoveID, at: Date, eventSeq: UInt64? = nil, mapEpoch: UInt64? = nil)
    /// Target: the move began; incoming data is staged, neither fired nor served.
    case importing(SlotMove, at: Date)
    /// Target: the staged slice, complete through the source's hand-over (`through`, the
    /// source's sequence it reflects) and the cut-over instant, is durable here. `slice`: the
    /// slice's durable state in the coordinator's snapshot encoding (decoded by the fold; a
    /// slice that does not decode leaves the move unadopted).
    case adopted(SlotMoveID, slice: Data, through: UInt64, cut: Date)
    /// Target: entries the source journaled about the slots after the slice (acknowledgements
    /// of firings it dispatched before the cut, ...), through its sequence `through`, folded
    /// into the adopted slice (before the commit) or the live state (after it).
    case tailApplied(SlotMoveID, [JournalEntry], through: UInt64)
    /// Target: the map register committed the move (map epoch `mapEpoch`): the slice joins the
    /// live state; the target fires the slots' occurrences due from the cut on and serves them.
    case committed(SlotMoveID, mapEpoch: UInt64)
    /// Target: the source released the slots; nothing of them is held for it any more.
    case completed(SlotMoveID, at: Date)
    /// Target: the move was aborted; the staged data is dropped.
    case dropped(SlotMoveID, at: Date)

    /// The move the entry is about.
    public var moveID: SlotMoveID {
        switch self {
        case .migrating(let move, _), .importing(let move, _): move.id
        case .handedOver(let id, _, _), .resumed(let id, _), .released(let id, _, _, _), .adopted(let id, _, _, _),
            .tailApplied(let id, _, _), .committed(let id, _), .completed(let id, _), .dropped(let id, _):
            id
        }
    }
}
