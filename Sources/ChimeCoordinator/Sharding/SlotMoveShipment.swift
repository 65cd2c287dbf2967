import ChimeCore
import ChimeJournal
import ChimeStore
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
