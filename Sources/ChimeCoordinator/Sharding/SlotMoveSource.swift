import ChimeCore
import ChimeJournal
import ChimeStore
import Foundation

/// The source's decisions in a slot move: pure functions of its ledger, its durable state,
/// what its target last answered and the map register's record, returning the entry to
/// journal (or the shipment to send). The coordinator's loop calls them; nothing here reads
/// a clock or a socket.
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

    /// What the register's outcome asks of an outgoing move: `resumed` once it was aborted.
    /// (A committed move is released by ``release(_:state:record:receipt:lastSlotEntry:at:)``.)
    public static func follow(_ move: SlotMoveLedger.Outgoing, record: SlotMapRecord, at now: Date) -> SlotMoveEntry? {
        record.outcomes[move.move.id] == .aborted ? .resumed(move.move.id, at: now) : nil
    }

    /// The hand-over, when the slots' writes are paused and nothing of them is armed before
    /// `now` (the loop fired what was due first): the cut-over instant is `now`, and the
    /// hand-over covers the journal through `journalEnd`. `nil` when not paused, already
    /// handed over, or an occurrence of the slots due before `now` is still to be fired.
    public static func handOver(
        _ move: SlotMoveLedger.Outgoing, state: DurableState, isPaused: Bool, journalEnd: UInt64, at now: Date
    ) -> SlotMoveEntry? {
        guard isPaused, !move.isHandedOver else { return nil }
        for (key, deadline) in state.schedule.timer.deadlines where deadline < now && move.move.covers(key.recipient) {
            return nil
        }
        return .handedOver(move.move.id, cut: now, through: journalEnd)
    }

    /// The shipment that brings the target up to `journalEnd`: the slots' slice of `state`
    /// (which reflects the journal through `journalEnd`) when the target holds nothing
    /// (`receipt` is `nil` or names no sequence), else the slots' entries after what it holds,
    /// read with `entries(after:)`.
    public static func shipment(
        for move: SlotMoveLedger.Outgoing, receipt: SlotMoveReceipt?, state: DurableState, journalEnd: UInt64,
        entries: (UInt64) -> [SequencedEntry]
    ) -> SlotMoveShipment {
        let handOver = move.cut.flatMap { cut in
            move.handedOverThrough.map { SlotMoveShipment.HandOver(cut: cut, through: $0) }
        }
        guard let held = receipt?.through, held <= journalEnd else {
            return SlotMoveShipment(
                moveID: move.move.id, slice: state.slice(where: move.move.covers), after: journalEnd, entries: [],
                through: journalEnd, handOver: handOver, isReleased: false)
        }
        let shipped = entries(held).filter { $0.seq > held && $0.seq <= journalEnd && move.move.isAbout($0.entry) }
        return SlotMoveShipment(
            moveID: move.move.id, slice: nil, after: held, entries: shipped, through: journalEnd, handOver: handOver,
            isReleased: false)
    }

    /// The notice a source sends for a move it released: nothing more will come.
    public static func releasedNotice(_ id: SlotMoveID, journalEnd: UInt64) -> SlotMoveShipment {
        SlotMoveShipment(moveID: id, slice: nil, after: journalEnd, entries: [], through: journalEnd, handOver: nil, isReleased: true)
    }

    /// `released` (the source's copy of the slots is deleted) once the register committed the
    /// move, the target recorded the commit and holds every entry about the slots (through
    /// `lastSlotEntry`, the sequence of the source's last one), and no firing of the slots is
    /// unsettled here (what was dispatched before the cut settled on this shard, and its
    /// settlement was shipped). `nil` before that. With `eventSeq` (the next `seq` of this
    /// shard's event stream) the entry carries the hand-over event's seq and the commit's map
    /// epoch: every event of the slots this shard published has a lower seq, since it made no
    /// firing of them after the hand-over and all it made are settled.
    public static func release(
        _ move: SlotMoveLedger.Outgoing, state: DurableState, record: SlotMapRecord, receipt: SlotMoveReceipt?,
        lastSlotEntry: UInt64, eventSeq: UInt64? = nil, at now: Date
    ) -> SlotMoveEntry? {
        guard move.isHandedOver, case .committed(let mapEpoch) = record.outcomes[move.move.id], let receipt, receipt.isCommitted,
            let held = receipt.through, held >= lastSlotEntry,
            !state.deliveries.unsettled.values.contains(where: { move.move.covers($0.firing.recipient) })
        else { return nil }
        return .released(move.move.id, at: now, eventSeq: eventSeq, mapEpoch: eventSeq.map { _ in mapEpoch })
    }
}
