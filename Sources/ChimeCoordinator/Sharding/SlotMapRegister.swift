import ChimeJournal
import ChimeWire
import Foundation

/// What the cluster's map store holds: the shard map, the moves open on it and the outcome
/// of every move decided on it, under a version that every change raises.
///
/// The moves' one commit point: a move is opened, committed (the map moves its slots and
/// its epoch rises) or aborted by replacing the whole record with compare-and-swap on
/// `version` (``SlotMapRegister``), so of two movers acting on the same record exactly one
/// wins, and a move's outcome, once recorded, never changes.
public struct SlotMapRecord: Equatable, Sendable {
    /// Raised by every change (a Kubernetes object's `resourceVersion`).
    public internal(set) var version: UInt64
    /// The shard map; its `mapEpoch` rises with every committed move.
    public internal(set) var map: ShardMap
    /// The moves opened and not yet decided, by id; no slot is in two of them.
    public internal(set) var open: [SlotMoveID: SlotMove] = [:]
    /// The outcome of every move decided, by id.
    public internal(set) var outcomes: [SlotMoveID: SlotMoveOutcome] = [:]

    /// A record at version 1 holding `map` and no move.
    public init(map: ShardMap) {
        version = 1
        self.map = map
    }

    /// The record with `move` opened, or `nil` when it cannot open: its id was used before,
    /// it moves no slot, its source or target is not a shard of the map, source and target are
    /// one shard, the source does not own every slot of it, or a slot is in an open move.
    public func opening(_ move: SlotMove) -> SlotMapRecord? {
        guard open[move.id] == nil, outcomes[move.id] == nil, !move.slots.isEmpty, move.source != move.target,
            move.slotCount == map.slotCount, map.shard(id: move.source) != nil, map.shard(id: move.target) != nil,
            move.slots.allSatisfy({ map.ownerID(ofSlot: $0) == move.source }),
            open.values.allSatisfy({ $0.slots.isDisjoint(with: move.slots) })
        else { return nil }
        var next = self
        next.open[move.id] = move
        return next
    }

    /// The record with the open move `id` committed: its slots owned by its target in a map
    /// one epoch higher. `nil` when no such move is open (never opened, or decided).
    public func committing(_ id: SlotMoveID) -> SlotMapRecord? {
        guard let move = open[id] else { return nil }
        var next = self
        next.open[id] = nil
        next.map = map.moving(move.slots, to: move.target)
        next.outcomes[id] = .committed(mapEpoch: next.map.mapEpoch)
        return next
    }

    /// The record with the open move `id` aborted (the map unchanged). `nil` when no such
    /// move is open.
    public func aborting(_ id: SlotMoveID) -> SlotMapRecord? {
        guard open[id] != nil else { return nil }
        var next = self
        next.open[id] = nil
        next.outcomes[id] = .aborted
        return next
    }

    /// The record with `shard` added to the map owning no slots (a shard joining the cluster:
    /// a StatefulSet scaled up), in a map one epoch higher so that workers follow it. `nil`
    /// when the map already has a shard of that id, or `shard` names slots or a negative id.
    public func joining(_ shard: ShardMap.Shard) -> SlotMapRecord? {
        guard shard.slots.isEmpty, shard.id >= 0, map.shard(id: shard.id) == nil else { return nil }
        var next = self
        next.map.shards = (map.shards + [ShardMap.Shard(id: shard.id, slots: [], endpoints: shard.endpoints)]).sorted { $0.id < $1.id }
        next.map.mapEpoch = map.mapEpoch &+ 1
        return next
    }

    /// The open move that covers `slot`, if any.
    public func openMove(covering slot: Int) -> SlotMove? { open.values.first { $0.slots.contains(slot) } }
}

/// The map store as a compare-and-swap register: a read returns the record with its
/// version; a write names the version it read and succeeds only if the record is still at
/// it, raising the version by one (a Kubernetes ConfigMap `update` carrying
/// `metadata.resourceVersion`, which the API server refuses with 409 Conflict when stale;
/// etcd's transaction on `mod_revision` is the same).
public struct SlotMapRegister: Sendable {
    /// The current record.
    public private(set) var record: SlotMapRecord

    /// A register holding `map` at version 1.
    public init(map: ShardMap) { record = SlotMapRecord(map: map) }

    /// Replaces the record with `new` if it is still at `expectedVersion`, at the version after it.
    /// - Returns: whether the write won.
    @discardableResult
    public mutating func compareAndSwap(expectedVersion: UInt64, _ new: SlotMapRecord) -> Bool {
        guard record.version == expectedVersion else { return false }
        var written = new
        written.version = expectedVersion &+ 1
        record = written
        return true
    }
}
