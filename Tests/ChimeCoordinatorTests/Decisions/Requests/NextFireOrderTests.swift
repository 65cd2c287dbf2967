import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// `list --order next-fire` (issue 42): pages soonest first, ties by id, with a cursor of
/// (fire time, key); reminders without a next firing after them in key order. Pure.
@Suite struct NextFireOrderTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    static func reminder(_ id: String, in seconds: Double, of recipient: RecipientID = "alice", enabled: Bool = true) -> Reminder {
        Reminder(
            id: ReminderID(id), recipient: recipient, content: Content(body: id),
            trigger: Trigger(start: .instant(t0.addingTimeInterval(seconds))), enabled: enabled)
    }

    /// `a` in 3 h, `b` in 1 h, `c` and `d` (bob's) both in 2 h, `e` in 1 h 30 min; `off` disabled.
    func makeState() -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        let reminders = [
            Self.reminder("a", in: 10_800), Self.reminder("b", in: 3_600), Self.reminder("d", in: 7_200, of: "bob"),
            Self.reminder("c", in: 7_200), Self.reminder("e", in: 5_400), Self.reminder("off", in: 60, enabled: false),
        ]
        _ = state.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: Self.t0)
        return state
    }

    /// Every page of `list --order next-fire` with `limit`, as (id, next fire) pairs.
    func pages(_ state: CoordinatorState, _ filter: ReminderFilter = ReminderFilter(), all: Bool, limit: Int) throws -> [[String]] {
        var pages: [[String]] = []
        var cursor: PageCursor?
        repeat {
            let outcome = state.list(filter, includeInactive: all, limit: limit, cursor: cursor, order: .nextFire, at: Self.t0)
            guard case .listed(let page) = outcome else { throw WireError(.internal, "\(outcome)") }
            pages.append(page.reminders.map(\.reminder.id.rawValue))
            cursor = try page.nextCursor.map { try PageCursor(text: $0, expecting: .listByNextFire) }
        } while cursor != nil && pages.count < 20
        return pages
    }

    @Test func pagesSoonestFirstWithTiesById() throws {
        let state = makeState()
        #expect(try pages(state, all: false, limit: 2) == [["b", "e"], ["c", "d"], ["a"]])
        #expect(try pages(state, all: false, limit: 250) == [["b", "e", "c", "d", "a"]])
    }

    /// A page cut at `limits.maxReplyBytes` (issue 37) goes on in next-fire order from its
    /// cursor, not in id order: every reminder once, soonest first.
    @Test func aPageCutByItsBytesGoesOnInNextFireOrder() throws {
        let state = makeState()
        var listed: [String] = []
        var cursors: [PageCursor.Kind] = []
        var cursor: PageCursor?
        repeat {
            let outcome = state.list(ReminderFilter(), includeInactive: false, limit: 100, cursor: cursor, order: .nextFire, at: Self.t0)
            // Room for about two listings of these reminders after the envelope.
            let reply = outcome.encodedReply(requestId: "q", maxPageBytes: 700)
            let result = try #require(try WireCodec().decode(ControlReply<ListResult>.self, from: reply).result)
            listed += result.reminders.map(\.reminder.id.rawValue)
            cursor = try result.nextCursor.map { try PageCursor(text: $0, expecting: .listByNextFire) }
            cursor.map { cursors.append($0.kind) }
        } while cursor != nil && cursors.count < 20
        #expect(listed == ["b", "e", "c", "d", "a"])
        #expect(cursors.count >= 2)
    }

    @Test func remindersWithoutANextFiringComeLastInKeyOrder() throws {
        var state = makeState()
        _ = state.onRequest(ControlRequest(command: .cancel(ReminderFilter(ids: ["e"]))), from: client, at: Self.t0)
        #expect(try pages(state, all: true, limit: 3) == [["b", "c", "d"], ["a", "off"]])
        #expect(state.entries.hasConsistentIndexes)
    }

    @Test func filtersApplyInNextFireOrder() throws {
        let state = makeState()
        #expect(try pages(state, ReminderFilter(recipient: "alice"), all: false, limit: 250) == [["b", "e", "c", "a"]])
        // A full page cannot know whether more follow: the last page is empty, as in id order.
        #expect(try pages(state, ReminderFilter(ids: ["a", "d"]), all: false, limit: 1) == [["d"], ["a"], []])
    }

    @Test func aFiringMovesTheReminderInTheOrder() throws {
        var state = makeState()
        let repeating = Reminder(
            id: "r", recipient: "alice", content: Content(body: "r"),
            trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(60)), repeatRule: RepeatRule(unit: .hour)))
        _ = state.onRequest(ControlRequest(command: .schedule([repeating])), from: client, at: Self.t0)
        #expect(try pages(state, all: false, limit: 250) == [["r", "b", "e", "c", "d", "a"]])
        // Fired at +60 s, its next occurrence is at +1 h 1 min: after b (+1 h).
        _ = state.onTick(now: Self.t0.addingTimeInterval(61))
        #expect(try pages(state, all: false, limit: 250) == [["b", "r", "e", "c", "d", "a"]])
        #expect(state.entries.hasConsistentIndexes)
    }

    @Test func aCursorOfTheOtherOrderIsRefused() throws {
        let state = makeState()
        guard case .listed(let byID) = state.list(ReminderFilter(), includeInactive: false, limit: 1, cursor: nil, at: Self.t0) else {
            Issue.record("no page")
            return
        }
        let idCursor = try PageCursor(text: try #require(byID.nextCursor), expecting: .list)
        let outcome = state.list(ReminderFilter(), includeInactive: false, limit: 1, cursor: idCursor, order: .nextFire, at: Self.t0)
        #expect(outcome == .failed(CoordinatorState.invalidCursor))
        let damaged = PageCursor(kind: .listByNextFire, key: [7, 1, 2])
        #expect(state.list(ReminderFilter(), includeInactive: false, limit: 1, cursor: damaged, order: .nextFire, at: Self.t0)
            == .failed(CoordinatorState.invalidCursor))
    }
}
