import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Issue 42, case (d): a one-shot whose firing was dead-lettered (kept or deleted) never
/// reached its recipient, so it is listed and counted `undelivered`, not `delivered`; a
/// retry makes it `delivered` again. Live, after a replay and after a snapshot alike.
@Suite struct DeadLetterStateTests {
    static let t0 = DeadLetterDeleteTests.t0

    static func states(_ run: inout DurableStateTests.Run) -> [String: ReminderState] {
        guard case .listed(let page) = run.request(.list(ReminderFilter(), all: true, limit: nil)) else {
            Issue.record("list was refused")
            return [:]
        }
        return Dictionary(uniqueKeysWithValues: page.reminders.map { ($0.reminder.id.rawValue, $0.state) })
    }

    static func counts(_ run: inout DurableStateTests.Run) -> [String: Int] {
        guard case .status(let status) = run.request(.status) else {
            Issue.record("status was refused")
            return [:]
        }
        return status.reminders.filter { $0.value != 0 }
    }

    @Test func deadLetteredAndDeletedOneShotsAreUndeliveredUntilRetried() throws {
        var run = DeadLetterDeleteTests.deadLettered()
        #expect(Self.states(&run) == ["a": .undelivered, "b": .undelivered])
        #expect(Self.counts(&run) == ["undelivered": 2])

        run.request(.deleteDeadLetter(DeadLetterDeleteTests.firingId), at: Self.t0.addingTimeInterval(3))
        let b = FiringID(ReminderKey("b", of: "alice"), dueAt: Self.t0)
        run.request(.retry(b), at: Self.t0.addingTimeInterval(3))
        #expect(Self.states(&run) == ["a": .undelivered, "b": .delivered])
        #expect(Self.counts(&run) == ["undelivered": 1, "delivered": 1])

        let replayed = run.replayed()
        let reloaded = try run.reloaded()
        #expect(replayed.durable == run.state.durable)
        #expect(reloaded.durable == run.state.durable)
        #expect(reloaded.entries[ReminderKey("a", of: "alice")]?.state == .undelivered)
        #expect(reloaded.entries[ReminderKey("b", of: "alice")]?.state == .delivered)
    }
}
