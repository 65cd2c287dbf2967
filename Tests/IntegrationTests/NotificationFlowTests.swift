import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
import ChimeClient

/// The action and badge flows over real processes: register, deliver, badge events in
/// order, actions run by a worker (built-ins and a command hook), token checks.
@Suite(.serialized) struct NotificationFlowTests {
    @Test func badgeEventsAndActionsFlowThroughTheCluster() throws {
        let configuration = #"{"notifications":{"hooks":{"reply":"cat >/dev/null; printf 'replied %s' \"$CHIME_TEXT\""},"actionTimeLimitSeconds":5}}"#
        try withLocalCluster(workers: 2, configuration: configuration) { cluster in
            let categories = cluster.directory.path("categories.json")
            try Data(#"[{"identifier":"todo","actions":[{"identifier":"snooze","title":"Snooze"},{"identifier":"reply","title":"Reply","textInput":{"buttonTitle":"Send"}},{"identifier":"delete","title":"Delete","destructive":true,"authenticationRequired":true}]}]"#.utf8)
                .write(to: URL(fileURLWithPath: categories))
            let registered = try cluster.run(["register", "alice", "--categories", categories, "--token", "s3cret"])
            #expect(registered.output == "registered alice: allows alert, sound, badge, 1 categories, badge 0\n")

            let client = try ControlClient(endpoint: cluster.controlEndpoint)
            let collector = TopicCollector(endpoint: cluster.eventsEndpoint, prefixes: ["badge.alice", "action.alice"])
            defer { collector.close() }
            // Wait for the subscription with a probe badge change.
            var probe = 0
            try expectEventually(timeout: 10, interval: 0.05, "a probe badge event") {
                if !collector.objects(on: "badge.alice").isEmpty { return true }
                probe += 1
                _ = try client.send(ControlRequest(command: .badge("alice", probe)), expecting: BadgeResult.self)
                return false
            }
            _ = try client.send(ControlRequest(command: .badge("alice", 0)), expecting: BadgeResult.self)
            try expectEventually(timeout: 5, "the badge reset event") { collector.objects(on: "badge.alice").last?["badge"] as? Int == 0 }
            let before = collector.objects(on: "badge.alice").count

            let reminders = (1...3).map { index in
                Reminder(id: ReminderID("todo-\(index)"), recipient: "alice",
                         content: Content(title: "Todo \(index)", badgeChange: .increment, category: "todo"),
                         trigger: Trigger(start: .instant(Date().addingTimeInterval(Double(index) * 0.1))))
            }
            _ = try client.send(ControlRequest(command: .schedule(reminders)), expecting: ScheduleResult.self)
            try expectEventually(timeout: 10, "three badge events") { collector.objects(on: "badge.alice").count >= before + 3 }
            let badges = collector.objects(on: "badge.alice").dropFirst(before).compactMap { $0["badge"] as? Int }
            #expect(badges == [1, 2, 3], "one event per change, in order")

            let delivered = try client.send(ControlRequest(command: .delivered("alice", remove: nil)), expecting: DeliveredResult.self)
            let firings = try #require(delivered.result?.delivered.map(\.firingId))
            #expect(firings.count == 3)

            let reply = try cluster.run(["act", firings[0].text, "reply", "--text", "on my way"])
            #expect(reply.status == 0, "\(reply.error)")
            #expect(reply.output == "reply on \(firings[0]): completed: hook ran\nreplied on my way\n")

            let refused = try cluster.run(["act", firings[1].text, "delete"])
            #expect(refused.status == 1)
            #expect(refused.error == "chime: unauthenticated: token: action delete needs the recipient's token\n")

            let opened = try cluster.run(["act", firings[1].text, "open"])
            #expect(opened.status == 0)
            try expectEventually(timeout: 5, "the open action event") {
                collector.objects(on: "action.alice").contains { $0["type"] as? String == "action" && $0["action"] as? String == "open" }
            }
            let snoozed = try cluster.run(["act", firings[2].text, "snooze", "--snooze", "1m", "--json"])
            let job = try WireCodec().decode(ControlReply<JobResult>.self, from: Data(snoozed.output.utf8))
            #expect(job.result?.status == "completed")
            let finished = collector.objects(on: "action.alice").filter { $0["type"] as? String == "actionFinished" }
            #expect(finished.compactMap { $0["status"] as? String }.count >= 2)

            try expectEventually(timeout: 5, "the badge to fall to 0 after three handled firings") {
                collector.objects(on: "badge.alice").last?["badge"] as? Int == 0
            }
            let list = try client.send(ControlRequest(command: .list(ReminderFilter(recipient: "alice"), all: false, limit: nil)), expecting: ListResult.self)
            let snoozedReminder = firings[2].reminder.rawValue
            #expect(list.result?.reminders.map(\.reminder.id.rawValue).allSatisfy { $0.hasPrefix("\(snoozedReminder).snooze-") } == true)
            #expect(list.result?.reminders.count == 1, "the snooze re-firing")
        }
    }
}
