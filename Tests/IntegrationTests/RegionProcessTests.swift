import ChimeClient
import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// Region reminders over real processes (issue 41): the last location and the regions a
/// recipient is inside survive `kill -9` of the coordinator (journal replay) and a slot move
/// of the recipient to another shard (the slice), so the next report crosses — or not —
/// exactly as it would have without them; each crossing fires once.
@Suite(.serialized) struct RegionProcessTests {
    static let home = GeoPoint(latitude: 52.52, longitude: 13.405)
    static let far = GeoPoint(latitude: 52.53, longitude: 13.405)  // about 1.1 km north

    static func regionReminder(_ recipient: RecipientID) -> Reminder {
        Reminder(
            id: "home", recipient: recipient, content: Content(title: "home"),
            trigger: Trigger(start: .instant(Trigger.unstarted), region: RegionTrigger(center: home, radius: 150, triggersOnce: false)))
    }

    /// The firing ids of the recipient's fire events (catch-up), waited for until `count`.
    static func firings(of recipient: RecipientID, _ client: ClusterClient, count: Int) throws -> [FiringID] {
        var found: [FiringID] = []
        try expectEventually(timeout: 20, "\(count) firing(s) of \(recipient)") {
            let reply = try client.send(ControlRequest(command: .events(after: 0, recipient: recipient, limit: 100)), expecting: EventsResult.self)
            found = reply.reply.result?.events.map(\.firing.firingId) ?? []
            return found.count >= count
        }
        return found
    }

    @Test func theInsideStateAndTheLastReportSurviveKillNine() throws {
        try withLocalCluster(workers: 1, coordinatorArguments: ["--store", "store"]) { cluster in
            let client = try ClusterClient(seeds: [cluster.controlEndpoint], timeout: .seconds(3), retries: 3)
            let recipient: RecipientID = "walker"
            _ = try client.schedule([Self.regionReminder(recipient)])
            #expect(try client.locate(recipient, at: Self.far).crossings.isEmpty, "first report determines")
            let entered = try client.locate(recipient, at: Self.home, accuracy: 10)
            let entry = try #require(entered.crossings.first?.firingId)
            #expect(try Self.firings(of: recipient, client, count: 1) == [entry])
            // kill -9 right after the report: the journal holds it.
            cluster.crash("coordinator")
            try cluster.restart("coordinator")
            try cluster.waitForCoordinator(timeout: 20)
            // Still inside: a report at home crosses nothing; the entry did not fire again.
            #expect(try client.locate(recipient, at: Self.home, accuracy: 10).crossings.isEmpty)
            let stale = try client.locate(recipient, at: Self.far, reportedAt: Date().addingTimeInterval(-3600))
            #expect(!stale.accepted, "the last report's time survived")
            let left = try client.locate(recipient, at: Self.far)
            #expect(left.crossings.map(\.crossing) == [.exit])
            let exit = try #require(left.crossings.first?.firingId)
            #expect(Set(try Self.firings(of: recipient, client, count: 2)) == [entry, exit])
            let listing = try client.list(ReminderFilter(recipient: recipient), all: true, limit: 10, cursor: nil)
            #expect(listing.result.reminders.first?.deliveredCount == 2)
        }
    }

    @Test func theLocationMovesWithTheRecipientInASlotMove() throws {
        let cluster = try LocalCluster(portCount: 3 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        do {
            let map = try SlotMoveProcessTests.startTwoShardsWithRegister(cluster)
            // A recipient on a slot that moves (0–1023, shard 0 → 2).
            let recipient = try #require((0..<10_000).lazy.map { RecipientID("mover-\($0)") }.first { map.slot(of: $0) < 1024 })
            let client = try ClusterClient(seeds: map.shards.map(\.endpoints.control), timeout: .seconds(3), retries: 5)
            _ = try client.schedule([Self.regionReminder(recipient)])
            #expect(try client.locate(recipient, at: Self.far).crossings.isEmpty)
            try SlotMoveProcessTests.startThirdShard(cluster, map: map)
            let moved = try LocalCluster.run(binary: cluster.binary, SlotMoveProcessTests.moveArguments(to: 2, cluster), timeout: 90)
            #expect(moved.status == 0, "\(moved.output) \(moved.error)")
            #expect(try client.refreshMap().shard(of: recipient)?.id == 2)
            // On shard 2 the report crosses: the last location came with the recipient.
            let entered = try client.locate(recipient, at: Self.home, accuracy: 10)
            #expect(entered.accepted)
            #expect(entered.crossings.map(\.crossing) == [.entry], "the target knew the recipient was outside")
            let stale = try client.locate(recipient, at: Self.far, reportedAt: Date().addingTimeInterval(-3600))
            #expect(!stale.accepted)
        } catch {
            cluster.stop()
            print("region slot move cluster failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }
}
