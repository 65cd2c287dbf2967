import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
import ChimeClient

/// Real `chime` processes over tcp loopback: a coordinator and two workers.
@Suite(.serialized) struct ClusterDeliveryTests {
    /// Schedules a probe and waits until the collector sees it, so the subscription is live
    /// (a SUB misses what was published before its subscription reached the publisher).
    static func waitUntilSubscribed(_ collector: EventCollector, client: ControlClient, recipient: RecipientID) throws {
        var attempt = 0
        try expectEventually(timeout: 10, interval: 0.05, "a probe fire event") {
            if collector.received.contains(where: { $0.firing.reminderId.rawValue.hasPrefix("probe-") }) { return true }
            attempt += 1
            if attempt % 10 == 1 {
                let probe = Reminder(
                    id: ReminderID("probe-\(attempt)"), recipient: recipient, content: Content(body: "probe"),
                    trigger: Trigger(start: .instant(Date())))
                _ = try client.send(ControlRequest(command: .schedule([probe])), expecting: ScheduleResult.self)
            }
            return false
        }
    }

    @Test func twoHundredRemindersAcrossThreeSecondsArriveExactlyOnce() throws {
        try withLocalCluster(workers: 2) { cluster in
            let client = try ControlClient(endpoint: cluster.controlEndpoint)
            let collector = EventCollector(endpoint: cluster.eventsEndpoint)
            defer { collector.close() }
            try Self.waitUntilSubscribed(collector, client: client, recipient: "load")

            let start = Date().addingTimeInterval(1)
            let reminders = (0..<200).map { index in
                Reminder(
                    id: ReminderID("load-\(index)"), recipient: RecipientID("user-\(index % 7)"),
                    content: Content(body: "n\(index)"),
                    trigger: Trigger(start: .instant(start.addingTimeInterval(Double(index) * 0.015))))
            }
            let reply = try client.send(ControlRequest(command: .schedule(reminders)), expecting: ScheduleResult.self)
            #expect(reply.result?.scheduled.count == 200)

            func loadEvents() -> [FireEvent] { collector.received.filter { $0.firing.reminderId.rawValue.hasPrefix("load-") } }
            try expectEventually(timeout: 20, "200 fire events") { Set(loadEvents().map(\.firing.firingId)).count == 200 }
            // A duplicate needs a redelivery, which needs a firing still in flight: once nothing
            // is in flight and every firing is acknowledged, no further copy can be sent.
            try expectEventually(timeout: 10, "every firing acknowledged, none in flight") {
                let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self)
                let stats = try client.send(ControlRequest(command: .stats), expecting: StatsReport.self)
                return status.result?.inFlight == 0 && (stats.result?.acknowledged ?? 0) >= 200
            }
            let events = loadEvents()
            #expect(events.count == 200, "every firing exactly once")
            #expect(Set(events.map(\.firing.reminderId)) == Set(reminders.map(\.id)))
            let lateness = events.map { $0.firedAt.timeIntervalSince($0.firing.dueAt) * 1000 }.sorted()
            #expect(lateness.allSatisfy { $0 >= -1 }, "no firing more than 1 ms early")
            let p50 = lateness[lateness.count / 2]
            let p99 = lateness[Int((Double(lateness.count) * 0.99).rounded(.up)) - 1]
            print(String(format: "lateness over 200 firings (ms): p50 %.1f p99 %.1f max %.1f", p50, p99, lateness.last!))
            #expect(Set(events.map(\.publisher)).count == 2, "both workers share the load")

            let stats = try client.send(ControlRequest(command: .stats), expecting: StatsReport.self)
            #expect((stats.result?.acknowledged ?? 0) >= 200)
            let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self)
            #expect(status.result?.inFlight == 0)
            #expect(status.result?.workersAlive == 2)
        }
    }

    @Test func subscriberCatchesUpSinceASequenceThenContinuesLiveWithoutGapOrDuplicate() throws {
        try withLocalCluster(workers: 2) { cluster in
            let client = try ControlClient(endpoint: cluster.controlEndpoint)
            let early = (0..<10).map { Reminder(id: ReminderID("early-\($0)"), recipient: "carol", content: Content(body: "e"), trigger: Trigger(start: .instant(Date()))) }
            _ = try client.send(ControlRequest(command: .schedule(early)), expecting: ScheduleResult.self)
            try expectEventually(timeout: 10, "the early firings to be acknowledged") {
                try client.send(ControlRequest(command: .stats), expecting: StatsReport.self).result?.acknowledged == 10
            }
            let subscriber = try cluster.spawn(
                "catch-up", ["subscribe", "--recipient", "carol", "--since", "0", "--json", "--count", "15", "--timeout", "20s"] + cluster.clusterArguments)
            let later = (0..<5).map { Reminder(id: ReminderID("later-\($0)"), recipient: "carol", content: Content(body: "l"), trigger: Trigger(start: .instant(Date().addingTimeInterval(0.5 + Double($0) * 0.05)))) }
            _ = try client.send(ControlRequest(command: .schedule(later)), expecting: ScheduleResult.self)
            try expectEventually(timeout: 25, "the subscriber to print 15 events") { !subscriber.isRunning }
            #expect(subscriber.terminationStatus == 0, "\(cluster.logs())")
            let lines = try String(contentsOfFile: cluster.directory.path("catch-up.log"), encoding: .utf8).split(separator: "\n")
            let events = try lines.map { try WireCodec().decode(FireEvent.self, from: Data($0.utf8)) }
            #expect(events.count == 15)
            #expect(Set(events.map(\.seq)).count == 15, "no duplicate")
            #expect(Set(events.map(\.firing.reminderId)) == Set((early + later).map(\.id)), "no gap")
            #expect(events.prefix(10).map(\.seq) == events.prefix(10).map(\.seq).sorted(), "the replay comes in seq order")
        }
    }

    @Test func processesExitCleanlyOnSIGTERM() throws {
        let cluster = try LocalCluster()
        try cluster.start(workers: 2)
        let exits = cluster.stop()
        let clean = ChildSupervisor.Exit(status: 0, isSignal: false, neededKill: false)
        #expect(exits == ["coordinator": clean, "worker-1": clean, "worker-2": clean], "\(cluster.logs())")
    }

    @Test func repeatingReminderFiresOnItsMinuteBoundaryAndCancelStopsIt() throws {
        try withLocalCluster(workers: 1) { cluster in
            let client = try ControlClient(endpoint: cluster.controlEndpoint)
            let due = Date().addingTimeInterval(1)
            let reminder = Reminder(
                id: "every-minute", recipient: "bob", content: Content(title: "t"),
                trigger: Trigger(start: .instant(due), repeatRule: RepeatRule(unit: .minute, interval: 1)))
            _ = try client.send(ControlRequest(command: .schedule([reminder])), expecting: ScheduleResult.self)
            try expectEventually(timeout: 10, "the first occurrence to be acknowledged") {
                let list = try client.send(ControlRequest(command: .list(ReminderFilter(ids: ["every-minute"]), all: true, limit: nil)), expecting: ListResult.self)
                return list.result?.reminders.first?.deliveredCount == 1
            }
            let list = try client.send(ControlRequest(command: .list(ReminderFilter(recipient: "bob"), all: false, limit: nil)), expecting: ListResult.self)
            let next = try #require(list.result?.reminders.first?.nextFireAt)
            #expect(abs(next.timeIntervalSince(due) - 60) < 0.001)
            let cancel = try client.send(ControlRequest(command: .cancel(ReminderFilter(recipient: "bob"))), expecting: CancelResult.self)
            #expect(cancel.result?.cancelled == ["every-minute"])
        }
    }
}
