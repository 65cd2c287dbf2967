import ChimeClient
import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// A worker follows the shard map: started against a one-shard cluster, it serves a second
/// shard once shard 0 answers a map of a higher epoch naming it, and stops serving it (saying
/// it leaves) once shard 0 answers a map without it, all without a restart.
@Suite(.serialized) struct WorkerMapFollowingTests {
    /// Writes `name` holding `map` as the `cluster` section (HTTP off, workers reading the map
    /// every `refresh` seconds).
    static func writeConfiguration(_ map: ShardMap, refresh: Double, to name: String, in cluster: LocalCluster) throws {
        let encoded = String(decoding: try JSONEncoder().encode(map), as: UTF8.self)
        let section = encoded.dropLast() + #", "mapRefreshSeconds": \#(refresh)}"#
        let json = #"{"http": {"listen": "off"}, "heartbeat": {"intervalMilliseconds": 200}, "cluster": \#(section)}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: cluster.directory.path(name)))
    }

    @Test func aWorkerServesAShardThatAppearsAndLeavesAShardThatGoesWithoutARestart() throws {
        let cluster = try LocalCluster(portCount: 2 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        var grown = cluster.shardMap(shards: 2)
        grown.mapEpoch = 2
        let first = ShardMap(
            mapEpoch: 1, shards: [ShardMap.Shard(id: 0, slots: [ShardMap.SlotRange(0, 4095)], endpoints: grown.shards[0].endpoints)])
        do {
            try Self.writeConfiguration(first, refresh: 0.5, to: "one.json", in: cluster)
            try Self.writeConfiguration(grown, refresh: 0.5, to: "two.json", in: cluster)
            let zero = grown.shards[0].endpoints.control
            let one = grown.shards[1].endpoints.control
            try cluster.spawn("shard-0", ["coordinator", "--shard", "0", "--store", "store-0", "--config", cluster.directory.path("one.json")])
            try cluster.waitForCoordinator(at: zero, timeout: 20)
            // The worker's own configuration names one shard; it learns of the second from shard 0.
            try cluster.spawn("worker-1", ["worker", "--id", "worker-1", "--config", cluster.directory.path("one.json")])
            try cluster.waitForAliveWorkers(1, at: zero, timeout: 20)

            // The cluster grows: shard 1 starts, and shard 0 restarts on the map of epoch 2.
            try cluster.spawn("shard-1", ["coordinator", "--shard", "1", "--store", "store-1", "--config", cluster.directory.path("two.json")])
            try cluster.waitForCoordinator(at: one, timeout: 20)
            #expect(cluster.stop("shard-0")?.neededKill == false)
            try cluster.spawn("shard-0", ["coordinator", "--shard", "0", "--store", "store-0", "--config", cluster.directory.path("two.json")])
            try cluster.waitForCoordinator(at: zero, timeout: 20)

            // Within a few refresh intervals the worker serves shard 1 (no worker restart).
            let started = ContinuousClock.now
            try cluster.waitForAliveWorkers(1, at: one, timeout: 20)
            let joined = ContinuousClock.now - started
            #expect(cluster.pid(of: "worker-1") != nil)
            #expect(cluster.log(of: "worker-1").contains("following a new shard map"))

            let client = try ControlClient(endpoint: one, timeout: .seconds(5), retries: 0)
            let collector = EventCollector(endpoint: grown.shards[1].endpoints.events)
            defer { collector.close() }
            try ClusterDeliveryTests.waitUntilSubscribed(
                collector, client: client, recipient: ShardedClusterTests.recipient(on: 1, of: grown, prefix: "probe"))
            let recipient = ShardedClusterTests.recipient(on: 1, of: grown, prefix: "grown")
            let due = Date().addingTimeInterval(1)
            let reminders = (0..<50).map { index in
                Reminder(
                    id: ReminderID("grown-\(index)"), recipient: recipient, content: Content(body: "g\(index)"),
                    trigger: Trigger(start: .instant(due.addingTimeInterval(Double(index) * 0.01))))
            }
            try ShardedClusterTests.schedule(reminders, on: client)
            func grownEvents() -> [FireEvent] { collector.received.filter { $0.firing.reminderId.rawValue.hasPrefix("grown-") } }
            try expectEventually(timeout: 20, "50 firings of shard 1") { Set(grownEvents().map(\.firing.reminderId)).count == 50 }
            try expectEventually(timeout: 10, "nothing in flight on shard 1") {
                try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.inFlight == 0
            }
            let events = grownEvents()
            #expect(events.count == 50, "each firing exactly once")
            #expect(Set(events.map(\.firing.reminderId)) == Set(reminders.map(\.id)))
            #expect(events.allSatisfy { $0.shard == 1 && $0.publisher == "worker-1" })
            print("worker joined shard 1 \(joined) after shard 0 served the map of epoch 2")

            // The cluster shrinks back (epoch 3: shard 0 owns every slot again) while shard 1
            // still runs on epoch 2: without keys one shard's newer map beside a live shard that
            // disagrees is not followed (issue 37 item 5: it could be a rogue on a shard's port).
            let shrunk = ShardMap(
                mapEpoch: 3, shards: [ShardMap.Shard(id: 0, slots: [ShardMap.SlotRange(0, 4095)], endpoints: grown.shards[0].endpoints)])
            try Self.writeConfiguration(shrunk, refresh: 0.5, to: "three.json", in: cluster)
            #expect(cluster.stop("shard-0")?.neededKill == false)
            try cluster.spawn("shard-0", ["coordinator", "--shard", "0", "--store", "store-0", "--config", cluster.directory.path("three.json")])
            try cluster.waitForCoordinator(at: zero, timeout: 20)
            try expectEventually(timeout: 20, "the worker to decline epoch 3 while shard 1 answers epoch 2") {
                cluster.log(of: "worker-1").contains("not following a shard map that most shards do not answer")
            }
            try cluster.waitForAliveWorkers(1, at: one, timeout: 10)
            // Shard 1 stops (as a shard leaving the cluster does): the one shard that answers
            // confirms epoch 3, and the worker stops serving shard 1 and keeps serving shard 0.
            #expect(cluster.stop("shard-1")?.neededKill == false)
            try expectEventually(timeout: 20, "the worker to follow the map of epoch 3") {
                cluster.log(of: "worker-1").components(separatedBy: "\n").contains {
                    $0.contains("following a new shard map") && $0.contains("mapEpoch=3")
                }
            }
            #expect(cluster.log(of: "worker-1").components(separatedBy: "\n").contains {
                $0.contains("following a new shard map") && $0.contains("mapEpoch=3") && $0.contains("stopped=[1]")
            })
            try cluster.waitForAliveWorkers(1, at: zero, timeout: 10)
            #expect(cluster.pid(of: "worker-1") != nil)
        } catch {
            cluster.stop()
            print("map following failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }
    /// SIGHUP reads the map at once: a worker whose interval is an hour follows the grown map
    /// as soon as it is told to.
    @Test func sighupReadsTheMapAtOnce() throws {
        let cluster = try LocalCluster(portCount: 2 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        var grown = cluster.shardMap(shards: 2)
        grown.mapEpoch = 2
        let first = ShardMap(
            mapEpoch: 1, shards: [ShardMap.Shard(id: 0, slots: [ShardMap.SlotRange(0, 4095)], endpoints: grown.shards[0].endpoints)])
        do {
            try Self.writeConfiguration(first, refresh: 3600, to: "one.json", in: cluster)
            try Self.writeConfiguration(grown, refresh: 3600, to: "two.json", in: cluster)
            let zero = grown.shards[0].endpoints.control
            let one = grown.shards[1].endpoints.control
            try cluster.spawn("shard-0", ["coordinator", "--shard", "0", "--store", "store-0", "--config", cluster.directory.path("two.json")])
            try cluster.spawn("shard-1", ["coordinator", "--shard", "1", "--store", "store-1", "--config", cluster.directory.path("two.json")])
            try cluster.waitForCoordinator(at: zero, timeout: 20)
            try cluster.waitForCoordinator(at: one, timeout: 20)
            // The worker's configuration names shard 0 only, at epoch 1; shard 0 already serves epoch 2.
            try cluster.spawn("worker-1", ["worker", "--id", "worker-1", "--config", cluster.directory.path("one.json")])
            try cluster.waitForAliveWorkers(1, at: zero, timeout: 20)
            let client = try ControlClient(endpoint: one, timeout: .seconds(1), retries: 0)
            func workersOfOne() -> Int {
                (try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self).result?.workers.count) ?? -1
            }
            #expect(workersOfOne() == 0, "not before it is told")
            cluster.send(SIGHUP, to: "worker-1")
            try cluster.waitForAliveWorkers(1, at: one, timeout: 10)
            #expect(cluster.log(of: "worker-1").contains("following a new shard map"))
        } catch {
            cluster.stop()
            print("SIGHUP map read failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }
    /// The worker's HTTP probe belongs to its loop, not to a shard's service: when the first
    /// shard leaves the map, the probe goes on answering, never restarted.
    @Test func theHTTPProbeStaysWhenItsFirstShardLeaves() throws {
        let cluster = try LocalCluster(portCount: 2 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        let grown = cluster.shardMap(shards: 2)
        var onlyOne = ShardMap(
            mapEpoch: 2, shards: [ShardMap.Shard(id: 1, slots: [ShardMap.SlotRange(0, 4095)], endpoints: grown.shards[1].endpoints)])
        onlyOne.slotCount = grown.slotCount
        let httpPort = cluster.portBase + 7
        do {
            try Self.writeConfiguration(grown, refresh: 0.3, to: "two.json", in: cluster)
            try Self.writeConfiguration(onlyOne, refresh: 0.3, to: "one.json", in: cluster)
            let one = grown.shards[1].endpoints.control
            try cluster.spawn("shard-0", ["coordinator", "--shard", "0", "--store", "store-0", "--config", cluster.directory.path("two.json")])
            try cluster.spawn("shard-1", ["coordinator", "--shard", "1", "--store", "store-1", "--config", cluster.directory.path("two.json")])
            try cluster.waitForCoordinator(at: grown.shards[0].endpoints.control, timeout: 20)
            try cluster.waitForCoordinator(at: one, timeout: 20)
            try cluster.spawn(
                "worker-1", ["worker", "--id", "worker-1", "--http", "127.0.0.1:\(httpPort)", "--config", cluster.directory.path("two.json")])
            try cluster.waitForAliveWorkers(1, at: one, timeout: 20)
            try expectEventually(timeout: 10, "the worker's /readyz") { LoopbackHTTP.get(port: httpPort, path: "/readyz")?.status == 200 }

            // Shard 1 alone (epoch 2): shard 0 is stopped and leaves the map.
            #expect(cluster.stop("shard-0")?.neededKill == false)
            #expect(cluster.stop("shard-1")?.neededKill == false)
            try cluster.spawn("shard-1", ["coordinator", "--shard", "1", "--store", "store-1", "--config", cluster.directory.path("one.json")])
            try cluster.waitForCoordinator(at: one, timeout: 20)
            try expectEventually(timeout: 20, "the worker to follow the map of epoch 2") {
                cluster.log(of: "worker-1").contains("following a new shard map")
            }
            // Shard 0's service says it stops; shard 1's goes on, and so does the probe.
            try expectEventually(timeout: 10, "shard 0's service to stop") {
                cluster.log(of: "worker-1").components(separatedBy: "\n").contains { $0.contains("worker stopping") && $0.contains("shard=0") }
            }
            try cluster.waitForAliveWorkers(1, at: one, timeout: 20)
            #expect(LoopbackHTTP.get(port: httpPort, path: "/readyz")?.status == 200)
            #expect(LoopbackHTTP.get(port: httpPort, path: "/healthz")?.status == 200)
            let log = cluster.log(of: "worker-1")
            #expect(log.components(separatedBy: "worker serving HTTP").count == 2, "HTTP started once")
            let lines = log.components(separatedBy: "\n")
            #expect(lines.filter { $0.contains("worker ready") && $0.contains("shard=1") }.count == 1, "shard 1's service never restarted")
            #expect(cluster.pid(of: "worker-1") != nil)
        } catch {
            cluster.stop()
            print("HTTP probe check failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }

    /// A worker's threads do not grow with the shards it serves: one loop polls every
    /// shard's sockets in one ZeroMQ context (before, each shard had a thread and a context,
    /// whose I/O thread and reaper made three threads a shard).
    @Test func aWorkersThreadsDoNotGrowWithItsShards() throws {
        let cluster = try LocalCluster(portCount: 6 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        do {
            var counts: [Int: Int] = [:]
            for shards in [1, 6] {
                // No coordinator runs: ZeroMQ connects in the background, and the worker's
                // services open their sockets all the same.
                try Self.writeConfiguration(cluster.shardMap(shards: shards), refresh: 60, to: "map-\(shards).json", in: cluster)
                let name = "worker-\(shards)"
                try cluster.spawn(name, ["worker", "--id", name, "--config", cluster.directory.path("map-\(shards).json")])
                // Each service takes firings once `eventPathWait` (1 s) passes with no subscriber.
                try expectEventually(timeout: 20, "\(name)'s \(shards) services to open") {
                    cluster.log(of: name).components(separatedBy: "no subscriber yet").count == shards + 1
                }
                guard let pid = cluster.pid(of: name) else { throw DeadlineExceeded(what: "\(name)'s pid", seconds: 0) }
                counts[shards] = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count
                #expect(cluster.stop(name)?.neededKill == false)
            }
            #expect(counts[1] != nil && counts[1] == counts[6], "threads with 1 shard and with 6: \(counts)")
        } catch {
            cluster.stop()
            print("thread count check failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }
}
