import ChimeCore
import ChimeJournal
import ChimeWire
import ChimeStore
import Foundation

/// The source's decisions in a slot move: pure functions of its ledger, its durable state
/// and the map register's record, returning the entry to journal (or the shipment to send).
/// The coordinator's loop calls them; nothing here reads a clock or a socket.
public enum SlotMoveSource {
    /// `migrating` for `move` when this shard is its source and the register has it open
    /// (not when it was decided already, or this shard ended it); `nil` otherwise.
    public static func start(_ move: SlotMove, shard: Int, ledger: SlotMoveLedger, record: SlotMapRecord, at now: Date)
        -> SlotMoveEntry?
    {
        guard move.source == shard, record.open[move.id] == move, ledger.outgoing[move.id] == nil,
            ledger.ended[move.id] == nil
        else { return nil }
        return .migrating(move, at: now)
    }

    /// What the register's outcome asks of an outgoing move: `resumed` once it was aborted;
    /// `released` once it committed (with `eventSeq`, the next `seq` of this shard's event
    /// stream, and the commit's map epoch, for the hand-over event).
    ///
    /// A commit means the target made the final slice durable before the register changed,
    /// so the source's copy is released at once, whatever this shard's ledger says of the
    /// hand-over: a source restarted from a journal that lost its `handedOver` (or more) still
    /// holds an older copy of the slots, which must never fire, list or come back. Nothing of
    /// the slots is unsettled here after a hand-over that shipped (the final slice is cut
    /// only when none is); what such a restarted source re-derived as unsettled was settled
    /// in the slice the target holds, and is released with the rest.
    public static func follow(_ move: SlotMoveLedger.Outgoing, record: SlotMapRecord, eventSeq: UInt64, at now: Date) -> SlotMoveEntry? {
        switch record.outcomes[move.move.id] {
        case .aborted?: .resumed(move.move.id, at: now)
        case .committed(let mapEpoch)?: .released(move.move.id, at: now, eventSeq: eventSeq, mapEpoch: mapEpoch)
        case nil: nil
        }
    }

    /// The hand-over, when the slots' writes are paused and nothing of them is armed before
    /// `now` (the loop fired what was due first): the cut-over instant is `now`. `nil` when
    /// not paused, already handed over, or an occurrence of the slots due before `now` is
    /// still to be fired.
    public static func handOver(_ move: SlotMoveLedger.Outgoing, state: DurableState, isPaused: Bool, at now: Date) -> SlotMoveEntry? {
        guard isPaused, !move.isHandedOver else { return nil }
        for (key, deadline) in state.schedule.timer.deadlines where deadline < now && move.move.covers(key.recipient) {
            return nil
        }
        return .handedOver(move.move.id, cut: now)
    }

    /// Whether the slots' final slice can be cut now: handed over, and no firing of the
    /// slots unsettled here (a firing dispatched before the cut settles on this shard first,
    /// so the slice the target adopts is final and nothing about the slots happens here
    /// afterwards).
    public static func canShip(_ move: SlotMoveLedger.Outgoing, state: DurableState) -> Bool {
        move.isHandedOver && !state.deliveries.unsettled.keys.contains { move.move.covers($0.recipient) }
    }

    /// The final shipment: the slots' slice of `state` with the cut, once ``canShip(_:state:)``;
    /// `nil` before.
    public static func shipment(for move: SlotMoveLedger.Outgoing, state: DurableState) -> SlotMoveShipment? {
        guard canShip(move, state: state), let cut = move.cut else { return nil }
        return SlotMoveShipment(moveID: move.move.id, slice: state.slice(where: move.move.covers), cut: cut)
    }
}
