import ChimeClient
import ChimeCoordinator
import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Synchronization
import Testing

/// Issue 27, end to end: a 2-shard cluster with a map register file grows to 3 shards and
/// shrinks back under a steady schedule load (firings due about every 10 ms): `chime shards
/// move 0-1023 --to 2`, then `--to 0`. Every acknowledged reminder is listed exactly once, on
/// the shard the final map names; every due firing reaches a gap-free subscriber (catch-up
/// on every shard); duplicates only under the same firing id. A `ClusterSubscriber` and a
/// `chime subscribe --json` running throughout get each committed move's hand-over event once,
/// and (without kills) each moved slot's events from the source before its hand-over and from
/// the target after it.
@Suite(.serialized) struct SlotMoveProcessTests {
    /// The schedule load: one thread, one `ClusterClient` (which follows `wrong_shard` and
    /// waits out `try_again`), two reminders per request every 20 ms, due 0.3–1.5 s later.
    final class Load: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false
        private(set) var acknowledged: [Reminder] = []
        private(set) var refused: [String] = []
        private(set) var unanswered = 0
        /// The longest a request took to be acknowledged (waits for `try_again` included), in seconds.
        private(set) var slowest: TimeInterval = 0
        let done = DispatchSemaphore(value: 0)

        func run(seeds: [String], recipients: [RecipientID]) {
            Thread.detachNewThread { [self] in
                defer { done.signal() }
                guard let client = try? ClusterClient(seeds: seeds, timeout: .seconds(2), retries: 3) else { return }
                var random = SeededRandomNumberGenerator(seed: 27)
                var n = 0
                while !(lock.withLock { stopped }) {
                    let due = Date().addingTimeInterval(Double.random(in: 0.3...1.5, using: &random))
                    let recipient = recipients[Int.random(in: 0..<recipients.count, using: &random)]
                    guard let reminders = try? (0..<2).map({ index in
                        try Durability.normalized(Reminder(
                            id: ReminderID("m-\(n)-\(index)"), recipient: recipient, content: Content(body: "m"),
                            trigger: Trigger(start: .instant(Durability.wholeMilliseconds(due.addingTimeInterval(Double(index) * 0.01))))))
                    }) else { return }
                    n += 1
                    let sent = Date()
                    do {
                        let reply = try client.schedule(reminders, requestId: "load-\(n)")
                        lock.withLock {
                            if reply.ok {
                                acknowledged += reminders
                                slowest = max(slowest, Date().timeIntervalSince(sent))
                            } else {
                                refused.append("\(reply.error?.message ?? "?")")
                            }
                        }
                    } catch let error as WireError {
                        lock.withLock {
                            if error.code == .unavailable { unanswered += 1 } else { refused.append("\(error.code.rawValue): \(error.message) (sent \(RFC3339.format(sent)), \(Int(Date().timeIntervalSince(sent) * 1000)) ms)") }
                        }
                    } catch {
                        lock.withLock { refused.append("\(error)") }
                    }
                    Thread.sleep(forTimeInterval: 0.02)
                }
            }
        }

        func stop() {
            lock.withLock { stopped = true }
            done.wait()
        }
    }

    @Test func aClusterGrowsToThreeShardsAndShrinksBackUnderLoadLosingNothing() throws {
        try growAndShrink(rounds: 1, killMover: false)
    }

    /// The same with the mover killed (kill -9) at a seeded random moment of each move and
    /// run again: the rerun resumes the open move (or opens it, when the kill came first).
    /// `CHIME_MOVE_ROUNDS=N` runs N rounds of 2 → 3 → 2 (the long form; also for the next
    /// test), `CHIME_MOVE_PROCESS_SEED=S` other kill moments.
    @Test func aKilledMoverIsRerunAndTheMoveCompletes() throws {
        let rounds = ProcessInfo.processInfo.environment["CHIME_MOVE_ROUNDS"].flatMap(Int.init) ?? 1
        try growAndShrink(rounds: max(1, rounds), killMover: true)
    }

    /// The source or the target coordinator (alternately) killed -9 at a seeded moment of each
    /// move, with the mover, and restarted; the rerun mover finishes the move.
    @Test func aSourceOrTargetKilledMidMoveRecoversAndTheMoveCompletes() throws {
        let rounds = ProcessInfo.processInfo.environment["CHIME_MOVE_ROUNDS"].flatMap(Int.init) ?? 1
        try growAndShrink(rounds: max(1, rounds), killMover: true, killShard: true)
    }

    /// The same as the first test with the map register in a Kubernetes ConfigMap, served by a
    /// stand-in API server on loopback (`KubernetesAPIStandIn`, plain HTTP, a bearer token):
    /// every process reaches it through `cluster.register = configmap:chime-shard-map` and the
    /// `CHIME_KUBERNETES_*` overrides. Shard 2 joins as a scaled-up StatefulSet's would: it is
    /// configured only when its coordinator starts, and joins the register's map itself.
    @Test func aClusterGrowsAndShrinksWithItsRegisterInAConfigMap() throws {
        let server = try KubernetesAPIStandIn(namespace: "chime")
        server.setFaults { $0.token = "move-token" }
        try growAndShrink(rounds: 1, killMover: false, configMapServer: server)
        let stored = try #require(server.configMap("chime-shard-map")?.data["register.json"])
        let record = try SlotMapRegisterFile.decode(Data(stored.utf8))
        // One epoch for shard 2's joining, one per move.
        #expect(record.map.mapEpoch == 10)
        #expect(record.outcomes.count == 8)
        #expect(record.open.isEmpty)
        // Every write was a compare-and-swap: the join, then open and commit of 8 moves.
        #expect(server.requests.filter { $0.hasPrefix("PUT") }.count >= 17)
        #expect(server.requests.filter { $0.hasPrefix("POST") }.count == 1)
        let byMethod = Dictionary(grouping: server.requests) { String($0.prefix { $0 != " " }) }.mapValues(\.count)
        print("configmap register: API requests by method \(byMethod.sorted { $0.key < $1.key })")
    }

    func growAndShrink(rounds: Int, killMover: Bool, killShard: Bool = false, configMapServer: KubernetesAPIStandIn? = nil) throws {
        let cluster = try LocalCluster(portCount: 3 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        do {
            let map = try Self.startTwoShardsWithRegister(cluster, configMapServer: configMapServer)
            let environment = cluster.environment
            let joinsLater = configMapServer != nil
            // With shard 2 joining later (the ConfigMap case) both subscribers start before it
            // joins and follow the register's map: `chime subscribe` by itself, the
            // ClusterSubscriber with a map source reading the ConfigMap; each subscribes
            // shard 2 when the map names it (from its seq 0) and must miss none of its events.
            let following = configMapServer.map { server in
                ClusterSubscriber.MapFollowing(interval: .milliseconds(200)) {
                    server.configMap("chime-shard-map")?.data["register.json"]
                        .flatMap { try? SlotMapRegisterFile.decode(Data($0.utf8)).map }
                }
            }
            // The map they start with is the register's: two shards, shard 2 not in it yet.
            let first = joinsLater ? ShardMap(mapEpoch: 1, slotCount: map.slotCount, shards: Array(map.shards.prefix(2))) : map
            // Recipients on the moving slots (0–1023) and elsewhere; the first moving one has a
            // subscriber of its own.
            let recipients = (0..<40).map { RecipientID("load-\($0)") }
            let moving = recipients.filter { map.slot(of: $0) <= 1023 }
            #expect(!moving.isEmpty && moving.count < recipients.count)
            let subscription = try Self.startSubscribers(cluster, map: first, following: following, recipient: moving.first)
            defer { subscription.close() }
            let load = Load()
            load.run(seeds: map.shards.prefix(2).map(\.endpoints.control), recipients: recipients)
            Thread.sleep(forTimeInterval: 1)

            // The third shard joins, then takes slots 0–1023, then gives them back.
            try Self.startThirdShard(cluster, map: map, joinsLater: joinsLater)
            var results: [[String: Any]] = []
            var firedOnTarget = 0
            // CHIME_MOVE_PROCESS_SEED varies the kill moments.
            let seed = ProcessInfo.processInfo.environment["CHIME_MOVE_PROCESS_SEED"].flatMap(UInt64.init) ?? 2727
            var random = SeededRandomNumberGenerator(seed: seed)
            var kills = 0
            var shardKills: [Int] = []
            for round in 0..<rounds {
                for target in [2, 0] {
                    let arguments = Self.moveArguments(to: target, cluster)
                    if killMover {
                        // Killed somewhere between opening the move and its end.
                        let name = "mover-\(round)-\(target)"
                        try cluster.spawn(name, arguments)
                        Thread.sleep(forTimeInterval: Double(Int.random(in: 0...400, using: &random)) / 1000)
                        if killShard {
                            // The source of this move, then its target, in turn.
                            let victim = (round + (target == 2 ? 0 : 1)) % 2 == 0 ? (target == 2 ? 0 : 2) : target
                            cluster.crash("shard-\(victim)")
                            cluster.crash(name)
                            try cluster.restart("shard-\(victim)")
                            try cluster.waitForCoordinator(at: map.shards[victim].endpoints.control, timeout: 20)
                            shardKills.append(victim)
                        } else {
                            cluster.crash(name)
                        }
                        kills += 1
                    }
                    let run = try LocalCluster.run(binary: cluster.binary, arguments, timeout: 50, environment: environment)
                    #expect(run.status == 0, "move to \(target): \(run.output) \(run.error)")
                    let result = try #require(Self.moveResult(run.output))
                    #expect(result["outcome"] as? String == "committed")
                    results.append(result)
                    // Shard 2 serves and fires the slots for a while before they go back.
                    Thread.sleep(forTimeInterval: target == 2 ? 1.5 : 0.5)
                    if target == 2 {
                        let client = try ControlClient(endpoint: map.shards[2].endpoints.control, timeout: .seconds(2), retries: 2)
                        let events = try client.send(ControlRequest(command: .events(after: 0, recipient: nil, limit: 1000)), expecting: EventsResult.self)
                        firedOnTarget = (events.result?.events ?? []).filter { $0.firing.reminderId.rawValue.hasPrefix("m-") }.count
                    }
                }
            }
            load.stop()
            let acknowledged = load.acknowledged
            #expect(load.refused.isEmpty, "\(load.refused.prefix(5))")
            if killShard { #expect(shardKills.count == 2 * rounds) }
            #expect(acknowledged.count > 100)

            // The final map: back to two shards' ranges.
            try Self.expectBackToTwoShards(cluster, rounds: rounds, joined: joinsLater)
            // A plan evens out reminders: the empty shard 2 gets slots first.
            let plan = try LocalCluster.run(
                binary: cluster.binary, ["shards", "rebalance", "--dry-run", "--json"] + cluster.shardedArguments, environment: environment)
            let planned = try #require((try JSONSerialization.jsonObject(with: Data(plan.output.utf8)) as? [String: Any])?["result"] as? [String: Any])
            let moves = try #require(planned["moves"] as? [String])
            #expect(moves.first?.hasSuffix("to shard 2") == true, "\(moves)")
            let bad = try LocalCluster.run(
                binary: cluster.binary, ["shards", "move", "5-x", "--to", "1"] + cluster.shardedArguments, environment: environment)
            #expect(bad.status == 2 && bad.error.contains("'5-x' is not a slot or a range"), "\(bad.error)")

            // Slots 0–1023 are shard 0's again, as at the start.
            let (firings, duplicates) = try Self.expectNothingLost(acknowledged, map: map, "slot moves 2 → 3 → 2")
            if !killMover { #expect(firedOnTarget > 0, "shard 2 fired the moved slots while it owned them") }
            let followedByOne = try Self.expectRecipientSubscriberFollowedItsSlot(
                cluster, recipient: try #require(moving.first), acknowledged: acknowledged)
            let seenBy = try Self.expectSubscribersSawTheMoves(
                subscription, cluster, map: map, acknowledged: acknowledged, rounds: rounds, isOrderChecked: !killMover, joined: joinsLater)
            print(
                "slot moves 2 → 3 → 2 × \(rounds)\(killMover ? ", mover killed \(kills) times" : "")\(killShard ? ", shards killed: \(shardKills)" : ""): \(acknowledged.count) reminders acknowledged (\(load.unanswered) unanswered), 0 lost; \(firings) firings, \(firedOnTarget) fired by shard 2, \(duplicates) duplicates (same firing id); subscribers: \(seenBy.handOvers) hand-overs, \(followedByOne) firings of \(moving.first?.rawValue ?? "") to its own, \(seenBy.outOfOrder) + \(seenBy.printedOutOfOrder) out of slot order; moves: \(results.map { "\($0["seconds"] ?? 0) s, \($0["reminders"] ?? 0) reminders" })")
        } catch {
            cluster.stop()
            print("slot move cluster failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }
}
