import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// Issue 37, item 1: pages bounded in encoded bytes (`limits.maxReplyBytes`). Pure: no sockets.
@Suite struct ReplyBudgetTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    // MARK: the count

    @Test(arguments: [
        // (reply without items, item sizes, bound) → items that fit: each item adds its bytes and a comma, and
        // the cursor member (20 bytes here) must still fit after the last one kept.
        (100, [30, 30, 30, 30], 200, 2),  // 130, 161 (+20 = 181), 192 (+20 = 212 > 200)
        (100, [30, 30, 30, 30], 212, 3),  // 192 + 20 = 212 fits exactly; 223 + 20 does not
        (100, [30, 30, 30, 30], 10_000, 4),
        (100, [500, 10], 200, 1),  // one item past the bound still goes, alone
        (100, [], 200, 0),
    ])
    func countsTheItemsThatFit(empty: Int, sizes: [Int], bound: Int, expected: Int) {
        var measured: [Int] = []
        let count = ReplyBudget.fittingCount(
            itemCount: sizes.count, maxBytes: bound, emptyBytes: empty,
            itemBytes: { measured.append($0); return sizes[$0] }, continuationBytes: { _ in 20 })
        #expect(count == expected)
        // Measuring stops at the first item that does not fit.
        #expect(measured == Array(0..<min(sizes.count, expected + 1)))
    }

    // MARK: list

    func makeState() -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        return CoordinatorState(configuration: configuration, startedAt: Self.t0)
    }

    func outcome(_ state: inout CoordinatorState, _ command: ControlRequest.Command) -> ControlOutcome {
        guard case .reply(let outcome, _, _)? = state.onRequest(ControlRequest(command: command), from: client, at: Self.t0).last
        else { return .failed(WireError(.internal, "no reply")) }
        return outcome
    }

    /// `count` reminders `r00`, `r01`, … of alice with bodies of `bodyBytes` bytes.
    func stateWith(_ count: Int, bodyBytes: Int) -> CoordinatorState {
        var state = makeState()
        let reminders = (0..<count).map {
            Reminder(
                id: ReminderID(String(format: "r%02d", $0)), recipient: "alice",
                content: Content(body: String(repeating: "x", count: bodyBytes)),
                trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(86_400))))
        }
        guard case .scheduled = outcome(&state, .schedule(reminders)) else {
            Issue.record("schedule failed")
            return state
        }
        return state
    }

    /// Every page of `list` (limit 100) at the bound: each reply's bytes and listed ids.
    func pages(_ state: inout CoordinatorState, bound: Int) throws -> [(bytes: Int, ids: [String], result: ListResult)] {
        var pages: [(bytes: Int, ids: [String], result: ListResult)] = []
        var cursor: PageCursor?
        repeat {
            let listed = outcome(&state, .list(ReminderFilter(), all: false, limit: 100, cursor: cursor))
            let reply = listed.encodedReply(requestId: "q", maxPageBytes: bound)
            let result = try #require(try WireCodec().decode(ControlReply<ListResult>.self, from: reply).result)
            pages.append((reply.count, result.reminders.map(\.reminder.id.rawValue), result))
            cursor = try result.nextCursor.map { try PageCursor(text: $0, expecting: .list) }
        } while cursor != nil && pages.count < 100
        return pages
    }

    @Test func cutsAListPageAtTheBoundAndGoesOnFromItsCursor() throws {
        var state = stateWith(20, bodyBytes: 1000)
        let pages = try pages(&state, bound: 8192)
        // A listing of a 1,000-byte body takes 1,2xx bytes: 6 fit in 8 KiB with the envelope and the cursor.
        #expect(pages.map(\.ids.count) == [6, 6, 6, 2])
        #expect(pages.flatMap(\.ids) == (0..<20).map { String(format: "r%02d", $0) })
        #expect(pages.allSatisfy { $0.bytes <= 8192 })
        // A cut page has no total; the last one, from a cursor, neither.
        #expect(pages.map(\.result.total) == [nil, nil, nil, nil])
        // Unbounded, the same request is one page of all 20 with its total.
        let whole = outcome(&state, .list(ReminderFilter(), all: false, limit: 100, cursor: nil))
        let result = try #require(try WireCodec().decode(ControlReply<ListResult>.self, from: whole.encodedReply(requestId: "q")).result)
        #expect(result.reminders.count == 20 && result.total == 20 && result.nextCursor == nil)
    }

    @Test func sendsAReminderLargerThanTheBoundAloneSoEveryPageMakesProgress() throws {
        var state = stateWith(3, bodyBytes: 10_000)
        let pages = try pages(&state, bound: 4096)
        #expect(pages.map(\.ids) == [["r00"], ["r01"], ["r02"]])
        #expect(pages.allSatisfy { $0.bytes > 10_000 })
        #expect(pages.map { $0.result.nextCursor != nil } == [true, true, false])
    }

    @Test func leavesAPageWithinTheBoundByteIdentical() {
        var state = stateWith(5, bodyBytes: 100)
        let listed = outcome(&state, .list(ReminderFilter(), all: false, limit: 100, cursor: nil))
        #expect(listed.encodedReply(requestId: "q", maxPageBytes: 65_536) == listed.encodedReply(requestId: "q"))
    }

    // MARK: events and dead letters

    static func firing(_ index: Int, bodyBytes: Int) -> Firing {
        Firing(
            reminderId: ReminderID(String(format: "e%02d", index)), recipient: "alice", dueAt: t0,
            content: Content(body: String(repeating: "y", count: bodyBytes)))
    }

    @Test func cutsAnEventsPageAsTruncatedThroughItsLastEvent() throws {
        let events = (1...10).map { FireEvent(seq: UInt64($0), publisher: "w1", firing: Self.firing($0, bodyBytes: 500), firedAt: Self.t0) }
        let page = EventsResult(events: events, through: 10, oldestRetained: 1, truncated: false)
        let reply = ControlOutcome.events(page).encodedReply(requestId: "q", maxPageBytes: 2048)
        let result = try #require(try WireCodec().decode(ControlReply<EventsResult>.self, from: reply).result)
        #expect(reply.count <= 2048)
        #expect(result.events.map(\.seq) == [1, 2])
        #expect(result.truncated && result.through == 2 && result.oldestRetained == 1)
        #expect(result.nextCursor == PageCursor(afterSeq: 2).text)
    }

    @Test func cutsADeadLettersPageWithItsFailures() throws {
        let firings = (0..<10).map { Self.firing($0, bodyBytes: 500) }
        let failures = Dictionary(uniqueKeysWithValues: firings.map {
            ($0.firingId.description, DeliveryFailure(cause: "every destination failed", worker: "w1", outcomes: []))
        })
        let page = DeadLettersResult(firings: firings, nextCursor: nil, failures: failures)
        let reply = ControlOutcome.deadLetters(page).encodedReply(requestId: "q", maxPageBytes: 2048)
        let result = try #require(try WireCodec().decode(ControlReply<DeadLettersResult>.self, from: reply).result)
        #expect(reply.count <= 2048)
        #expect(result.firings.map(\.reminderId.rawValue) == ["e00", "e01"])
        #expect(result.failures.map { Set($0.keys) } == Set(firings.prefix(2).map(\.firingId.description)))
        #expect(result.nextCursor == PageCursor(kind: .deadLetters, text: firings[1].firingId.description).text)
    }
}
