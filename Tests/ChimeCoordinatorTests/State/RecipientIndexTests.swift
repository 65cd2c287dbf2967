import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// The recipient index (issue 42): `list --recipient` and `cancel --recipient` cost what the
/// recipient holds, not a walk of every reminder; the index follows the entry table. That a
/// recovery, a slice and a merge leave it equal to one built from scratch is checked by
/// `CrashEquivalenceTests`, `DurableStateSliceTests` and the slot-move simulation.
@Suite struct RecipientIndexTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)
    static let client = ClientAddress(routing: [Data([1])])
    /// More than twice what one page examines at most, so a walk of every reminder could not
    /// reach alice's in one request.
    static let othersCount = 2 * CoordinatorState.maximumExaminedPerPage + 2000

    /// A state with alice's `a1`, `a2`, `a3` among ``othersCount`` of bob's, ids chosen so
    /// that in id order alice's come after all of bob's.
    static func aliceAmongMany() -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        var state = CoordinatorState(configuration: configuration, startedAt: t0)
        func reminder(_ id: String, of recipient: RecipientID) -> Reminder {
            Reminder(
                id: ReminderID(id), recipient: recipient, content: Content(body: "b"),
                trigger: Trigger(start: .instant(t0.addingTimeInterval(86_400))))
        }
        for start in stride(from: 0, to: othersCount, by: 1000) {
            let batch = (start..<min(start + 1000, othersCount)).map { reminder(String(format: "b-%06d", $0), of: "bob") }
            _ = state.onRequest(ControlRequest(command: .schedule(batch)), from: client, at: t0)
        }
        _ = state.onRequest(
            ControlRequest(command: .schedule(["z-a1", "z-a2", "z-a3"].map { reminder($0, of: "alice") })), from: client, at: t0)
        return state
    }

    @Test func listByRecipientFindsAFewAmongManyInOneRequest() throws {
        let state = Self.aliceAmongMany()
        #expect(state.reminderCount == Self.othersCount + 3)
        guard case .listed(let page) = state.list(ReminderFilter(recipient: "alice"), includeInactive: false, limit: nil, cursor: nil, at: Self.t0)
        else {
            Issue.record("list did not answer a page")
            return
        }
        #expect(page.reminders.map(\.reminder.id) == ["z-a1", "z-a2", "z-a3"])
        #expect(page.total == 3)
        #expect(page.nextCursor == nil)
    }

    @Test func listByRecipientPagesThroughItsOwnRun() throws {
        let state = Self.aliceAmongMany()
        guard case .listed(let first) = state.list(ReminderFilter(recipient: "alice"), includeInactive: false, limit: 2, cursor: nil, at: Self.t0)
        else {
            Issue.record("list did not answer a page")
            return
        }
        #expect(first.reminders.map(\.reminder.id) == ["z-a1", "z-a2"])
        let cursor = try PageCursor(text: try #require(first.nextCursor), expecting: .list)
        guard case .listed(let second) = state.list(ReminderFilter(recipient: "alice"), includeInactive: false, limit: 2, cursor: cursor, at: Self.t0)
        else {
            Issue.record("list did not answer the second page")
            return
        }
        #expect(second.reminders.map(\.reminder.id) == ["z-a3"])
        #expect(second.nextCursor == nil)
    }

    @Test func cancelByRecipientEndsInItsFirstSlice() throws {
        var state = Self.aliceAmongMany()
        var directives: [CoordinatorDirective] = []
        let outcome = state.startCancel(
            ReminderFilter(recipient: "alice"), requestId: "c", from: Self.client, at: Self.t0, directives: &directives)
        #expect(outcome == .cancelled(CancelResult(cancelled: ["z-a1", "z-a2", "z-a3"])))
        #expect(state.bulkCancels.isEmpty)
        #expect(state.reminderCount == Self.othersCount)
        #expect(state.entries.byRecipient.count(of: "alice") == 0)
        #expect(state.entries.byRecipient.count(of: "bob") == Self.othersCount)
        #expect(state.entries.byRecipient.recipientCount == 1)
        #expect(state.entries.hasConsistentIndexes)
    }

    @Test func indexFollowsEveryEntryChange() throws {
        var table = EntryTable()
        func entry(_ id: String, of recipient: RecipientID) -> ReminderEntry {
            ReminderEntry(
                reminder: Reminder(id: ReminderID(id), recipient: recipient, content: Content(body: "b"), trigger: Trigger(start: .instant(Self.t0))),
                next: nil, state: .pending)
        }
        let a1 = ReminderKey("1", of: "alice")
        let b1 = ReminderKey("1", of: "bob")
        table[a1] = entry("1", of: "alice")
        table[b1] = entry("1", of: "bob")
        var moved = entry("1", of: "alice")
        moved.state = .delivered
        table[a1] = moved
        #expect(Array(table.byRecipient.keys(of: "alice", after: nil)) == [a1])
        #expect(Array(table.byRecipient.keys(of: "bob", after: nil)) == [b1])
        table.removeValue(forKey: a1)
        #expect(Array(table.byRecipient.keys(of: "alice", after: nil)).isEmpty)
        table[b1] = nil
        #expect(table.byRecipient.recipientCount == 0)
        #expect(table.hasConsistentIndexes)
    }

    /// The check the simulations make fails on an index that is not its entries'.
    @Test func aStrayKeyMakesTheIndexInconsistent() {
        let entries: [(key: ReminderKey, value: ReminderEntry)] = [
            (ReminderKey("1", of: "alice"), ReminderEntry(
                reminder: Reminder(id: "1", recipient: "alice", content: Content(body: "b"), trigger: Trigger(start: .instant(Self.t0))),
                next: nil, state: .pending))
        ]
        var index = RecipientIndex(rebuiltFrom: entries)
        #expect(index == RecipientIndex(rebuiltFrom: entries))
        index.insert(ReminderKey("1", of: "alice"), of: "bob")
        #expect(index != RecipientIndex(rebuiltFrom: entries))
    }
}
