import ChimeCommandLine
import ChimeCore
import ChimeWire
import Foundation
import Testing

/// `chime up` watches its workers through every shard: a worker not alive for any shard that
/// answers is killed after the silence, whichever shard that is.
@Suite struct WorkerWatchTests {
    static func report(_ name: String, pid: Int32, alive: Bool) -> WorkerReport {
        WorkerReport(
            id: WorkerID(name), host: "h", pid: pid, alive: alive, lastSeenAt: Date(timeIntervalSince1970: 0), acknowledged: 0,
            delivered: 0)
    }

    @Test func aWorkerSilentOnAShardOtherThanZeroIsKilledAfterTheSilence() {
        var watch = WorkerWatch(silenceSeconds: 3)
        let running: [String: Int32] = ["worker-1": 11, "worker-2": 12]
        let listings: [Int: [WorkerReport]?] = [
            0: [Self.report("worker-1", pid: 11, alive: true), Self.report("worker-2", pid: 12, alive: true)],
            1: [Self.report("worker-1", pid: 11, alive: true), Self.report("worker-2", pid: 12, alive: false)],
        ]
        #expect(watch.observe(running: running, listings: listings, at: 100).isEmpty)
        #expect(watch.observe(running: running, listings: listings, at: 102.9).isEmpty)
        let kills = watch.observe(running: running, listings: listings, at: 103)
        #expect(kills.map(\.name) == ["worker-2"])
        #expect(kills.map(\.shards) == [[1]])
        #expect(watch.observe(running: running, listings: listings, at: 104).isEmpty, "the count starts again after a kill")
    }

    @Test func workersAreJudgedWhileShardZeroIsDown() {
        var watch = WorkerWatch(silenceSeconds: 3)
        let running: [String: Int32] = ["worker-1": 11]
        let listings: [Int: [WorkerReport]?] = [0: nil, 1: nil, 2: [Self.report("worker-1", pid: 11, alive: false)]]
        #expect(watch.observe(running: running, listings: listings, at: 0).isEmpty)
        #expect(watch.observe(running: running, listings: listings, at: 3).map(\.name) == ["worker-1"])
    }

    @Test func aWorkerAliveEverywhereOrOfAnotherPidIsLeftAlone() {
        var watch = WorkerWatch(silenceSeconds: 3)
        let running: [String: Int32] = ["worker-1": 11, "worker-2": 22]
        // worker-2's not-alive record is of its previous process (pid 21): the new one is not judged by it.
        let listings: [Int: [WorkerReport]?] = [
            0: [Self.report("worker-1", pid: 11, alive: true), Self.report("worker-2", pid: 21, alive: false)],
            1: [Self.report("worker-1", pid: 11, alive: true)],
        ]
        for second in 0...10 { #expect(watch.observe(running: running, listings: listings, at: Double(second)).isEmpty) }
    }

    @Test func noAnswerFromAnyShardForgetsTheCounts() {
        var watch = WorkerWatch(silenceSeconds: 3)
        let running: [String: Int32] = ["worker-1": 11]
        let silent: [Int: [WorkerReport]?] = [0: [Self.report("worker-1", pid: 11, alive: false)], 1: nil]
        #expect(watch.observe(running: running, listings: silent, at: 0).isEmpty)
        #expect(watch.observe(running: running, listings: [0: nil, 1: nil], at: 2).isEmpty)
        #expect(watch.observe(running: running, listings: silent, at: 4).isEmpty, "counted again from 4")
        #expect(watch.observe(running: running, listings: silent, at: 7).map(\.name) == ["worker-1"])
    }
}
