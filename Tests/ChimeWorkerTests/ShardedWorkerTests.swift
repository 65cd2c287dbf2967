import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeWorker

/// A worker serving several shards keeps one state per shard: events carry the shard, epochs
/// fence per shard, and the capacity is split so the shards together never exceed it.
@Suite struct ShardedWorkerTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)

    func batch(epoch: UInt64, _ id: String) -> DispatchBatch {
        var firing = Firing(reminderId: ReminderID(id), recipient: "alice", dueAt: Self.t0, content: Content(body: id))
        firing.seq = 7
        return DispatchBatch(epoch: epoch, leaseMilliseconds: 10_000, firings: [firing])
    }

    @Test func eventsCarryTheShardOfTheStateThatDeliveredThem() {
        var single = WorkerState(id: "w", host: "h", pid: 1)
        var second = WorkerState(id: "w", host: "h", pid: 1)
        second.shard = 2
        guard case .publish(let plain)? = single.onBatch(batch(epoch: 1, "a"), at: Self.t0).first,
            case .publish(let sharded)? = second.onBatch(batch(epoch: 1, "a"), at: Self.t0).first
        else {
            Issue.record("expected fire events")
            return
        }
        #expect(plain.shard == nil)
        #expect(sharded.shard == 2)
    }

    @Test func epochsFenceEachShardOnItsOwn() {
        // Shard 0's coordinator is at epoch 9 (it restarted often); shard 1's first start is
        // epoch 1: its batches are not stale because shard 0's epoch is higher.
        var shardZero = WorkerState(id: "w", host: "h", pid: 1)
        var shardOne = WorkerState(id: "w", host: "h", pid: 1)
        #expect(shardZero.onBatch(batch(epoch: 9, "a"), at: Self.t0).count == 1)
        #expect(shardOne.onBatch(batch(epoch: 1, "b"), at: Self.t0).count == 1)
        #expect(shardZero.onBatch(batch(epoch: 8, "c"), at: Self.t0).isEmpty, "a stale batch of the same shard is dropped")
        #expect(shardZero.staleBatches == 1 && shardOne.staleBatches == 0)
    }

    @Test(arguments: [(4096, 1, 4096), (4096, 3, 1365), (4096, 8, 512), (2, 3, 1), (0, 2, 1)])
    func theCapacityIsSplitEvenlyAndNeverOvercommitted(total: Int, shards: Int, each: Int) {
        #expect(ShardedWorker.capacity(total, shards: shards) == each)
        if total >= shards { #expect(ShardedWorker.capacity(total, shards: shards) * shards <= total) }
    }
}
