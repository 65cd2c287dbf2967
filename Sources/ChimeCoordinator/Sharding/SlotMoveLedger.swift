import ChimeCore
import ChimeStore
import Foundation

/// The slot moves a shard takes part in, as the fold of its ``SlotMoveEntry`` values: for
/// each move it sends (`outgoing`) whether it handed over and at which cut; for each move
/// it receives (`incoming`) the adopted slice, how far the source's entries are applied,
/// whether the move committed, and which firings stay the source's to settle.
///
/// Its own value beside `DurableState` (not a part of it), so moves add no case to the
/// durable state's fold; ``apply(_:to:)`` changes the durable state only where a move hands
/// data over (`committed` merges, `released` splits off, a tail after the commit applies).
public struct SlotMoveLedger: Sendable, Equatable {
    /// A move this shard sends.
    public struct Outgoing: Sendable, Equatable {
        /// The move.
        public var move: SlotMove
        /// The cut-over instant (UTC), once handed over.
        public var cut: Date?
        /// The source's journal sequence the hand-over covers, once handed over.
        public var handedOverThrough: UInt64?
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
        /// The source's journal sequence the slice and tail are applied through (0 before adoption).
        public var appliedThrough: UInt64 = 0
        /// Whether the register committed the move and this shard recorded it.
        public var isCommitted = false
        /// Firings the source dispatched before the cut and has not settled (as far as the
        /// applied tail says): they settle there, so this shard never dispatches them.
        public var heldForSource: Set<FiringID> = []
        /// Whether the slice was adopted.
        public var isAdopted: Bool { cut != nil }
    }

    /// How a move this shard took part in ended here.
    public enum Ending: Sendable, Equatable {
        /// Source: aborted, the slots kept.
        case resumed
        /// Source: committed, the copy deleted.
        case released
        /// Target: committed and released by the source.
        case completed
        /// Target: aborted, the staging dropped.
        case dropped
    }

    /// The moves this shard sends, by id.
    public private(set) var outgoing: [SlotMoveID: Outgoing] = [:]
    /// The moves this shard receives, by id.
    public private(set) var incoming: [SlotMoveID: Incoming] = [:]
    /// The moves that ended here, by id (a step naming one of them is a repeat).
    public private(set) var ended: [SlotMoveID: Ending] = [:]

    /// A ledger with no move.
    public init() {}

    /// Whether no move is in progress here.
    public var isIdle: Bool { outgoing.isEmpty && incoming.isEmpty }

    /// Folds one entry into the ledger and, where the move hands data over, `durable`: the
    /// one function that changes a ledger, live and in recovery alike.
    public mutating func apply(_ entry: SlotMoveEntry, to durable: inout DurableState) {
        guard ended[entry.moveID] == nil else { return }
        switch entry {
        case .migrating(let move, _):
            if outgoing[move.id] == nil { outgoing[move.id] = Outgoing(move: move) }
        case .handedOver(let id, let cut, let through):
            guard var move = outgoing[id], !move.isHandedOver else { return }
            move.cut = cut
            move.handedOverThrough = through
            outgoing[id] = move
        case .resumed(let id, _):
            guard outgoing.removeValue(forKey: id) != nil else { return }
            ended[id] = .resumed
        case .released(let id, _):
            guard let move = outgoing.removeValue(forKey: id)?.move else { return }
            durable = durable.split(where: move.covers).rest
            ended[id] = .released
        case .importing(let move, _):
            if incoming[move.id] == nil { incoming[move.id] = Incoming(move: move) }
        case .adopted(let id, let slice, let through, let cut):
            guard var move = incoming[id], !move.isAdopted else { return }
            move.slice = slice
            move.cut = cut
            move.appliedThrough = through
            move.heldForSource = Set(slice.deliveries.unsettled.keys)
            incoming[id] = move
        case .tailApplied(let id, let entries, let through):
            guard var move = incoming[id], move.isAdopted, through > move.appliedThrough else { return }
            for tailEntry in entries {
                if move.isCommitted {
                    durable.apply(tailEntry)
                } else {
                    move.slice?.apply(tailEntry)
                }
                switch tailEntry {
                case .acknowledged(let firingId, _, _, _), .deadLettered(let firingId, _): move.heldForSource.remove(firingId)
                default: break
                }
            }
            move.appliedThrough = through
            incoming[id] = move
        case .committed(let id, _):
            guard var move = incoming[id], move.isAdopted, !move.isCommitted, let slice = move.slice else { return }
            durable.merge(slice)
            move.slice = nil
            move.isCommitted = true
            incoming[id] = move
        case .completed(let id, _):
            guard incoming[id]?.isCommitted == true else { return }
            incoming[id] = nil
            ended[id] = .completed
        case .dropped(let id, _):
            // A committed move is never dropped: its outcome was recorded once.
            guard let move = incoming[id], !move.isCommitted else { return }
            incoming[id] = nil
            ended[id] = .dropped
        }
    }
}
