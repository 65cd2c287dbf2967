import ChimeCore
import ChimeJournal
import ChimeWire
import ChimeStore
import Foundation

/// The target's decisions in a slot move: pure functions of its ledger, the shipment it
/// receives and the map register's record, returning the entries to journal.
public enum SlotMoveTarget {
    /// `importing` for `move` when this shard is its target and the register has it open;
    /// `nil` otherwise.
    public static func start(_ move: SlotMove, shard: Int, ledger: SlotMoveLedger, record: SlotMapRecord, at now: Date)
        -> SlotMoveEntry?
    {
        guard move.target == shard, record.open[move.id] == move, ledger.incoming[move.id] == nil,
            ledger.ended[move.id] == nil
        else { return nil }
        return .importing(move, at: now)
    }

    /// The move this shard still sends of any of `move`'s slots (it has not released them
    /// yet: it releases when it reads the commit): this shard cannot receive them back
    /// before, or its old copy would meet the new one.
    public static func blockingMove(for move: SlotMove, ledger: SlotMoveLedger) -> SlotMove? {
        ledger.outgoing.values.first { !$0.move.slots.isDisjoint(with: move.slots) }?.move
    }

    /// Takes the final shipment: `adopted` with its slice when the move is in progress here
    /// and not adopted yet; `nil` otherwise (a repeated shipment, or a move that ended or
    /// never started here).
    public static func receive(_ shipment: SlotMoveShipment, ledger: SlotMoveLedger) -> SlotMoveEntry? {
        guard let move = ledger.incoming[shipment.moveID], !move.isAdopted else { return nil }
        return .adopted(move.move.id, slice: shipment.slice.encodedSnapshot(takenAt: nil), cut: shipment.cut)
    }

    /// What the register's outcome asks of an incoming move: `committed` and `completed` once
    /// it committed (the slice was adopted: a commit needs it), `dropped` once it was aborted.
    ///
    /// A commit of a move this shard never adopted means its adopted slice is gone (a journal
    /// cut short by `store repair`, or a disk that lied about an fsync): the move is dropped
    /// here too, so the slots are served (empty) by the map's owner instead of refused back
    /// and forth; the caller reports the loss.
    public static func follow(_ move: SlotMoveLedger.Incoming, record: SlotMapRecord, at now: Date) -> [SlotMoveEntry] {
        switch record.outcomes[move.move.id] {
        case .committed(let mapEpoch)?:
            guard move.isAdopted else { return [.dropped(move.move.id, at: now)] }
            return move.isCommitted ? [.completed(move.move.id, at: now)]
                : [.committed(move.move.id, mapEpoch: mapEpoch), .completed(move.move.id, at: now)]
        case .aborted?: return [.dropped(move.move.id, at: now)]
        case nil: return []
        }
    }
}
