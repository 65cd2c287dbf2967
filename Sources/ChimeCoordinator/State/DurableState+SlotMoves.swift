import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// The fold of `JournalEntry.slotMove`: part of ``DurableState/apply(_:hints:)``, so the move
/// ledger and the data a move hands over change in one function, live and in recovery alike.
extension DurableState {
    /// Folds one slot-move step into ``moves`` and, where the move hands data over, into the
    /// rest of the state: `released` splits the slots off (and keeps its hand-over event for
    /// catch-up, its seq counted as reserved), `committed` replaces whatever of the slots this
    /// state held (a stale copy: a shard that gave the slots away and lost its release) with
    /// the adopted slice. A step naming a move that ended here, or one already taken, changes
    /// nothing. An `adopted` slice that does not decode (a damaged entry) leaves the move
    /// unadopted, so it can only be aborted.
    mutating func applySlotMove(_ entry: SlotMoveEntry) {
        guard moves.ended[entry.moveID] == nil else { return }
        switch entry {
        case .migrating(let move, _):
            if moves.outgoing[move.id] == nil { moves.outgoing[move.id] = SlotMoveLedger.Outgoing(move: move) }
        case .handedOver(let id, let cut):
            guard var move = moves.outgoing[id], !move.isHandedOver else { return }
            move.cut = cut
            moves.outgoing[id] = move
        case .resumed(let id, _):
            guard moves.outgoing.removeValue(forKey: id) != nil else { return }
            moves.ended[id] = .resumed
        case .released(let id, let at, let eventSeq, let mapEpoch):
            guard let move = moves.outgoing.removeValue(forKey: id)?.move else { return }
            removeSlice(where: move.covers)
            moves.ended[id] = .released
            if let eventSeq, let mapEpoch {
                // The instant as the wire and a snapshot carry it (whole milliseconds), so a
                // state loaded from a snapshot equals the one its journal rebuilds.
                let instant = (try? RFC3339.parseInstant(RFC3339.format(at))) ?? at
                moves.retain(HandOverEvent(
                    seq: eventSeq, shard: move.source, move: id.rawValue, slots: HandOverEvent.ranges(of: move.slots),
                    target: move.target, mapEpoch: mapEpoch, at: instant))
                deliveries.eventSeqReserved = max(deliveries.eventSeqReserved, eventSeq)
            }
        case .importing(let move, _):
            if moves.incoming[move.id] == nil { moves.incoming[move.id] = SlotMoveLedger.Incoming(move: move) }
        case .adopted(let id, let encodedSlice, let cut):
            guard var move = moves.incoming[id], !move.isAdopted,
                let slice = try? Self.decodeSnapshot(encodedSlice, seed: settings).state
            else { return }
            move.slice = slice
            move.cut = cut
            moves.incoming[id] = move
        case .committed(let id, _):
            guard var move = moves.incoming[id], move.isAdopted, !move.isCommitted, let slice = move.slice else { return }
            removeSlice(where: move.move.covers)
            merge(slice)
            move.slice = nil
            move.isCommitted = true
            moves.incoming[id] = move
        case .completed(let id, _):
            guard moves.incoming[id]?.isCommitted == true else { return }
            moves.incoming[id] = nil
            moves.ended[id] = .completed
        case .dropped(let id, _):
            // A committed move is never dropped: its outcome was recorded once.
            guard let move = moves.incoming[id], !move.isCommitted else { return }
            moves.incoming[id] = nil
            moves.ended[id] = .dropped
        }
    }
}
