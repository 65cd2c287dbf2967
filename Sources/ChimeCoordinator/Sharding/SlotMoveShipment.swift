import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// What a source sends its target for one move, once: the slots' final slice, cut at the
/// hand-over when nothing of the slots was unsettled on the source (so nothing is settled
/// there afterwards and no later entry about the slots exists), with the cut-over instant.
/// The source exports it only from durable facts (its `move` replies wait for the journal),
/// and sends the same slice again when asked again.
public struct SlotMoveShipment: Equatable, Sendable {
    /// The move.
    public var moveID: SlotMoveID
    /// The slots' slice of the source's durable state at the hand-over.
    public var slice: DurableState
    /// The cut-over instant (UTC): the source fired every occurrence of the slots due
    /// before it and fires none from it on.
    public var cut: Date

    /// Creates the value from its fields.
    public init(moveID: SlotMoveID, slice: DurableState, cut: Date) {
        self.moveID = moveID
        self.slice = slice
        self.cut = cut
    }
}

extension SlotMoveShipment {
    /// The wire form (the slice encoded as a snapshot payload), as `export` answers it.
    public var shipped: ShippedSlice { ShippedSlice(slice: slice.encodedSnapshot(takenAt: nil), cut: cut) }

    /// The shipment of move `moveID` that `shipped` carries.
    /// - Throws: `WireError(.invalidArgument)` when the slice does not decode.
    public init(_ shipped: ShippedSlice, moveID: SlotMoveID, settings: DurableSettings) throws(WireError) {
        self.init(moveID: moveID, slice: try DurableState.decodeSnapshot(shipped.slice, seed: settings).state, cut: shipped.cut)
    }
}
