import ChimeJournal
import ChimeWire
import Foundation

/// This shard's view of the cluster, beside its durable slot-move ledger: which slots it owns
/// under the map it serves by, the map register's record it last read, and the volatile side
/// of the slot moves it takes part in (lost in a crash: the mover asks again).
struct ShardView: Sendable {
    /// Which slots this shard owns (from `configuration.shardMap` and `shardID`).
    var ownership: ShardOwnership
    /// The map register's record this shard last read (`nil`: no register; the map is the
    /// configured one).
    var mapRecord: SlotMapRecord?
    /// Write pauses of the moves this shard sends (until when, UTC), by move: set by the
    /// mover's pause request.
    var movePauses: [SlotMoveID: Date] = [:]
    /// Staging of the moves this shard receives (before adoption), by move.
    var moveStaging: [SlotMoveID: SlotMoveStaging] = [:]
    /// Whether a newer register record was adopted while moves are in progress here: the
    /// next tick follows its outcomes (`followMapRecord`).
    var isMoveFollowDue = false

    /// The view of shard `shardID` under `map` (`nil`: one shard owning every slot).
    init(map: ShardMap?, shardID: Int) { ownership = ShardOwnership(map: map, shardID: shardID) }
}
