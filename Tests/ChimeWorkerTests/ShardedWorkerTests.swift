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
    func withNoDemandTheCapacityIsSplitEvenlyAndNeverOvercommitted(total: Int, shards: Int, each: Int) {
        let shares = CapacityPool.shares(total: total, unacknowledged: Array(repeating: 0, count: shards))
        #expect(shares == Array(repeating: each, count: shards))
        if total >= shards { #expect(shares.reduce(0, +) <= total) }
    }

    @Test func oneShardsBurstGetsWhatTheIdleShardsDoNotUse() {
        // 4,096 over 4 shards: split 1,024, floor 256; busy from 128 held.
        #expect(CapacityPool.shares(total: 4096, unacknowledged: [127, 0, 0, 0]) == [1024, 1024, 1024, 1024])
        #expect(CapacityPool.shares(total: 4096, unacknowledged: [128, 0, 0, 0]) == [3328, 256, 256, 256])
        #expect(CapacityPool.shares(total: 4096, unacknowledged: [3000, 5, 0, 0]) == [3328, 256, 256, 256])
        // Two busy shards split what is free (4,096 − 3,200 held − 2 × 256) on top of what each holds.
        #expect(CapacityPool.shares(total: 4096, unacknowledged: [3000, 200, 0, 0]) == [3192, 392, 256, 256])
        // The remainder goes to the first busy shards: 10 − 3 − 3 − 1 = 3, one each and one more.
        #expect(CapacityPool.shares(total: 10, unacknowledged: [3, 3, 0]) == [5, 4, 1])
        // Held past the total (shares lowered while firings were out): a busy shard keeps what it holds.
        #expect(CapacityPool.shares(total: 100, unacknowledged: [90, 40]) == [90, 40])
        // One shard: always the whole capacity.
        #expect(CapacityPool.shares(total: 64, unacknowledged: [0]) == [64])
        #expect(CapacityPool.shares(total: 64, unacknowledged: [60]) == [64])
        // More shards than capacity: at least 1 each.
        #expect(CapacityPool.shares(total: 2, unacknowledged: [1, 0, 0]) == [1, 1, 1])
        #expect(CapacityPool.shares(total: 0, unacknowledged: []) == [])
    }

    @Test func sharesAddUpToTheTotalWhateverTheDemand() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let total = Int.random(in: 1...5000, using: &generator)
            let count = Int.random(in: 1...12, using: &generator)
            var held = (0..<count).map { _ in Int.random(in: 0...(total / count + 5), using: &generator) }
            if held.reduce(0, +) > total { held = held.map { $0 / 2 } }
            guard held.reduce(0, +) <= total / 2, total >= count * 4 else { continue }
            let shares = CapacityPool.shares(total: total, unacknowledged: held)
            #expect(shares.reduce(0, +) <= total)
            for (share, holding) in zip(shares, held) { #expect(share >= max(1, holding)) }
        }
    }

    @Test func thePoolMovesSharesToTheShardThatReportsDemandAndBackWhenItLeaves() {
        let pool = CapacityPool(total: 64)
        let members = (0..<4).map { pool.join(shard: $0) }
        #expect(members.map(\.share.value) == [16, 16, 16, 16])
        members[2].report(unacknowledged: 16, monotonic: 1)
        #expect(members.map(\.share.value) == [4, 4, 52, 4])
        // Within the recompute interval a report is recorded but moves nothing ...
        members[2].report(unacknowledged: 0, monotonic: 1 + CapacityPool.recomputeInterval / 2)
        #expect(members.map(\.share.value) == [4, 4, 52, 4])
        // ... the next one after it does.
        members[0].report(unacknowledged: 0, monotonic: 2)
        #expect(members.map(\.share.value) == [16, 16, 16, 16])
        pool.leave(shard: 3)
        #expect(members.prefix(3).map(\.share.value) == [21, 21, 21])
        #expect(pool.join(shard: 0).share === members[0].share)
    }
}
