import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// What a shard answers a write for a recipient while slots move.
public enum SlotWriteGate: Equatable, Sendable {
    /// Apply it: this shard owns the slot and no move holds its writes.
    case accept
    /// `try_again`: the slot is pausing or handed over and its move not decided; retry after
    /// `retryAfter` seconds (the client honours it).
    case tryAgain(retryAfter: TimeInterval)
    /// `wrong_shard`: shard `owner` (when known) holds the slot.
    case wrongShard(owner: Int?)
}

/// The rules a shard's loop asks of its ledger: which writes it takes, and which recipients'
/// data it serves (fires, dispatches, lists) while slots move or after the map gave slots away.
extension SlotMoveLedger {
    /// How a write for `recipient` is answered by shard `shard`, whose last read of the map is
    /// `map`, at `now`; `pausedUntil`: the volatile write pauses of moves this shard sends.
    ///
    /// A target serves a moving slot only once it recorded the commit (`try_again` once it
    /// adopted the slice, `wrong_shard` naming the source before); a source takes its
    /// writes until a pause or the hand-over, then answers `try_again` (for the pause's rest,
    /// or ``handOverRetry(since:at:)`` once handed over) until the map shows another owner,
    /// then `wrong_shard` naming it — also when it never handed over (a source restarted from
    /// a journal that lost its hand-over: the register's map is the truth). Other slots follow
    /// the map.
    public func writeGate(
        for recipient: RecipientID, shard: Int, map: ShardMap, at now: Date, pausedUntil: [SlotMoveID: Date]
    ) -> SlotWriteGate {
        let slot = map.slot(of: recipient)
        for move in incoming.values where move.move.slots.contains(slot) {
            if move.isCommitted { return .accept }
            // Adopted: the source handed over and takes no more writes of the slot; the
            // register decides in a moment (this shard serves, or the source resumes). Naming
            // the source would send the client back and forth while the two reads of the
            // register differ.
            guard let cut = move.cut else { return .wrongShard(owner: move.move.source) }
            return .tryAgain(retryAfter: Self.handOverRetry(since: cut, at: now))
        }
        let owner = map.ownerID(ofSlot: slot)
        for move in outgoing.values where move.move.slots.contains(slot) {
            if owner != shard { return .wrongShard(owner: owner) }
            if let cut = move.cut { return .tryAgain(retryAfter: Self.handOverRetry(since: cut, at: now)) }
            if let until = pausedUntil[move.move.id], until > now { return .tryAgain(retryAfter: until.timeIntervalSince(now)) }
            return .accept
        }
        return owner == shard ? .accept : .wrongShard(owner: owner)
    }

    /// The `retryAfterMs` of a write that meets a handed-over slot whose move is undecided
    /// here, in seconds: a quarter of the time since the cut-over instant `cut` (UTC), at least
    /// 50 ms and at most 1 s. A hand-over usually lasts milliseconds and is answered every
    /// 50 ms; one that lasts (the source or the target was taken over by its standby, and the
    /// mover waits out the request the killed coordinator never answered) backs off, so a
    /// client's 20 waits (`ControlClient.maximumRateLimitedWaits`, and the Python clients')
    /// span about 6.5 s instead of 1 s, while its retry comes at most a quarter of the
    /// hand-over's age (or 50 ms) after the decision reached the shard.
    public static func handOverRetry(since cut: Date, at now: Date) -> TimeInterval {
        min(1, max(0.05, now.timeIntervalSince(cut) / 4))
    }

    /// Whether shard `shard`, whose last read of the map is `map`, serves what it holds of
    /// `slot`: fires its occurrences, dispatches its firings and lists its reminders.
    ///
    /// Not a slot of a move it receives before the commit (the slice is staged in the
    /// ledger; anything else of the slot held here is stale and is replaced at the commit),
    /// not a slot it handed over (the target fires from the cut on), and not a slot the map
    /// gives to another shard — what a restarted source still holds of a move the register
    /// committed, or of slots a hand-edited map moved away, never fires or lists here.
    public func serves(slot: Int, shard: Int, map: ShardMap) -> Bool {
        for move in incoming.values where move.move.slots.contains(slot) { return move.isCommitted }
        for move in outgoing.values where move.isHandedOver && move.move.slots.contains(slot) { return false }
        return map.ownerID(ofSlot: slot) == shard
    }

    /// Whether shard `shard` hands the unsettled firings it holds of `slot` to workers:
    /// those of a slot it serves, and those of a move it sends even once handed over (a
    /// firing made before the cut settles where it was made, and the final slice is cut
    /// only once none is unsettled); not those of slots the map gave away outside a move.
    public func dispatches(slot: Int, shard: Int, map: ShardMap) -> Bool {
        outgoing.values.contains { $0.move.slots.contains(slot) } || serves(slot: slot, shard: shard, map: map)
    }

    /// Whether a move this shard sends is handed over (its slots' occurrences are not fired here).
    public var hasHandedOver: Bool { outgoing.values.contains(where: \.isHandedOver) }

    /// Whether a move this shard sends or receives covers `slot`.
    public func isMoving(slot: Int) -> Bool {
        outgoing.values.contains { $0.move.slots.contains(slot) } || incoming.values.contains { $0.move.slots.contains(slot) }
    }
}
