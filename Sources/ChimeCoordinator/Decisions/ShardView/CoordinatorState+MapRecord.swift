import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

extension CoordinatorState {
    /// Takes the map register's `record` as this shard's view of the cluster: its map
    /// becomes the one requests are routed by (`wrong_shard` names its owners) and the `map`
    /// op answers, and the moves open and decided in it are what the move steps read.
    /// A record older than the one held (a lower version), or whose map does not name this
    /// shard, changes nothing.
    /// - Returns: whether the record was taken.
    @discardableResult
    public mutating func adoptMapRecord(_ record: SlotMapRecord) -> Bool {
        guard record.version >= (shardView.mapRecord?.version ?? 0), record.map.shard(id: configuration.shardID) != nil else { return false }
        shardView.mapRecord = record
        if !durable.moves.isIdle { shardView.isMoveFollowDue = true }
        if configuration.shardMap != record.map {
            configuration.shardMap = record.map
            shardView.ownership = ShardOwnership(map: record.map, shardID: configuration.shardID)
        }
        return true
    }

    /// Follows the register's outcomes without waiting for the mover: a target journals
    /// `committed` (and serves the slots) or `dropped`, a source `resumed`, as soon as its
    /// read of the register shows the outcome.
    mutating func followMapRecord(at now: Date, directives: inout [CoordinatorDirective]) {
        shardView.isMoveFollowDue = false
        guard let record = shardView.mapRecord else { return }
        for outgoing in durable.moves.outgoing.values.sorted(by: { $0.move.id < $1.move.id }) {
            if let entry = SlotMoveSource.follow(outgoing, record: record, at: now) { self.record(.slotMove(entry), into: &directives) }
        }
        for incoming in durable.moves.incoming.values.sorted(by: { $0.move.id < $1.move.id }) {
            if let entry = SlotMoveTarget.follow(incoming, record: record, at: now) {
                self.record(.slotMove(entry), into: &directives)
                if case .committed = entry { queueAdoptedFirings(of: incoming.move) }
            }
        }
    }

    /// `fireDue` while a move this shard sends is handed over: the slots' occurrences stay
    /// armed (the target fires them from the cut on; the source deletes them at the release)
    /// but are not taken, so the due occurrences of other slots are found by a walk of the
    /// timer's due entries (`TimerQueue.due`: O(due), only between a hand-over and its release).
    mutating func fireDueAroundHandedOverSlots(at now: Date, budget: Int, directives: inout [CoordinatorDirective]) {
        let moves = durable.moves
        // The due entries alone (a walk of the heap's top), not every deadline: at 500,000
        // reminders a shard, copying all of them each turn stalled the loop 1.6–4.5 s a turn.
        let due = schedule.due(at: now, limit: budget) { moves.mayFire(for: $0.recipient) }
        for (id, _) in due {
            guard let entry = entries[id], let occurrence = entry.next else { continue }
            takeOccurrence(occurrence, of: id, reminder: entry.reminder, at: now, directives: &directives)
        }
    }
}
