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
    /// Whether a newer register record was adopted while moves are in progress here: the
    /// next tick follows its outcomes (`followMapRecord`).
    var isMoveFollowDue = false
    /// Whether this state holds data of slots its map gives to other shards outside any move
    /// (derived by `findUnservedData` at recovery and on a map change): such data is neither
    /// fired, dispatched nor listed (`CoordinatorState.serves(_:)`).
    var hasUnservedData = false
    /// The map register the service follows on its reader thread, and the fresh reads `move`
    /// steps wait for (`nil`: no register is followed).
    var register: RegisterFollowing?

    /// A map register followed by the service's reader thread.
    struct RegisterFollowing: Sendable {
        /// How logs and refusals name it.
        let name: String
        /// Fresh reads asked for (`.readMapRegister`), numbered from 1 as the reader numbers
        /// them: the newest is the ticket of the step that asked.
        var freshReadsRequested: UInt64 = 0
        /// Fresh reads the reader has finished.
        var freshReadsDone: UInt64 = 0
        /// The fresh reads `move` steps wait for, by request.
        var waiting: [String: FreshRead] = [:]
    }

    /// A `move` step waiting for a fresh read of the register.
    struct FreshRead: Sendable {
        /// The read's ticket: the step is decided once `freshReadsDone` reaches it.
        var ticket: UInt64
        /// When the step first arrived (monotonic seconds).
        var since: Double
        /// How many `try_again`s the step got so far.
        var refusals: Int
    }

    /// The view of shard `shardID` under `map` (`nil`: one shard owning every slot).
    init(map: ShardMap?, shardID: Int) { ownership = ShardOwnership(map: map, shardID: shardID) }
}
