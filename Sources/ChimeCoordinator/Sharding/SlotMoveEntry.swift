import ChimeCore
import ChimeJournal
import ChimeStore
import Foundation

/// A durable fact of a slot move on one shard, in past tense: the shard's
/// ``SlotMoveLedger`` is the fold of these (with the durable state, which `released`,
/// `committed` and the tail change). Every entry names its move; one naming a move the
/// ledger finished, or a step already taken, changes nothing, so every step is idempotent.
///
/// Journaled beside the coordinator's `JournalEntry` values (one journal case carrying a
/// `SlotMoveEntry` when the coordinator is wired to moves), in the same order, so a
/// recovery folds both in the order they were decided.
public enum SlotMoveEntry: Equatable, Sendable {
    /// Source: the move began; the slots' slice and later entries are shipped to the target.
    case migrating(SlotMove, at: Date)
    /// Source: the slots were handed over at the cut-over instant `cut` (UTC) with every
    /// journal entry through sequence `through`: from here the source makes no firing for
    /// them and refuses their writes (`try_again` until it learns the outcome, then
    /// `wrong_shard`).
    case handedOver(SlotMoveID, cut: Date, through: UInt64)
    /// Source: the move was aborted; the slots are the source's again.
    case resumed(SlotMoveID, at: Date)
    /// Source: the move committed and the target holds everything of the slots: the
    /// source's copy of them is deleted.
    case released(SlotMoveID, at: Date)
    /// Target: the move began; incoming data is staged, neither fired nor served.
    case importing(SlotMove, at: Date)
    /// Target: the staged slice, complete through the source's hand-over (`through`, the
    /// source's sequence it reflects) and the cut-over instant, is durable here.
    case adopted(SlotMoveID, slice: DurableState, through: UInt64, cut: Date)
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
        case .handedOver(let id, _, _), .resumed(let id, _), .released(let id, _), .adopted(let id, _, _, _),
            .tailApplied(let id, _, _), .committed(let id, _), .completed(let id, _), .dropped(let id, _):
            id
        }
    }
}
