import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// The slot move protocol (Redis/Valkey atomic slot migration as the model; the map register as the
/// one commit point, as a Kubernetes ConfigMap updated with its `resourceVersion`):
/// 1. the mover opens the move in the register (compare-and-swap: one move per slot);
/// 2. the source journals `migrating`, the target `importing`;
/// 3. the source ships the slots' slice of its durable state at a journal sequence S0
///    (`DurableState.split(where:)`), then the slots' later entries; the target folds them
///    into a staging copy it neither fires nor serves;
/// 4. when the lag is small the mover pauses the slots' writes on the source (`try_again`
///    with a retry-after); the source fires what is due, journals the hand-over with the
///    **cut-over instant** (its clock then: nothing of the slots is armed before it), and
///    ships the rest; it makes no firing for the slots from then on;
/// 5. the target journals `adopted` with the staged slice (durable from here);
/// 6. the mover commits: one compare-and-swap moves the slots in the map and raises its
///    epoch (or another mover's abort won, and the move is undone everywhere);
/// 7. the target journals `committed` (merges the slice: it fires the occurrences due from
///    the cut on and serves the slots); the source answers `wrong_shard`, still settles the
///    firings it dispatched before the cut and ships those facts (the tail); once the target
///    confirms the whole tail and nothing of the slots is unsettled, the source journals
///    `released` (its copy is deleted) and the target `completed`.
/// A crash anywhere before step 6 lets the move be aborted (the target drops its staging,
/// the source resumes the slots) or resumed; after step 6 every step only moves forward.
extension SlotMove {
    /// Whether `recipient`'s slot is one of the move's.
    public func covers(_ recipient: RecipientID) -> Bool {
        slots.contains(ShardMap.slot(of: recipient, slotCount: slotCount))
    }
}

/// What became of a move, as the map register records it once and for all.
public enum SlotMoveOutcome: Hashable, Codable, Sendable {
    /// The slots moved; the map's epoch became `mapEpoch`.
    case committed(mapEpoch: UInt64)
    /// The move was undone before the map changed: the source keeps the slots.
    case aborted
}
