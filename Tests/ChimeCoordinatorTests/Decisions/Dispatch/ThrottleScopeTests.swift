import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// Issue 40 item 5, throttles per category or thread: each category (or thread) has its own
/// allowance of `count` in any stretch, firings without one share theirs; live, replayed and
/// reloaded from a snapshot alike; the allowances kept per recipient are bounded. Pure.
@Suite struct ThrottleScopeTests {
    static let t0 = QuietHoursTests.t0
    let client = ClientAddress(routing: [Data([1])])

    static func minute(_ n: Double) -> Date { t0.addingTimeInterval(n * 60) }

    @Test func eachCategoryHasItsOwnAllowance() throws {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 86_400
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        var journal = QuietHoursTests.entries(state.onRequest(ControlRequest(command: .register(Recipient(
            id: "alice", categories: [NotificationCategory(identifier: "chat"), NotificationCategory(identifier: "promo")],
            throttle: DeliveryThrottle(count: 1, seconds: 3600, per: .category)))), from: client, at: Self.t0))
        let plan: [(ReminderID, String?, Double)] = [("c1", "chat", 1), ("p1", "promo", 2), ("c2", "chat", 3), ("n1", nil, 4), ("n2", nil, 5)]
        journal += QuietHoursTests.entries(state.onRequest(ControlRequest(command: .schedule(plan.map { id, category, at in
            Reminder(id: id, recipient: "alice", content: Content(title: "t", category: category), trigger: Trigger(start: .instant(Self.minute(at))))
        })), from: client, at: Self.t0))
        var delivered: [String: Date] = [:]
        for now in [1, 2, 3, 4, 5, 61, 65].map(Self.minute) {
            let (entries, firings) = QuietHoursTests.tickAndAcknowledge(&state, at: now)
            journal += entries
            for firing in firings { delivered[firing.reminderId.rawValue] = now }
        }
        // chat's second waits for chat's hour; promo and the uncategorized have their own.
        #expect(delivered == [
            "c1": Self.minute(1), "p1": Self.minute(2), "c2": Self.minute(61), "n1": Self.minute(4), "n2": Self.minute(65),
        ])
        #expect(state.durable.recipients.throttleSlots["alice"] == [
            "chat": [Self.minute(61)], "promo": [Self.minute(2)], "": [Self.minute(64)],
        ])
        var replayed = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        for entry in journal { replayed.apply(entry) }
        #expect(replayed.durable == state.durable)
        let decoded = try DurableState.decodeSnapshot(state.durable.encodedSnapshot(takenAt: Self.minute(70)), seed: state.durable.settings)
        #expect(decoded.state.recipients.throttleSlots == state.durable.recipients.throttleSlots)
        #expect(decoded.state == state.durable)
        // A change of scope starts the allowances afresh.
        _ = state.onRequest(ControlRequest(command: .register(Recipient(
            id: "alice", throttle: DeliveryThrottle(count: 1, seconds: 3600, per: .thread)))), from: client, at: Self.minute(70))
        #expect(state.durable.recipients.throttleSlots["alice"] == [:])
    }

    @Test func theAllowancesKeptPerRecipientAreBounded() {
        var recipients = Recipients()
        recipients.store(Recipient(id: "alice", throttle: DeliveryThrottle(count: 1, seconds: 60, per: .thread)))
        recipients.throttleSlots["alice"] = [:]
        let limit = DeliveryThrottle.maximumGroups
        // limit + 1 threads within one stretch: the one delivered to longest ago goes.
        for index in 0...limit {
            recipients.noteDelivery(of: "alice", content: Content(title: "t", threadId: "t\(index)"), at: Self.t0.addingTimeInterval(Double(index) / 100), now: Self.t0.addingTimeInterval(Double(index) / 100))
        }
        #expect(recipients.throttleSlots["alice"]?.count == limit)
        #expect(recipients.throttleSlots["alice"]?["t0"] == nil)
        #expect(recipients.throttleSlots["alice"]?["t1"] != nil)
        // A stretch later, one more: every allowance that limits nothing any more goes.
        recipients.noteDelivery(of: "alice", content: Content(title: "t", threadId: "late"), at: Self.t0.addingTimeInterval(3600), now: Self.t0.addingTimeInterval(3600))
        #expect(recipients.throttleSlots["alice"] == ["late": [Self.t0.addingTimeInterval(3600)]])
    }

    @Test func theScopeParsesAndRoundTrips() throws {
        #expect(try DeliveryThrottle(parsing: "2/1h/category") == DeliveryThrottle(count: 2, seconds: 3600, per: .category))
        #expect(try DeliveryThrottle(parsing: "2/90s") == DeliveryThrottle(count: 2, seconds: 90))
        for text in ["2/1h/recipient", "2/1h/day", "2/1h/"] {
            #expect(throws: ValidationError.self, "\(text)") { try DeliveryThrottle(parsing: text) }
        }
        let json = #"{"count":2,"seconds":3600,"per":"thread"}"#
        #expect(try JSONDecoder().decode(DeliveryThrottle.self, from: Data(json.utf8)) == DeliveryThrottle(count: 2, seconds: 3600, per: .thread))
        #expect(String(decoding: try JSONEncoder().encode(DeliveryThrottle(count: 2, seconds: 60)), as: UTF8.self).contains("per") == false)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(DeliveryThrottle.self, from: Data(#"{"count":2,"seconds":60,"per":"day"}"#.utf8))
        }
    }
}
