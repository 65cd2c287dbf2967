import ChimeClient
import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// Issue 42, item 4: `chime up --shards N` keeps a map register in its store, so `chime shards
/// map` and `chime shards move` work on it with no hand-written `cluster` section, and a
/// restart with another `--shards` says the store disagrees.
@Suite(.serialized) struct UpShardsRegisterTests {
    @Test func shardsCommandsUseTheRegisterUpKeepsInItsStore() throws {
        let cluster = try LocalCluster(portCount: 3 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        do {
            try Data("{}".utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
            let up = ["up", "--shards", "3", "--workers", "1", "--no-samples", "--no-dashboard", "--store", "store"]
            try cluster.spawn("up", up + cluster.clusterArguments)
            try waitForUp(cluster)
            let store = cluster.directory.path("store")
            #expect(FileManager.default.fileExists(atPath: store + "/map.json"))

            // One reminder in slot S of shard 0, then S moved to shard 2 through the register.
            let map = cluster.shardMap(shards: 3)
            let recipient = ShardedClusterTests.recipient(on: 0, of: map, prefix: "walk")
            let slot = map.slot(of: recipient)
            let scheduled = try cluster.run(["schedule", "--id", "walk", "--recipient", recipient.rawValue, "--in", "1h"])
            #expect(scheduled.status == 0, "\(scheduled.error)")

            let shards = { (arguments: [String]) in try LocalCluster.run(binary: cluster.binary, ["shards"] + arguments + ["--store", store]) }
            let before = try shards(["map"])
            #expect(before.status == 0, "\(before.error)")
            #expect(before.output == """
                map epoch 1, 4096 slots, register version 1
                shard  slots  reminders  ranges
                0      1365   1          0-1364
                1      1365   0          1365-2729
                2      1366   0          2730-4095

                """)
            let moved = try shards(["move", String(slot), "--to", "2", "--timeout", "60"])
            #expect(moved.status == 0, "\(moved.output)\(moved.error)")
            let after = try shards(["map", "--json"])
            let document = try #require(try JSONSerialization.jsonObject(with: Data(after.output.utf8)) as? [String: Any])
            let result = try #require(document["result"] as? [String: Any])
            let rows = try #require(result["shards"] as? [[String: Any]])
            #expect(rows.map { $0["slots"] as? Int } == [1364, 1365, 1367])
            #expect(rows.map { $0["reminders"] as? Int } == [0, 0, 1])
            #expect(result["mapEpoch"] as? Int == 2)

            // Another --shards on this store: warned, then refused (it is running).
            let other = try LocalCluster.run(binary: cluster.binary, ["up", "--shards", "2", "--store", store] + cluster.clusterArguments, timeout: 20)
            let coordinator0 = try #require(cluster.log(of: "up").firstMatch(of: /coordinator pids (\d+),/)).1
            #expect(other.status == 1)
            #expect(other.error.split(separator: "\n").map(String.init) == [
                "chime: warning: the map register \(store)/map.json names 3 shards, not 2 (--shards): its map wins, so a shard it does not name refuses slots it gives to others and a shard left out is not served; run 'chime up --shards 3'",
                "chime: already running (pid \(coordinator0)): the store \(store)/shard-0 is locked; stop that cluster first, or give another --store and --port-base",
            ])
        } catch {
            print("chime up --shards failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }

    func waitForUp(_ cluster: LocalCluster) throws {
        try expectEventually(timeout: 30, "chime up to report its cluster") {
            guard cluster.pid(of: "up") != nil else { throw DeadlineExceeded(what: "chime up exited:\n\(cluster.log(of: "up"))", seconds: 0) }
            return cluster.log(of: "up").contains("Ctrl-C to stop")
        }
    }
}
