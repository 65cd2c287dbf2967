import ChimeCore
import ChimeJournal
import ChimeStore
import Foundation

/// What a target holds of a move only in memory: before adoption the staged slice and the
/// source sequence it reflects; after it, how far it knows it holds the source's entries.
/// Lost in a crash: the target then answers that it holds what its ledger says, and the
/// source ships again from there (a fresh slice before adoption).
public struct SlotMoveStaging: Equatable, Sendable {
    /// The staged slice (before adoption).
    public var slice: DurableState?
    /// The source sequence through which the target holds the slots' data.
    public var through: UInt64

    /// Creates the value from its fields.
    public init(slice: DurableState?, through: UInt64) {
        self.slice = slice
        self.through = through
    }
}

/// The target's decisions in a slot move: pure functions of its ledger, its staging, the
/// shipments it receives and the map register's record, returning the entries to journal.
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

    /// Takes a shipment: stages a slice and the entries that follow what is held (a gap is
    /// ignored: the receipt says where to continue), and returns what to journal: `adopted`
    /// once the hand-over is staged, `tailApplied` for entries after an adoption, `completed`
    /// when the source released a committed move.
    public static func receive(
        _ shipment: SlotMoveShipment, ledger: SlotMoveLedger, staging: inout SlotMoveStaging?, at now: Date
    ) -> [SlotMoveEntry] {
        guard let move = ledger.incoming[shipment.moveID] else {
            // Ended (or never started) here: nothing is staged for it.
            staging = nil
            return []
        }
        if shipment.isReleased { return move.isCommitted ? [.completed(move.move.id, at: now)] : [] }
        guard move.isAdopted else {
            if let slice = shipment.slice { staging = SlotMoveStaging(slice: slice, through: shipment.after) }
            guard var staged = staging, var slice = staged.slice, staged.through >= shipment.after else { return [] }
            for item in shipment.entries where item.seq > staged.through { slice.apply(item.entry) }
            staged.slice = slice
            staged.through = max(staged.through, shipment.through)
            staging = staged
            guard let handOver = shipment.handOver, staged.through >= handOver.through else { return [] }
            staging = SlotMoveStaging(slice: nil, through: staged.through)
            return [.adopted(move.move.id, slice: slice.encodedSnapshot(takenAt: nil), through: staged.through, cut: handOver.cut)]
        }
        let held = max(move.appliedThrough, staging?.through ?? 0)
        guard shipment.slice == nil, shipment.after <= held, shipment.through > held else { return [] }
        staging = SlotMoveStaging(slice: nil, through: shipment.through)
        let fresh = shipment.entries.filter { $0.seq > held }.map(\.entry)
        return fresh.isEmpty ? [] : [.tailApplied(move.move.id, fresh, through: shipment.through)]
    }

    /// The receipt for `id`: how far the target holds the source's data.
    public static func receipt(for id: SlotMoveID, ledger: SlotMoveLedger, staging: SlotMoveStaging?) -> SlotMoveReceipt? {
        guard let move = ledger.incoming[id] else { return nil }
        let through: UInt64?
        if move.isAdopted {
            through = max(move.appliedThrough, staging?.through ?? 0)
        } else {
            through = staging?.slice == nil ? nil : staging?.through
        }
        return SlotMoveReceipt(moveID: id, through: through, isAdopted: move.isAdopted, isCommitted: move.isCommitted)
    }

    /// What the register's outcome asks of an incoming move: `committed` once it committed
    /// (the slice was adopted: a commit needs it), `dropped` once it was aborted.
    public static func follow(_ move: SlotMoveLedger.Incoming, record: SlotMapRecord, at now: Date) -> SlotMoveEntry? {
        switch record.outcomes[move.move.id] {
        case .committed(let mapEpoch)? where move.isAdopted && !move.isCommitted: .committed(move.move.id, mapEpoch: mapEpoch)
        case .aborted?: .dropped(move.move.id, at: now)
        default: nil
        }
    }
}
