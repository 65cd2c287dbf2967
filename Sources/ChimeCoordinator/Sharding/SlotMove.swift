import ChimeCore
import ChimeWire
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
/// records while it is open and both shards' ledgers record while they take part.
///
/// The protocol (Redis/Valkey atomic slot migration as the model; the map register as the
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

    /// Whether `recipient`'s slot is one of the move's.
    public func covers(_ recipient: RecipientID) -> Bool {
        slots.contains(ShardMap.slot(of: recipient, slotCount: slotCount))
    }

    /// "move m1 of slots [3, 4] from shard 0 to shard 2".
    public var description: String {
        "move \(id) of slots \(slots.sorted()) from shard \(source) to shard \(target)"
    }
}

/// What became of a move, as the map register records it once and for all.
public enum SlotMoveOutcome: Hashable, Codable, Sendable {
    /// The slots moved; the map's epoch became `mapEpoch`.
    case committed(mapEpoch: UInt64)
    /// The move was undone before the map changed: the source keeps the slots.
    case aborted
}
