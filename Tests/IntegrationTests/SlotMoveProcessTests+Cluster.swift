import ChimeClient
import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// The cluster the slot move process tests share, and the checks they all end with.
extension SlotMoveProcessTests {
    /// Writes the configuration (shards 0 and 1 splitting the slots, shard 2 listed with none,
    /// a map register file, fast failover) and starts shards 0 and 1 and two workers.
    /// - Parameter configMapServer: keep the register in this stand-in API server's ConfigMap
    ///   instead (every process gets the `CHIME_KUBERNETES_*` overrides), and configure shard 2
    ///   only when it starts (`startThirdShard(_:map:joinsLater:)`), as a scaled-up StatefulSet.
    /// - Returns: the configured map (epoch 1, shard 2 empty).
    static func startTwoShardsWithRegister(_ cluster: LocalCluster, configMapServer: KubernetesAPIStandIn? = nil) throws -> ShardMap {
        if let configMapServer {
            let tokenFile = cluster.directory.path("token")
            try Data("move-token".utf8).write(to: URL(fileURLWithPath: tokenFile))
            cluster.environment = [
                "CHIME_KUBERNETES_API": configMapServer.baseURL, "CHIME_KUBERNETES_TOKEN_FILE": tokenFile,
                "CHIME_KUBERNETES_CA_FILE": "", "CHIME_KUBERNETES_NAMESPACE": configMapServer.namespace,
            ]
        }
        let three = cluster.shardMap(shards: 3)
        let two = ShardMap.evenlySplit(shards: 2) { three.shards[$0].endpoints }
        // Shard 2 is in the configuration (its endpoints) with no slots: the shard added later.
        var shards = two.shards
        shards.append(ShardMap.Shard(id: 2, slots: [], endpoints: three.shards[2].endpoints))
        let map = ShardMap(mapEpoch: 1, slotCount: two.slotCount, shards: shards)
        let register = configMapServer == nil ? cluster.directory.path("map-register.json") : "configmap:chime-shard-map"
        // With the ConfigMap register shard 2 is not configured at first (a StatefulSet of 2).
        try writeConfiguration(
            configMapServer == nil ? map : ShardMap(mapEpoch: 1, slotCount: map.slotCount, shards: Array(map.shards.prefix(2))),
            register: register, cluster)
        for id in [0, 1] {
            try cluster.spawn("shard-\(id)", ["coordinator", "--shard", String(id), "--store", "store-\(id)"] + cluster.shardedArguments)
            try cluster.waitForCoordinator(at: map.shards[id].endpoints.control, timeout: 20)
        }
        try cluster.spawn("worker-1", ["worker", "--id", "worker-1"] + cluster.shardedArguments)
        try cluster.spawn("worker-2", ["worker", "--id", "worker-2"] + cluster.shardedArguments)
        for id in [0, 1] { try cluster.waitForAliveWorkers(2, at: map.shards[id].endpoints.control, timeout: 20) }
        if let configMapServer {
            #expect(configMapServer.configMap("chime-shard-map") != nil)
        } else {
            #expect(FileManager.default.fileExists(atPath: register))
        }
        return map
    }

    /// Writes `chime.json`: `map` as the `cluster` section with `register`, fast failover.
    static func writeConfiguration(_ map: ShardMap, register: String, _ cluster: LocalCluster) throws {
        var clusterJSON = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(map)) as? [String: Any])
        clusterJSON["register"] = register
        clusterJSON["mapRefreshSeconds"] = 1
        let config: [String: Any] = [
            "http": ["listen": "off"], "cluster": clusterJSON,
            "coordinator": ["leaseSeconds": 2, "maxAttempts": 50, "eventRetention": 1_000_000],
            "heartbeat": ["intervalMilliseconds": 200, "liveness": 3],
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
    }

    /// Starts shard 2's coordinator and waits until both workers serve it.
    /// - Parameter joinsLater: shard 2 enters the configuration now (the ConfigMap register's
    ///   case): its coordinator joins the register's map itself, one epoch up.
    static func startThirdShard(_ cluster: LocalCluster, map: ShardMap, joinsLater: Bool = false) throws {
        if joinsLater { try writeConfiguration(map, register: "configmap:chime-shard-map", cluster) }
        try cluster.spawn("shard-2", ["coordinator", "--shard", "2", "--store", "store-2"] + cluster.shardedArguments)
        try cluster.waitForCoordinator(at: map.shards[2].endpoints.control, timeout: 20)
        try cluster.waitForAliveWorkers(2, at: map.shards[2].endpoints.control, timeout: 20)
    }

    /// `chime shards move 0-1023 --to TARGET` in batches of 256 slots (four moves).
    static func moveArguments(to target: Int, _ cluster: LocalCluster) -> [String] {
        ["shards", "move", "0-1023", "--to", String(target), "--batch-slots", "256", "--json", "--timeout", "40"] + cluster.shardedArguments
    }

    /// The `result` of a `--json` mover's output, or `nil` when it printed none.
    static func moveResult(_ output: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])?["result"] as? [String: Any]
    }

    /// Checks that the cluster is back at the configured ranges after `rounds` rounds of
    /// 2 → 3 → 2 (four committed moves each way per round).
    /// `joined`: shard 2 joined the register's map (one epoch more).
    static func expectBackToTwoShards(_ cluster: LocalCluster, rounds: Int, joined: Bool = false) throws {
        let mapRun = try LocalCluster.run(
            binary: cluster.binary, ["shards", "map", "--json"] + cluster.shardedArguments, environment: cluster.environment)
        let mapResult = try #require(moveResult(mapRun.output))
        #expect(mapResult["mapEpoch"] as? Int == 1 + 8 * rounds + (joined ? 1 : 0))
        let rows = try #require(mapResult["shards"] as? [[String: Any]])
        #expect(rows.map { $0["slots"] as? Int } == [2048, 2048, 0])
    }

    /// Checks the guarantees of a move on the final cluster (slots 0–1023 on shard 0 again, as
    /// in `map`): every acknowledged reminder is listed exactly once, on the shard `map`
    /// names; every due firing of one is in the shards' catch-up (waiting up to 30 s);
    /// duplicates only under the same firing id.
    /// - Returns: the number of due firings expected and of duplicates seen.
    static func expectNothingLost(_ acknowledged: [Reminder], map: ShardMap, _ context: String) throws -> (firings: Int, duplicates: Int) {
        var holders: [ReminderID: [Int]] = [:]
        for shard in map.shards {
            let client = try ControlClient(endpoint: shard.endpoints.control, timeout: .seconds(3), retries: 2)
            var cursor: PageCursor?
            repeat {
                let page = try client.send(
                    ControlRequest(command: .list(ReminderFilter(), all: true, limit: 1000, cursor: cursor)), expecting: ListResult.self)
                for listing in page.result?.reminders ?? [] { holders[listing.reminder.id, default: []].append(shard.id) }
                cursor = try page.result?.nextCursor.map { text throws(WireError) in try PageCursor(text: text, expecting: .list) }
            } while cursor != nil
        }
        let misplaced = acknowledged.filter { holders[$0.id] != [map.shard(of: $0.recipient)?.id ?? -1] }
        #expect(misplaced.isEmpty, "\(misplaced.count) of \(acknowledged.count): \(misplaced.prefix(5).map { "\($0.id) on \(holders[$0.id] ?? [])" })")

        // Every due firing at a gap-free subscriber (catch-up on every shard).
        let expected = Set(acknowledged.flatMap { Durability.dueFiringIDs(of: $0, through: .distantFuture) })
        // Retained events stay on the shard that published them (each kept here by shard
        // asked, seq and firing id).
        let clients = try map.shards.map { try ControlClient(endpoint: $0.endpoints.control, timeout: .seconds(2), retries: 2) }
        var seen: [FireEvent] = []
        try expectEventually(timeout: 30, interval: 0.2, "every acknowledged reminder's firing") {
            var byKey: [String: FireEvent] = [:]
            for (index, client) in clients.enumerated() {
                var after: UInt64 = 0
                while let result = (try? client.send(
                    ControlRequest(command: .events(after: after, recipient: nil, limit: 1000)), expecting: EventsResult.self))?.result
                {
                    for event in result.events { byKey["\(index)/\(event.seq)/\(event.firing.firingId)"] = event }
                    guard result.through > after, !result.events.isEmpty else { break }
                    after = result.through
                }
            }
            seen = byKey.values.filter { $0.firing.reminderId.rawValue.hasPrefix("m-") }
            return expected.isSubset(of: Set(seen.map(\.firing.firingId)))
        }
        return (expected.count, Durability.expectDuplicatesShareTheirFiringID(seen, context))
    }
}
