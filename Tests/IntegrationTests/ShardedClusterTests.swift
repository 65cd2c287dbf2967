import ChimeClient
import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// Three shards on loopback: each recipient's reminders live on its slot's shard, fire through
/// that shard's event stream once, carrying its id; a request to the wrong shard is refused;
/// one shard killed does not stop the others.
@Suite(.serialized) struct ShardedClusterTests {
    /// Runs `body` with three shards and two workers started, always stopping every child by pid.
    static func withThreeShards(_ body: (LocalCluster, ShardMap, [ControlClient], [EventCollector]) throws -> Void) throws {
        let cluster = try LocalCluster(portCount: 3 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        let map = cluster.shardMap(shards: 3)
        do {
            try cluster.startShards(map, workers: 2)
            let clients = try map.shards.map { try ControlClient(endpoint: $0.endpoints.control, timeout: .seconds(5), retries: 0) }
            let collectors = map.shards.map { EventCollector(endpoint: $0.endpoints.events) }
            defer { for collector in collectors { collector.close() } }
            for (shard, (client, collector)) in zip(map.shards, zip(clients, collectors)) {
                try ClusterDeliveryTests.waitUntilSubscribed(collector, client: client, recipient: recipient(on: shard.id, of: map, prefix: "probe"))
            }
            try body(cluster, map, clients, collectors)
        } catch {
            cluster.stop()
            print("sharded cluster failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }

    static func recipient(on shard: Int, of map: ShardMap, prefix: String) -> RecipientID {
        for n in 0... where map.shard(of: RecipientID("\(prefix)-\(n)"))?.id == shard { return RecipientID("\(prefix)-\(n)") }
        preconditionFailure("unreachable")
    }

    static func schedule(_ reminders: [Reminder], on client: ControlClient) throws {
        for start in stride(from: 0, to: reminders.count, by: 1000) {
            let chunk = Array(reminders[start..<min(reminders.count, start + 1000)])
            let reply = try client.send(ControlRequest(command: .schedule(chunk)), expecting: ScheduleResult.self)
            #expect(reply.result?.scheduled.count == chunk.count)
        }
    }

    static func reminderTotal(_ client: ControlClient) throws -> Int {
        try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.reminders.values.reduce(0, +) ?? -1
    }

    @Test func tenThousandRemindersLandOnTheirSlotsShardAndFireThroughItOnce() throws {
        try Self.withThreeShards { _, map, clients, collectors in
            let due = Date().addingTimeInterval(6)
            let reminders = (0..<10_000).map { index in
                Reminder(
                    id: ReminderID("load-\(index)"), recipient: RecipientID("user-\(index % 1000)"), content: Content(body: "n\(index)"),
                    trigger: Trigger(start: .instant(due.addingTimeInterval(Double(index % 100) * 0.01))))
            }
            let byShard = Dictionary(grouping: reminders) { map.shard(of: $0.recipient)?.id ?? -1 }
            #expect(byShard.keys.sorted() == [0, 1, 2])
            for shard in map.shards { try Self.schedule(byShard[shard.id] ?? [], on: clients[shard.id]) }
            // Probes (one per shard) were scheduled before; every other reminder is a load one.
            for shard in map.shards {
                #expect(try Self.reminderTotal(clients[shard.id]) == (byShard[shard.id]?.count ?? 0) + 1, "shard \(shard.id)")
            }

            // A request to a shard that does not own the recipient is refused with the owner.
            let stranger = Self.recipient(on: 0, of: map, prefix: "user")
            do throws(WireError) {
                _ = try clients[1].send(ControlRequest(command: .list(ReminderFilter(recipient: stranger), all: true, limit: nil)), expecting: ListResult.self)
                Issue.record("shard 1 listed shard 0's recipient")
            } catch {
                #expect(error.code == .wrongShard)
                #expect(error.shard == 0)
                #expect(error.mapEpoch == 1)
            }

            func loadEvents(_ collector: EventCollector) -> [FireEvent] {
                collector.received.filter { $0.firing.reminderId.rawValue.hasPrefix("load-") }
            }
            try expectEventually(timeout: 60, "10,000 fire events") {
                Set(collectors.flatMap { loadEvents($0).map(\.firing.firingId) }).count == 10_000
            }
            // A duplicate needs a redelivery, which needs a firing in flight: once none is, no copy can come.
            for client in clients {
                try expectEventually(timeout: 10, "nothing in flight") {
                    try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.inFlight == 0
                }
            }
            for shard in map.shards {
                let events = loadEvents(collectors[shard.id])
                #expect(events.count == byShard[shard.id]?.count, "shard \(shard.id): each firing exactly once")
                #expect(events.allSatisfy { $0.shard == shard.id }, "shard \(shard.id): events carry the shard")
                #expect(events.allSatisfy { map.shard(of: $0.firing.recipient)?.id == shard.id })
                #expect(Set(events.map(\.firing.reminderId)) == Set((byShard[shard.id] ?? []).map(\.id)))
            }
        }
    }

    @Test func aKilledShardStopsNoOtherAndServesAgainAfterItsRestart() throws {
        try Self.withThreeShards { cluster, map, clients, collectors in
            let due = Date().addingTimeInterval(3)
            var expected: [Int: Set<ReminderID>] = [:]
            for shard in map.shards {
                let recipient = Self.recipient(on: shard.id, of: map, prefix: "kill")
                let reminders = (0..<100).map { index in
                    Reminder(
                        id: ReminderID("kill-\(shard.id)-\(index)"), recipient: recipient, content: Content(body: "k"),
                        trigger: Trigger(start: .instant(due.addingTimeInterval(Double(index) * 0.01))))
                }
                try Self.schedule(reminders, on: clients[shard.id])
                expected[shard.id] = Set(reminders.map(\.id))
            }
            cluster.crash("shard-1")
            func killEvents(_ shard: Int) -> [FireEvent] {
                collectors[shard].received.filter { $0.firing.reminderId.rawValue.hasPrefix("kill-") }
            }
            for shard in [0, 2] {
                try expectEventually(timeout: 15, "shard \(shard)'s 100 firings") { Set(killEvents(shard).map(\.firing.reminderId)) == expected[shard] }
                let lateness = killEvents(shard).map { $0.firedAt.timeIntervalSince($0.firing.dueAt) }
                #expect(lateness.allSatisfy { $0 < 2 }, "shard \(shard) fired on time: worst \(lateness.max() ?? 0) s")
            }
            #expect(killEvents(1).isEmpty)
            let probe = try ControlClient(endpoint: map.shards[1].endpoints.control, timeout: .milliseconds(300), retries: 0)
            #expect(throws: WireError.self) { _ = try probe.send(ControlRequest(command: .ping), expecting: PongResult.self) }

            try cluster.restart("shard-1")
            try cluster.waitForCoordinator(at: map.shards[1].endpoints.control, timeout: 20)
            // The restarted shard fires its overdue firings at once, before a subscriber's
            // reconnected subscription may have reached the workers (slow joiner): its catch-up
            // (`events`, what the gap-free subscriber reads) holds every one, with the shard.
            var caughtUp: [FireEvent] = []
            try expectEventually(timeout: 20, "shard 1's 100 firings after its restart") {
                let page = try clients[1].send(ControlRequest(command: .events(after: 0, recipient: nil, limit: 1000)), expecting: EventsResult.self)
                caughtUp = (page.result?.events ?? []).filter { $0.firing.reminderId.rawValue.hasPrefix("kill-") }
                return Set(caughtUp.map(\.firing.reminderId)) == expected[1]
            }
            #expect(caughtUp.allSatisfy { $0.shard == 1 })
            #expect(killEvents(1).allSatisfy { $0.shard == 1 })
            let status = try clients[1].send(ControlRequest(command: .status), expecting: StatusReport.self).result
            #expect(status?.shard == 1)
            #expect(status?.mapEpoch == 1)
        }
    }
}
