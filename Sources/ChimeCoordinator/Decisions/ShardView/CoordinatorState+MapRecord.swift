import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

extension CoordinatorState {
    /// Takes the map register's `record` as this shard's view of the cluster: its map
    /// becomes the one requests are routed by (`wrong_shard` names its owners) and the `map`
    /// op answers, and the moves open and decided in it are what the move steps read.
    /// A record older than the one held (a lower version), or whose map does not name this
    /// shard, changes nothing. A map that gives away slots this shard holds data of outside
    /// any move it sends is noted (``CoordinatorNotice/unservedData(reminders:firings:slots:)``):
    /// that data is neither fired, listed nor served from here on.
    /// - Returns: whether the record was taken.
    @discardableResult
    public mutating func adoptMapRecord(_ record: SlotMapRecord) -> Bool {
        guard record.version >= (mapRecord?.version ?? 0), record.map.shard(id: configuration.shardID) != nil else { return false }
        let previous = configuration.shardMap
        let isFirstRecord = mapRecord == nil
        shardView.mapRecord = record
        if !durable.moves.isIdle { shardView.isMoveFollowDue = true }
        if previous != record.map {
            configuration.shardMap = record.map
            shardView.ownership = ShardOwnership(map: record.map, shardID: configuration.shardID)
            if !isFirstRecord && mayHoldUnservedData(previous: previous) { findUnservedData() }
        }
        // The first record read decides what a recovered state serves (its configured map
        // may be older than the register's), and which of its unsettled firings wait for a worker.
        if isFirstRecord {
            findUnservedData()
            rebuildWaitingLine()
        }
        return true
    }

    /// Whether a map change can leave this shard holding data it no longer serves: it lost
    /// a slot that no move it sends covers (a move's own slots are released with it).
    private func mayHoldUnservedData(previous: ShardMap?) -> Bool {
        if shardView.hasUnservedData { return true }
        guard let map = configuration.shardMap, !shardView.ownership.ownsEverySlot else { return false }
        let shard = configuration.shardID
        for slot in 0..<map.slotCount where previous.map({ $0.ownerID(ofSlot: slot) == shard }) ?? true {
            if map.ownerID(ofSlot: slot) != shard && !durable.moves.isMoving(slot: slot) { return true }
        }
        return false
    }

    /// Sets `hasUnservedData` from a walk of what this state holds (O(reminders + unsettled
    /// firings): at recovery without a map register, at the first register read, and on a
    /// map change that took slots away outside a move), noting what it found; the waiting
    /// line is rebuilt from the unsettled firings not in flight that this shard serves, so a
    /// firing set aside under an older map waits again under a map that gives it back.
    mutating func findUnservedData() {
        let wasUnserved = shardView.hasUnservedData
        shardView.hasUnservedData = false
        defer { if wasUnserved || shardView.hasUnservedData { rebuildWaitingLine() } }
        guard !shardView.ownership.ownsEverySlot || !durable.moves.isIdle, let map = configuration.shardMap else { return }
        var slots = Set<Int>()
        var reminders = 0
        var firings = 0
        let moves = durable.moves
        let shard = configuration.shardID
        var served: [RecipientID: Bool] = [:]
        func isUnserved(_ recipient: RecipientID) -> Bool {
            if let known = served[recipient] { return !known }
            let slot = map.slot(of: recipient)
            // A slot of a move in progress is the move's business (released, dropped or merged with it).
            let serves = moves.isMoving(slot: slot) || moves.serves(slot: slot, shard: shard, map: map)
            served[recipient] = serves
            if !serves { slots.insert(slot) }
            return !serves
        }
        for key in durable.schedule.entries.keys where isUnserved(key.recipient) { reminders += 1 }
        for firingId in durable.deliveries.unsettled.keys where isUnserved(firingId.recipient) { firings += 1 }
        guard reminders + firings > 0 else { return }
        shardView.hasUnservedData = true
        note(.unservedData(reminders: reminders, firings: firings, slots: slots.count))
    }

    /// The waiting line anew: every unsettled firing not in flight that this shard hands to
    /// workers (``SlotMoveLedger/dispatches(slot:shard:map:)``), oldest due first.
    mutating func rebuildWaitingLine() {
        let state = self
        dispatch.waiting = RingQueue(
            unsettled.values.filter { state.dispatch.inFlight[$0.firing.firingId] == nil && state.dispatches($0.firing.recipient) }
                .sorted { ($0.firing.dueAt, $0.firing.firingId) < ($1.firing.dueAt, $1.firing.firingId) })
    }

    /// Whether this shard serves `recipient`: fires its occurrences, dispatches its firings
    /// and lists its reminders (``SlotMoveLedger/serves(slot:shard:map:)``). Every recipient
    /// when this shard owns every slot and no move is in progress.
    func serves(_ recipient: RecipientID) -> Bool {
        if isAwaitingMapRecord { return false }
        guard !shardView.ownership.ownsEverySlot || !durable.moves.isIdle, let map = configuration.shardMap else { return true }
        let slot = map.slot(of: recipient)
        if isInUnstartedOutgoingMove(slot: slot) { return false }
        #if DEBUG
        switch sabotage {
        case .servesWhatTheMapGaveAway where !durable.moves.isMoving(slot: slot): return true
        case .firesHandedOverSlots where durable.moves.outgoing.values.contains { $0.isHandedOver && $0.move.slots.contains(slot) }:
            return true
        default: break
        }
        #endif
        return durable.moves.serves(slot: slot, shard: configuration.shardID, map: map)
    }

    /// Whether this shard hands `recipient`'s unsettled firings to workers
    /// (``SlotMoveLedger/dispatches(slot:shard:map:)``).
    func dispatches(_ recipient: RecipientID) -> Bool {
        if isAwaitingMapRecord { return false }
        guard !shardView.ownership.ownsEverySlot || !durable.moves.isIdle, let map = configuration.shardMap else { return true }
        return durable.moves.dispatches(slot: map.slot(of: recipient), shard: configuration.shardID, map: map)
    }

    /// Whether some data held here is not served now (a handed-over move, data of slots the
    /// map gave away, or everything before the first register read): firing then walks the
    /// due entries and skips them.
    var isServingRestricted: Bool {
        shardView.hasUnservedData || durable.moves.hasHandedOver || isAwaitingMapRecord || hasUnstartedOutgoingMove
    }

    /// Whether the register has a move of `slot` open with this shard as its source that this
    /// shard's ledger does not hold: the mover has not begun it here yet, or this shard's
    /// journal lost its start (an older copy of the store was restored) while the target may
    /// already hold a slice of it. Until the move begins here (or is decided), the slot takes
    /// no write (`try_again`) and fires nothing, so nothing acknowledged here can be left
    /// behind by a commit of that slice.
    func isInUnstartedOutgoingMove(slot: Int) -> Bool {
        guard let record = mapRecord, !record.open.isEmpty else { return false }
        let shard = configuration.shardID
        return record.open.values.contains {
            $0.source == shard && $0.slots.contains(slot) && durable.moves.outgoing[$0.id] == nil && durable.moves.ended[$0.id] == nil
        }
    }

    /// Whether the register has a move open with this shard as its source that its ledger
    /// does not hold (see ``isInUnstartedOutgoingMove(slot:)``).
    var hasUnstartedOutgoingMove: Bool {
        guard let record = mapRecord, !record.open.isEmpty else { return false }
        return record.open.values.contains { $0.source == configuration.shardID && durable.moves.outgoing[$0.id] == nil }
    }

    /// Whether this shard follows a map register and has not read it since it started: it
    /// serves nothing until then (``adoptMapRecord(_:)``).
    var isAwaitingMapRecord: Bool { configuration.followsMapRegister && mapRecord == nil }

    /// Follows the register's outcomes without waiting for the mover: a target journals
    /// `committed` (and serves the slots) or `dropped`, a source `released` or `resumed`, as
    /// soon as its read of the register shows the outcome.
    mutating func followMapRecord(at now: Date, directives: inout [CoordinatorDirective]) {
        shardView.isMoveFollowDue = false
        guard let record = mapRecord else { return }
        let ids = Set(durable.moves.outgoing.keys).union(durable.moves.incoming.keys).sorted()
        for id in ids where record.outcomes[id] != nil { followMove(id, record: record, at: now, directives: &directives) }
    }

    /// `fireDue` while some data held here is not served (``isServingRestricted``): the
    /// unserved occurrences stay armed (a handed-over move's are fired by the target from the
    /// cut on and deleted here at the release) but are not taken, so the due occurrences of
    /// other slots are found by a walk of the timer's due entries (`TimerQueue.due`: O(due)).
    mutating func fireDueAroundUnservedSlots(at now: Date, budget: Int, directives: inout [CoordinatorDirective]) {
        // The due entries alone (a walk of the heap's top), not every deadline: at 500,000
        // reminders a shard, copying all of them each turn stalled the loop 1.6–4.5 s a turn.
        // The unserved ones stay on top, so the stale entries the taken ones leave (the timer
        // deletes lazily) cannot surface: drop them once they outnumber the rest. This changes
        // how the timer is kept, not what it holds.
        compactDueTimerEntries(at: now)
        let state = self
        let due = schedule.due(at: now, limit: budget) { state.serves($0.recipient) }
        for (id, _) in due {
            guard let entry = entries[id], let occurrence = entry.next else { continue }
            takeOccurrence(occurrence, of: id, reminder: entry.reminder, at: now, directives: &directives)
        }
    }
}

#if DEBUG
/// The slot-move rules `SlotMoveSimulation` breaks on purpose, one at a time, to show that an
/// invariant catches each (TigerBeetle's VOPR and FoundationDB's simulation test their
/// checkers the same way).
enum SlotMoveSabotage: Sendable, Equatable {
    /// Nothing is broken.
    case none
    /// A source still fires the slots it handed over.
    case firesHandedOverSlots
    /// A shard fires and lists data of slots its map gives to another shard outside a move.
    case servesWhatTheMapGaveAway
    /// A shard answers `move` steps while its store is full, from a live state that may hold
    /// facts not written (the loss a probe found).
    case answersMoveStepsWhileFull
}
#endif
