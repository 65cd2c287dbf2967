import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// `unhandled` in the coordinator: a repeating `"+1"` reminder whose occurrences go unhandled
/// stacks, replaces (one listed entry, badge 1) or skips (suppressed while one is listed, as a
/// journal entry, so replay agrees). Pure, time passed in.
@Suite struct UnhandledOccurrenceTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    /// Schedules an every-minute `"+1"` reminder from 08:01 under `policy`, delivers `minutes`
    /// occurrences without handling any; returns the state and the journal.
    func run(_ policy: UnhandledPolicy, minutes: Int, handleAfter: Int? = nil) -> (CoordinatorState, [JournalEntry]) {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        var journal: [JournalEntry] = []
        func entries(_ directives: [CoordinatorDirective]) -> [JournalEntry] {
            directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
        }
        journal += entries(state.onRequest(ControlRequest(command: .schedule([Reminder(
            id: "water", recipient: "alice", content: Content(title: "Drink", badgeChange: .increment, unhandled: policy),
            trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(60)), repeatRule: RepeatRule(unit: .minute, interval: 1)))])),
            from: client, at: Self.t0))
        for minute in 1...minutes {
            let now = Self.t0.addingTimeInterval(Double(minute) * 60)
            journal += entries(state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 8, delivered: 0), viaDispatch: true, at: now))
            let directives = state.onTick(now: now)
            journal += entries(directives)
            let firings = directives.flatMap { directive -> [Firing] in
                if case .dispatch(let batch, _) = directive { return batch.firings }
                return []
            }
            let acks = firings.map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: now, attempt: $0.attempt, epoch: 1) }
            journal += entries(state.onWorkerMessage(
                WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 8, delivered: 0, acks: acks), viaDispatch: true, at: now))
            if minute == handleAfter, let listed = state.durable.recipients.ledgers["alice"]?.delivered.first {
                journal += entries(state.onRequest(
                    ControlRequest(command: .delivered("alice", remove: listed.firingId)), from: client, at: now))
            }
        }
        return (state, journal)
    }

    func ledger(_ state: CoordinatorState) -> BadgeLedger { state.durable.recipients.ledgers["alice"] ?? BadgeLedger() }

    @Test func stackingListsEveryOccurrence() {
        let (state, _) = run(.stack, minutes: 3)
        #expect(ledger(state).badge == 3)
        #expect(ledger(state).delivered.count == 3)
    }

    @Test func replacingListsTheNewestOnlyAndCountsItOnce() {
        let (state, _) = run(.replace, minutes: 3)
        #expect(ledger(state).badge == 1)
        #expect(ledger(state).delivered.map(\.dueAt) == [Self.t0.addingTimeInterval(180)])
        #expect(state.entries[ReminderKey("water", of: "alice")]?.deliveredCount == 3)
    }

    @Test func skippingSuppressesWhileOneIsListedAndReplayAgrees() {
        let (state, journal) = run(.skip, minutes: 3)
        #expect(ledger(state).badge == 1)
        #expect(ledger(state).delivered.map(\.dueAt) == [Self.t0.addingTimeInterval(60)])
        let skipped = journal.compactMap { entry -> Date? in
            if case .suppressed(_, let dueAt, _, UnhandledPolicy.skipReason, _) = entry { return dueAt }
            return nil
        }
        #expect(skipped == [Self.t0.addingTimeInterval(120), Self.t0.addingTimeInterval(180)])
        var replayed = CoordinatorState(configuration: state.configuration, startedAt: Self.t0)
        for entry in journal { replayed.apply(entry) }
        #expect(replayed.durable == state.durable)
    }

    @Test func skippingDeliversAgainOnceTheListedOneLeaves() {
        let (state, _) = run(.skip, minutes: 3, handleAfter: 1)
        #expect(ledger(state).delivered.map(\.dueAt) == [Self.t0.addingTimeInterval(120)], "08:02 delivered, 08:03 skipped")
        #expect(state.entries[ReminderKey("water", of: "alice")]?.deliveredCount == 2)
    }
}
