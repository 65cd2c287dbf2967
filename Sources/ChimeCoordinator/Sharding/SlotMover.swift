import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// What a mover does next for one move: the mover's side (a register write, or which step to
/// ask of which shard), beside `SlotMoveStep`, the step a shard carries out when asked.
public enum SlotMoverAction: Equatable, Sendable {
    /// Open the move in the map register (compare-and-swap on the version read).
    case open(SlotMove)
    /// Ask the source to journal `migrating`.
    case startSource(SlotMove)
    /// Ask the target to journal `importing`.
    case startTarget(SlotMove)
    /// Ask the source to refuse the slots' writes until `until` (UTC) and hand over.
    case pauseSource(SlotMoveID, until: Date)
    /// The source handed over: carry its final slice (once it can cut it) to the target.
    case ship(SlotMoveID)
    /// Commit the move in the register (compare-and-swap on the version read).
    case commit(SlotMoveID)
    /// Abort the move in the register (compare-and-swap on the version read).
    case abort(SlotMoveID)
    /// Nothing to do until a shard answers.
    case wait
    /// The register decided the move; the shards follow the outcome by themselves.
    case finished(SlotMoveOutcome)
    /// The move cannot open: a slot is in another open move or not the source's, or its id
    /// was used.
    case refused
}

extension SlotMoverAction {
    /// A short human label for progress lines ("opening", "shipping", "committed (map epoch 3)").
    public var label: String {
        switch self {
        case .open: "opening"
        case .startSource: "starting the source"
        case .startTarget: "starting the target"
        case .pauseSource: "pausing the source"
        case .ship: "shipping"
        case .commit: "committing"
        case .abort: "aborting"
        case .wait: "waiting for the shards"
        case .finished(.committed(let mapEpoch)): "committed (map epoch \(mapEpoch))"
        case .finished(.aborted): "aborted"
        case .refused: "refused"
        }
    }
}

/// The mover: a reconciler (a Kubernetes controller's loop) that compares the map register's
/// record with what the two shards report and returns the one step that moves the move on.
/// It keeps nothing of its own, so a mover that crashed, or a second one, continues from the
/// same reads; two movers acting on one record race only in the register, where one
/// compare-and-swap wins.
public enum SlotMover {
    /// The mover's next action for `move`.
    /// - Parameters:
    ///   - record: the register's record as just read.
    ///   - source: the source's ledger (`nil`: it did not answer).
    ///   - target: the target's ledger (`nil`: it did not answer). Shards answer a mover only
    ///     with durable facts, so a target that shows the move adopted holds the slice durably.
    ///     The move commits once the target adopted and the source shows the hand-over; it is
    ///     aborted when the source answers without it, or at the deadline.
    ///   - now: the mover's clock (UTC).
    ///   - deadline: when a move not yet adopted by its target is aborted instead.
    ///   - pause: how long the source refuses the slots' writes while it hands over, in seconds.
    public static func nextAction(
        for move: SlotMove, record: SlotMapRecord, source: SlotMoveLedger?, target: SlotMoveLedger?,
        at now: Date, deadline: Date, pause: TimeInterval
    ) -> SlotMoverAction {
        if let outcome = record.outcomes[move.id] { return .finished(outcome) }
        guard record.open[move.id] != nil else { return record.opening(move) == nil ? .refused : .open(move) }
        // Adopted by the target: the slots are complete and durable there. Committed only while
        // the source still holds the hand-over that slice was cut at: a source that answers
        // without it lost its journal's end (an older copy of its store was restored) and may
        // have taken writes since, which the slice lacks.
        if target?.incoming[move.id]?.isAdopted == true {
            if source?.outgoing[move.id]?.isHandedOver == true { return .commit(move.id) }
            if source != nil || now >= deadline { return .abort(move.id) }
            return .wait
        }
        if now >= deadline { return .abort(move.id) }
        guard let source, let target else { return .wait }
        if source.outgoing[move.id] == nil { return .startSource(move) }
        if target.incoming[move.id] == nil { return .startTarget(move) }
        if source.outgoing[move.id]?.isHandedOver == false { return .pauseSource(move.id, until: now.addingTimeInterval(pause)) }
        return .ship(move.id)
    }
}
