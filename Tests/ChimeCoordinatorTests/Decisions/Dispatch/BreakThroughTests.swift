import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// What breaks through quiet hours besides the time-sensitive and critical levels (issue 40
/// item 3, Apple's Focus allowed notifications and Focus filters): a category or a
/// `filterCriteria` the recipient lists is delivered in its quiet window; a re-registration
/// that lists a held firing's category releases it. Pure, time passed in.
@Suite struct BreakThroughTests {
    static let t0 = QuietHoursTests.t0
    static let lateEvening = QuietHoursTests.lateEvening
    static let morning = QuietHoursTests.morning
    let client = ClientAddress(routing: [Data([1])])
    static let night = QuietWindow(start: 22 * 60, end: 7 * 60)

    static func alice(_ breakThrough: QuietHoursBreakThrough?) -> Recipient {
        Recipient(
            id: "alice", categories: [NotificationCategory(identifier: "alarm"), NotificationCategory(identifier: "chat")],
            zone: "Europe/Berlin", quietHours: [night], breakThrough: breakThrough)
    }

    static func reminder(_ id: ReminderID, _ content: Content) -> Reminder {
        Reminder(id: id, recipient: "alice", content: content, trigger: Trigger(start: .instant(lateEvening)))
    }

    /// Registers `recipient`, schedules `reminders` due at 23:30 in Berlin and ticks then:
    /// the ids dispatched and the ids held.
    func tickInTheNight(_ recipient: Recipient, _ reminders: [Reminder]) -> (state: CoordinatorState, dispatched: Set<String>, held: Set<String>) {
        var state = CoordinatorState(configuration: CoordinatorConfiguration(), startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        _ = state.onRequest(ControlRequest(command: .register(recipient)), from: client, at: Self.t0)
        _ = state.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: Self.t0)
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 16, delivered: 0), viaDispatch: true, at: Self.lateEvening)
        var dispatched: Set<String> = []
        for case .dispatch(let batch, _) in state.onTick(now: Self.lateEvening) {
            dispatched.formUnion(batch.firings.map(\.reminderId.rawValue))
        }
        let held = Set(state.durable.deliveries.heldFirings.values.map(\.reminderId.rawValue))
        return (state, dispatched, held)
    }

    static let reminders = [
        reminder("wake", Content(title: "t", category: "alarm")),
        reminder("work", Content(title: "t", filterCriteria: "work")),
        reminder("chat", Content(title: "t", category: "chat", filterCriteria: "home")),
        reminder("plain", Content(title: "t")),
    ]

    @Test func aListedCategoryOrFilterCriteriaIsDeliveredInTheQuietWindow() {
        let (_, dispatched, held) = tickInTheNight(
            Self.alice(QuietHoursBreakThrough(categories: ["alarm"], filterCriteria: ["work"])), Self.reminders)
        #expect(dispatched == ["wake", "work"])
        #expect(held == ["chat", "plain"])
        // Without a break-through, all four wait.
        let (_, none, allHeld) = tickInTheNight(Self.alice(nil), Self.reminders)
        #expect(none.isEmpty)
        #expect(allHeld == ["wake", "work", "chat", "plain"])
    }

    @Test func aReRegistrationThatListsAHeldFiringsCategoryReleasesIt() {
        var (state, _, held) = tickInTheNight(Self.alice(nil), Self.reminders)
        #expect(held.count == 4)
        let at = Self.lateEvening + 600
        _ = state.onRequest(ControlRequest(command: .register(Self.alice(QuietHoursBreakThrough(categories: ["chat"])))), from: client, at: at)
        let releases = Dictionary(uniqueKeysWithValues: state.durable.deliveries.heldFirings.map { id, firing in
            (firing.reminderId.rawValue, state.durable.deliveries.holds.deadline(of: id))
        })
        #expect(releases == ["chat": at, "wake": Self.morning, "work": Self.morning, "plain": Self.morning])
        // The next tick delivers it, and only it.
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 16, delivered: 0), viaDispatch: true, at: at)
        var dispatched: [String] = []
        for case .dispatch(let batch, _) in state.onTick(now: at) { dispatched += batch.firings.map(\.reminderId.rawValue) }
        #expect(dispatched == ["chat"])
    }

    @Test func theRegistrationRoundTripsAndBadListsAreRefused() throws {
        let json = #"{"id":"alice","breakThrough":{"categories":["alarm"],"filterCriteria":["work"]}}"#
        let recipient = try JSONDecoder().decode(Recipient.self, from: Data(json.utf8))
        #expect(recipient.breakThrough == QuietHoursBreakThrough(categories: ["alarm"], filterCriteria: ["work"]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let encoded = String(decoding: try encoder.encode(recipient), as: UTF8.self)
        #expect(encoded.contains(#""breakThrough":{"categories":["alarm"],"filterCriteria":["work"]}"#))
        // Absent stays absent (registrations without one encode as before); present, even
        // empty, round-trips exactly, so the journal's copy folds to the value stored live.
        #expect(!String(decoding: try JSONEncoder().encode(Self.alice(nil)), as: UTF8.self).contains("breakThrough"))
        let empty = try JSONDecoder().decode(
            Recipient.self, from: Data(#"{"id":"alice","breakThrough":{},"optedOutChannels":{"promo":[]}}"#.utf8))
        #expect(empty.breakThrough == QuietHoursBreakThrough())
        #expect(try JSONDecoder().decode(Recipient.self, from: JSONEncoder().encode(empty)) == empty)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Recipient.self, from: Data(#"{"id":"a","breakThrough":{"categorys":["x"]}}"#.utf8))
        }
        let many = "[" + (0...QuietHoursBreakThrough.maximumCount).map { "\"c\($0)\"" }.joined(separator: ",") + "]"
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Recipient.self, from: Data(#"{"id":"a","breakThrough":{"categories":\#(many)}}"#.utf8))
        }
        do {
            try Recipient(id: "a", breakThrough: QuietHoursBreakThrough(filterCriteria: ["ok", ""])).validate()
            Issue.record("an empty entry passed")
        } catch {
            #expect(error.field == "breakThrough.filterCriteria[1]")
            #expect(error.message == "must be 1 to 256 bytes, not 0")
        }
    }
}
