import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// The slot moves a shard takes part in, as the fold of its ``SlotMoveEntry`` values: for
/// each move it sends (`outgoing`) whether it handed over and at which cut; for each move
/// it receives (`incoming`) the adopted slice and whether the move committed.
///
/// Part of `DurableState` (`moves`), so it is in every snapshot; `DurableState.apply(_:)`
/// folds a `JournalEntry.slotMove` into it and, where a move hands data over, into the rest
/// of the state (`committed` merges, `released` splits off).
public struct SlotMoveLedger: Sendable, Equatable {
    /// A move this shard sends.
    public struct Outgoing: Sendable, Equatable, Codable {
        /// The move.
        public var move: SlotMove
        /// The cut-over instant (UTC), once handed over.
        public var cut: Date?
        /// Whether the slots were handed over.
        public var isHandedOver: Bool { cut != nil }
    }

    /// A move this shard receives.
    public struct Incoming: Sendable, Equatable {
        /// The move.
        public var move: SlotMove
        /// The adopted slice, until the commit merges it (`nil` before adoption and after the commit).
        public var slice: DurableState?
        /// The cut-over instant (UTC), once adopted.
        public var cut: Date?
        /// Whether the register committed the move and this shard recorded it.
        public var isCommitted = false
        /// Whether the slice was adopted.
        public var isAdopted: Bool { cut != nil }
    }

    /// How a move this shard took part in ended here.
    public typealias Ending = SlotMoveEnding

    /// The moves this shard sends, by id.
    public internal(set) var outgoing: [SlotMoveID: Outgoing] = [:]
    /// The moves this shard receives, by id.
    public internal(set) var incoming: [SlotMoveID: Incoming] = [:]
    /// The moves that ended here, by id (a step naming one of them is a repeat).
    public internal(set) var ended: [SlotMoveID: Ending] = [:]
    /// The hand-over events of the moves this shard released, in `seq` order, the newest
    /// ``handOverRetention`` of them: kept for `events` catch-up like acknowledged fire events.
    public internal(set) var handOvers: [HandOverEvent] = []

    /// Hand-over events kept at most (a move is rare: moving all 16,384 slots of a cluster
    /// once in the mover's 64-slot batches makes 256).
    public static let handOverRetention = 1024

    /// Keeps `event`, dropping the oldest beyond ``handOverRetention``.
    mutating func retain(_ event: HandOverEvent) {
        handOvers.append(event)
        if handOvers.count > Self.handOverRetention { handOvers.removeFirst(handOvers.count - Self.handOverRetention) }
    }

    /// A ledger with no move.
    public init() {}

    /// Whether no move is in progress here.
    public var isIdle: Bool { outgoing.isEmpty && incoming.isEmpty }
}
