import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeWorker

/// A worker follows the shard map: a newer valid map starts, stops and reconnects per-shard
/// services; an older, equal or invalid one changes nothing; a lowered capacity is announced.
@Suite struct MapFollowerTests {
    static func endpoints(_ port: Int) -> ShardMap.Endpoints {
        ShardMap.Endpoints(
            control: "tcp://127.0.0.1:\(port)", dispatch: "tcp://127.0.0.1:\(port + 1)", results: "tcp://127.0.0.1:\(port + 2)",
            events: "tcp://127.0.0.1:\(port + 3)", eventsIngest: "tcp://127.0.0.1:\(port + 4)")
    }

    static func map(epoch: UInt64, shards: Int, port: (Int) -> Int = { 7700 + 10 * $0 }) -> ShardMap {
        var map = ShardMap.evenlySplit(shards: shards) { endpoints(port($0)) }
        map.mapEpoch = epoch
        return map
    }

    @Test func aNewShardInAMapOfHigherEpochIsStarted() {
        var follower = MapFollower(map: Self.map(epoch: 1, shards: 1))
        let two = Self.map(epoch: 2, shards: 2)
        #expect(follower.consider(two) == .adopt(MapFollower.Change(started: [two.shards[1]])))
        #expect(follower.map == two)
    }

    @Test func aShardGoneFromTheMapIsStoppedAndOneWithNewEndpointsReconnected() {
        var follower = MapFollower(map: Self.map(epoch: 3, shards: 3))
        // Shard 2 leaves; shard 1 moves to other ports; shard 0 keeps its endpoints.
        var next = Self.map(epoch: 4, shards: 2) { $0 == 1 ? 9000 : 7700 + 10 * $0 }
        next.shards[0].slots = [ShardMap.SlotRange(0, 99)]
        next.shards[1].slots = [ShardMap.SlotRange(100, 4095)]
        #expect(follower.consider(next) == .adopt(MapFollower.Change(stopped: [2], reconnected: [next.shards[1]])))
        #expect(follower.map.mapEpoch == 4)
    }

    @Test func aMapThatOnlyMovesSlotsIsAdoptedWithNothingToRestart() {
        var follower = MapFollower(map: Self.map(epoch: 1, shards: 2))
        var moved = Self.map(epoch: 2, shards: 2)
        moved.shards[0].slots = [ShardMap.SlotRange(0, 1000)]
        moved.shards[1].slots = [ShardMap.SlotRange(1001, 4095)]
        let decision = follower.consider(moved)
        #expect(decision == .adopt(MapFollower.Change()))
        if case .adopt(let change) = decision { #expect(change.isEmpty) }
        #expect(follower.map == moved)
    }

    @Test(arguments: [UInt64(1), 4])
    func aMapOfLowerOrEqualEpochIsIgnored(epoch: UInt64) {
        let served = Self.map(epoch: 4, shards: 2)
        var follower = MapFollower(map: served)
        #expect(follower.consider(Self.map(epoch: epoch, shards: 3)) == .stale(current: 4, fetched: epoch))
        #expect(follower.map == served)
    }

    @Test func anInvalidMapIsRefusedAndTheOldOneKept() {
        let served = Self.map(epoch: 1, shards: 2)
        var follower = MapFollower(map: served)
        var gap = Self.map(epoch: 2, shards: 2)
        gap.shards[1].slots = [ShardMap.SlotRange(2049, 4095)]
        guard case .invalid(let error) = follower.consider(gap) else {
            Issue.record("a map with a gap was not refused")
            return
        }
        #expect(error.code == .invalidArgument)
        #expect(error.message == "slot 2048 is owned by no shard")
        #expect(follower.map == served)
    }

    @Test(arguments: ["", "tcp://", "7701", "udp://127.0.0.1:7701"])
    func aMapWithAnEndpointAWorkerCannotConnectToIsRefused(dispatch: String) {
        let served = Self.map(epoch: 1, shards: 1)
        var follower = MapFollower(map: served)
        var broken = Self.map(epoch: 2, shards: 2)
        broken.shards[1].endpoints.dispatch = dispatch
        guard case .invalid(let error) = follower.consider(broken) else {
            Issue.record("a map with dispatch '\(dispatch)' was not refused")
            return
        }
        #expect(error.field == "shards[1].endpoints.dispatch")
        #expect(follower.map == served)
    }

    @Test func aChangedCapacityIsAnnouncedAtTheNextTick() {
        var state = WorkerState(id: "w", host: "h", pid: 1, heartbeatInterval: 1, capacity: 100)
        _ = state.onTick(monotonic: 10)
        #expect(state.onTick(monotonic: 10.5).isEmpty, "no heartbeat due yet")
        state.changeCapacity(to: 50)
        let directives = state.onTick(monotonic: 10.6)
        guard case .announce(let announcement)? = directives.first else {
            Issue.record("expected an announcement, got \(directives)")
            return
        }
        #expect(announcement.capacity == 50)
        #expect(directives.count == 2)
    }

    /// Issue 37 item 5: keys off, a process on the port of a configured shard that is not
    /// running answered `map` with epoch 99 and the worker followed it for good.
    @Test func withoutKeysANewerMapNeedsAMajorityOfTheServedShardsThatAnswer() {
        let served = Self.map(epoch: 1, shards: 2)
        let follower = MapFollower(map: served)
        let control = served.shards.map(\.endpoints.control)
        let rogue = Self.map(epoch: 99, shards: 1) { _ in 40000 }
        #expect(follower.confirmed(among: [control[0]: served, control[1]: rogue]) == nil, "one of two is not a majority")
        #expect(follower.confirmed(among: [control[0]: served, control[1]: rogue, "tcp://seed:1": rogue, "tcp://seed:2": rogue]) == nil, "seeds do not vote")
        #expect(follower.confirmed(among: ["tcp://seed:1": rogue]) == nil, "no shard served answered")
        let legit = Self.map(epoch: 2, shards: 3)
        #expect(follower.confirmed(among: [control[0]: legit, control[1]: legit]) == legit)
        #expect(follower.confirmed(among: [control[1]: legit]) == legit, "the only shard that answers")
        // Three shards: two answers of the same map confirm it beside a third on another; a
        // newer map only one of three answers does not, and the confirmed older one is taken.
        let three = MapFollower(map: Self.map(epoch: 5, shards: 3))
        let voters = three.map.shards.map(\.endpoints.control)
        let six = Self.map(epoch: 6, shards: 3)
        let seven = Self.map(epoch: 7, shards: 4)
        #expect(three.confirmed(among: [voters[0]: six, voters[1]: six, voters[2]: three.map]) == six)
        #expect(three.confirmed(among: [voters[0]: six, voters[1]: seven, voters[2]: six]) == six)
        #expect(three.confirmed(among: [voters[0]: six, voters[1]: seven, voters[2]: three.map]) == nil)
        #expect(three.confirmed(among: [voters[0]: three.map, voters[1]: three.map, voters[2]: three.map]) == nil, "not newer")
    }
}
