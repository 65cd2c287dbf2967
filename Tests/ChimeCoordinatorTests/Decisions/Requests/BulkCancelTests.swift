import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


/// Issue 15, item 1: a cancel by filter walks the reminders in slices, one a loop turn, and
/// answers once the walk ends. Pure: no sockets.
@Suite struct BulkCancelTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let alice = ClientAddress(routing: [Data([1])])
    let bob = ClientAddress(routing: [Data([2])])

    func makeState(_ count: Int, recipient: (Int) -> String = { _ in "alice" }) -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        for start in stride(from: 0, to: count, by: 500) {
            let reminders = (start..<min(start + 500, count)).map { index in
                Reminder(
                    id: ReminderID(String(format: "r-%05d", index)), recipient: RecipientID(recipient(index)),
                    content: Content(body: "b"), trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(3600))))
            }
            _ = state.onRequest(ControlRequest(command: .schedule(reminders)), from: alice, at: Self.t0)
        }
        return state
    }

    static func journaled(_ directives: [CoordinatorDirective]) -> [JournalEntry] {
        directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
    }

    static func cancelledIDs(_ entries: [JournalEntry]) -> [[ReminderID]] {
        entries.compactMap { if case .cancelled(let keys, _) = $0 { keys.map(\.id) } else { nil } }
    }

    static func replies(_ directives: [CoordinatorDirective]) -> [(Data, ClientAddress)] {
        directives.compactMap { if case .replyEncoded(let body, let client) = $0 { (body, client) } else { nil } }
    }

    @Test func aCancelOfMoreThanOneSliceIsAnsweredAfterItsLastSliceAndARetryJoinsIt() {
        var state = makeState(2000, recipient: { $0 % 2 == 0 ? "alice" : "bob" })
        let before = state
        var journal: [JournalEntry] = []
        let request = ControlRequest(requestId: "c1", command: .cancel(ReminderFilter(recipient: "alice")))

        var directives = state.onRequest(request, from: alice, at: Self.t0)
        #expect(Self.cancelledIDs(Self.journaled(directives)).map(\.count) == [250], "250 examined, all alice's: her run of the recipient index")
        #expect(!directives.contains { if case .reply = $0 { true } else { false } }, "no reply before the walk ends")
        #expect(state.nextWake == Self.t0, "the walk goes on next turn")
        journal += Self.journaled(directives)

        // A ping between slices is answered at once; a retry of the cancel joins the walk.
        guard case .reply(.pong, _, _)? = state.onRequest(ControlRequest(command: .ping), from: bob, at: Self.t0).last else {
            Issue.record("no pong")
            return
        }
        directives = state.onRequest(request, from: bob, at: Self.t0)
        #expect(directives.isEmpty)
        #expect(state.bulkCancels.count == 1)

        var turns = 0
        var answered: [(Data, ClientAddress)] = []
        while !state.bulkCancels.isEmpty && turns < 10 {
            directives = state.onTick(now: Self.t0)
            journal += Self.journaled(directives)
            answered += Self.replies(directives)
            turns += 1
        }
        #expect(turns == 3)
        #expect(Self.cancelledIDs(journal).map(\.count) == [250, 250, 250, 250])
        let expectedIDs = (0..<2000).filter { $0 % 2 == 0 }.map { ReminderID(String(format: "r-%05d", $0)) }
        let expected = WireCodec().encode(ControlReply(requestId: "c1", result: CancelResult(cancelled: expectedIDs)))
        #expect(answered.map(\.0) == [expected, expected])
        #expect(answered.map(\.1) == [alice, bob])
        #expect(journal.last == .answered(requestId: "c1", reply: expected, at: Self.t0, recipient: "alice"), "a cancel of alice's")
        #expect(state.entries.stateCounts[.pending] == 1000)
        #expect(state.reminderCount == 1000)
        #expect(state.entries.hasConsistentIndexes)

        // A retry after the walk gets the same bytes and changes nothing.
        #expect(state.onRequest(request, from: alice, at: Self.t0) == [.replyEncoded(expected, to: alice)])

        // Recovery folds the same entries into the same state.
        var recovered = before
        for entry in journal { recovered.apply(entry) }
        #expect(recovered.encodedSnapshot(at: Self.t0) == state.encodedSnapshot(at: Self.t0))
    }

    @Test func namedIDsAreWalkedInSlicesTooAndOnlyThoseHeldAreCancelled() {
        var state = makeState(600)
        let named = (0..<700).reversed().map { ReminderID(String(format: "r-%05d", $0 * 2)) } + ["r-00000"]
        var directives = state.onRequest(ControlRequest(command: .cancel(ReminderFilter(ids: named))), from: alice, at: Self.t0)
        var turns = 0
        while !state.bulkCancels.isEmpty && turns < 10 {
            directives += state.onTick(now: Self.t0)
            turns += 1
        }
        #expect(turns == 3, "700 distinct ids looked up and 300 reminders held examined, 250 a slice")
        let expectedIDs = (0..<300).map { ReminderID(String(format: "r-%05d", $0 * 2)) }
        #expect(Self.replies(directives).map(\.0) == [WireCodec().encode(ControlReply(requestId: nil, result: CancelResult(cancelled: expectedIDs)))])
        #expect(state.reminderCount == 300)
    }

    @Test func aCancelWithinOneSliceIsAnsweredAtOnceAsBefore() {
        var state = makeState(200)
        let directives = state.onRequest(ControlRequest(command: .cancel(ReminderFilter(recipient: "alice"))), from: alice, at: Self.t0)
        guard case .reply(.cancelled(let result), _, _)? = directives.last else {
            Issue.record("\(directives)")
            return
        }
        #expect(result.cancelled.count == 200)
        #expect(state.bulkCancels.isEmpty && state.reminderCount == 0)
    }

    @Test func statusCountsFollowEveryChangeOfState() {
        var state = makeState(10)
        _ = state.onRequest(ControlRequest(command: .setEnabled(["r-00001", "r-00002"], false)), from: alice, at: Self.t0)
        _ = state.onRequest(ControlRequest(command: .cancel(ReminderFilter(ids: ["r-00003"]))), from: alice, at: Self.t0)
        let counts = state.status(at: Self.t0).reminders
        #expect(counts == ["pending": 7, "disabled": 2, "delivered": 0, "finished": 0, "suppressed": 0, "undelivered": 0])
        var walked: [ReminderState: Int] = [:]
        for entry in state.entries.values { walked[entry.state, default: 0] += 1 }
        #expect(state.entries.stateCounts.filter { $0.value != 0 } == walked)
    }
}
