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
        guard record.version >= (mapRecord?.version ?? 0), record.map.shard(id: configuration.shardID) != nil else { return false }
        mapRecord = record
        if !durable.moves.isIdle { isMoveFollowDue = true }
        if configuration.shardMap != record.map {
            configuration.shardMap = record.map
            ownership = ShardOwnership(map: record.map, shardID: configuration.shardID)
        }
        return true
    }

    /// Follows the register's outcomes without waiting for the mover: a target journals
    /// `committed` (and serves the slots) or `dropped`, a source `resumed`, as soon as its
    /// read of the register shows the outcome.
    mutating func followMapRecord(at now: Date, directives: inout [CoordinatorDirective]) {
        isMoveFollowDue = false
        guard let record = mapRecord else { return }
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
}
