import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// `delivered` in pages (issue 37, item 1: every reply bounded in bytes): a page ends at its
/// `limit` or at `limits.maxReplyBytes` with a cursor, and the cursors walk the whole list
/// newest first, exactly once each.
@Suite struct DeliveredPagingTests {
    let base = CoordinatorNotificationTests()

    /// A state whose recipient alice has five delivered firings (`a`…`e`, titles of `titleBytes`).
    func stateWithFiveDelivered(titleBytes: Int = 8) -> (CoordinatorState, [FiringID]) {
        var state = base.makeState()
        let title = String(repeating: "t", count: titleBytes)
        base.request(&state, .schedule(["a", "b", "c", "d", "e"].map {
            base.oneShot(ReminderID($0), content: Content(title: title, body: $0))
        }))
        let firings = base.deliver(&state).firings
        #expect(firings.count == 5)
        return (state, firings.map(\.firingId))
    }

    func page(_ state: inout CoordinatorState, limit: Int? = nil, cursor: PageCursor? = nil) -> DeliveredResult? {
        let (outcome, _) = base.request(&state, .delivered("alice", remove: nil, limit: limit, cursor: cursor))
        guard case .delivered(let result) = outcome else { Issue.record("\(outcome)"); return nil }
        return result
    }

    func reminders(_ result: DeliveredResult?) -> [ReminderID] { result?.delivered.map(\.reminderId) ?? [] }

    func next(_ result: DeliveredResult?) throws -> PageCursor? {
        try result?.nextCursor.map { text throws(WireError) in try PageCursor(text: text, expecting: .delivered) }
    }

    @Test func aLimitPagesTheListNewestFirstWithCursors() throws {
        var (state, _) = stateWithFiveDelivered()
        #expect(reminders(page(&state)) == ["e", "d", "c", "b", "a"])
        #expect(page(&state)?.nextCursor == nil)
        let first = page(&state, limit: 2)
        #expect(reminders(first) == ["e", "d"])
        let second = page(&state, limit: 2, cursor: try next(first))
        #expect(reminders(second) == ["c", "b"])
        let third = page(&state, limit: 2, cursor: try next(second))
        #expect(reminders(third) == ["a"])
        #expect(third?.nextCursor == nil)
        #expect(third?.badge == 0)
    }

    @Test func aPageWhoseLastFiringWasHandledContinuesAtItsPosition() throws {
        var (state, ids) = stateWithFiveDelivered()
        let first = page(&state, limit: 2)
        #expect(reminders(first) == ["e", "d"])
        // d, the page's last, is handled between the pages: the list is now e, c, b, a.
        base.request(&state, .ack(ids[3]))
        #expect(reminders(page(&state, limit: 2, cursor: try next(first))) == ["c", "b"])
        // e, before the cursor, handled: the cursor finds d by its id.
        var (other, otherIDs) = stateWithFiveDelivered()
        let start = page(&other, limit: 2)
        base.request(&other, .ack(otherIDs[4]))
        #expect(reminders(page(&other, limit: 2, cursor: try next(start))) == ["c", "b"])
    }

    @Test func aCursorThatIsNotAPositionAndAFiringIsRefused() {
        var (state, _) = stateWithFiveDelivered()
        let (outcome, _) = base.request(&state, .delivered("alice", remove: nil, cursor: PageCursor(kind: .delivered, key: [0, 1])))
        guard case .failed(let error) = outcome else { Issue.record("\(outcome)"); return }
        #expect((error.code, error.field) == (.invalidArgument, "cursor"))
    }

    /// A reply passing the byte bound ends with the cursor after its last firing; following
    /// the cursors reads the whole list once, every reply within the bound.
    @Test func aReplyEndsAtItsByteBoundAndTheCursorsReadTheWholeList() throws {
        var (state, _) = stateWithFiveDelivered(titleBytes: 300)
        let bound = 1_200  // a firing with a 300-byte title encodes in 463 bytes
        var seen: [ReminderID] = []
        var cursor: PageCursor?
        var replies = 0
        repeat {
            guard let result = page(&state, cursor: cursor) else { return }
            let reply = ControlOutcome.delivered(result).encodedReply(requestId: "r", maxPageBytes: bound)
            #expect(reply.count <= bound, "\(reply.count) bytes")
            let decoded = try WireCodec().decode(ControlReply<DeliveredResult>.self, from: reply)
            let sent = try #require(decoded.result)
            #expect(sent.delivered.count == 2 || sent.nextCursor == nil, "two such firings fit in 1,200 bytes, not three")
            seen += sent.delivered.map(\.reminderId)
            cursor = try next(sent)
            replies += 1
        } while cursor != nil && replies < 10
        #expect(seen == ["e", "d", "c", "b", "a"])
        #expect(replies == 3)
    }
}
