import ChimeCore
import ChimeJournal
import ChimeSecurity
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Operators' triggers (issue 41): `triggerNow`, `backfill`, `remaining` and `disable --note`,
/// each journaled as one `.trigger` entry folded by `DurableState.apply`, the same live,
/// replayed and after a snapshot.
@Suite struct OperatorTriggerTests {
    static let t0 = DurableStateTests.t0
    static let key = ReminderKey("daily", of: "alice")

    /// A daily 08:00 reminder scheduled a week before t0's day (first occurrence t0 + 1 day).
    static func dailyRun() -> DurableStateTests.Run {
        var run = DurableStateTests.Run { $0.dispatchLead = 0 }
        run.worker(at: t0)
        let reminder = Reminder(
            id: "daily", recipient: "alice", content: Content(body: "b"),
            trigger: Trigger(start: .instant(t0.addingTimeInterval(-7 * 86_400)), repeatRule: RepeatRule(unit: .day, interval: 1)))
        run.request(.schedule([reminder]), at: t0.addingTimeInterval(-30))
        return run
    }

    static func expectSameAfterRecovery(_ run: DurableStateTests.Run, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(run.replayed().durable == run.state.durable, sourceLocation: sourceLocation)
        #expect(try run.reloaded().durable == run.state.durable, sourceLocation: sourceLocation)
    }

    @Test func triggerNowFiresOnceWithoutMovingTheSchedule() throws {
        var run = Self.dailyRun()
        let before = run.state.schedule.deadline(of: Self.key)
        #expect(before == Self.t0)
        let at = Self.t0.addingTimeInterval(-10)
        let outcome = run.request(.trigger(.fireNow("daily", recipient: "alice")), at: at)
        #expect(outcome == .trigger(.firedNow(TriggerNowResult(firingId: FiringID(Self.key, dueAt: at)))))
        #expect(run.journal.last == .trigger(.firedNow(Self.key, dueAt: at, at: at)))
        let firings = DurableStateTests.firings(run.tick(at: at))
        #expect(firings.map(\.firingId) == [FiringID(Self.key, dueAt: at)])
        #expect(run.state.schedule.deadline(of: Self.key) == before, "the schedule did not move")
        #expect(run.state.entries[Self.key]?.state == .pending)
        try Self.expectSameAfterRecovery(run)
        guard case .failed(let error) = run.request(.trigger(.fireNow("nope", recipient: "alice")), at: at) else {
            Issue.record("an unknown reminder was fired")
            return
        }
        #expect(error.code == .notFound)
    }

    @Test func aSecondBackfillOfTheSameRangeFiresNothing() throws {
        var run = Self.dailyRun()
        let from = Self.t0.addingTimeInterval(-5 * 86_400 - 60)
        let to = Self.t0.addingTimeInterval(-2 * 86_400 + 60)
        let outcome = run.request(.trigger(.backfill("daily", recipient: "alice", from: from, to: to)), at: Self.t0.addingTimeInterval(-5))
        let expected = (2...5).reversed().map { FiringID(Self.key, dueAt: Self.t0.addingTimeInterval(-Double($0) * 86_400)) }
        #expect(outcome == .trigger(.backfilled(BackfillResult(fired: expected, alreadyFired: 0))))
        let firings = DurableStateTests.firings(run.tick(at: Self.t0.addingTimeInterval(-5)))
        #expect(firings.map(\.firingId) == expected)
        run.worker(acks: firings, at: Self.t0.addingTimeInterval(-4))
        // Again, and a wider range: only the days not covered fire.
        let again = run.request(.trigger(.backfill("daily", recipient: "alice", from: from, to: to)), at: Self.t0.addingTimeInterval(-3))
        #expect(again == .trigger(.backfilled(BackfillResult(fired: [], alreadyFired: 4))))
        let wider = run.request(
            .trigger(.backfill("daily", recipient: "alice", from: from.addingTimeInterval(-86_400), to: to)), at: Self.t0.addingTimeInterval(-2))
        #expect(wider == .trigger(.backfilled(BackfillResult(
            fired: [FiringID(Self.key, dueAt: Self.t0.addingTimeInterval(-6 * 86_400))], alreadyFired: 4))))
        #expect(run.state.schedule.deadline(of: Self.key) == Self.t0, "the schedule did not move")
        try Self.expectSameAfterRecovery(run)
        // A range of more than 1,000 occurrences is refused whole.
        let minutely = Reminder(
            id: "m", recipient: "alice", content: Content(body: "b"),
            trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(-86_400)), repeatRule: RepeatRule(unit: .minute, interval: 1)))
        run.request(.schedule([minutely]), at: Self.t0)
        guard case .failed(let error) = run.request(
            .trigger(.backfill("m", recipient: "alice", from: Self.t0.addingTimeInterval(-86_400), to: Self.t0)), at: Self.t0)
        else {
            Issue.record("a day of minutes was backfilled")
            return
        }
        #expect(error.code == .tooLarge)
    }

    @Test func aRemainingCountEndsTheSeriesAndANewOneRevivesIt() throws {
        var run = Self.dailyRun()
        let outcome = run.request(.trigger(.setRemaining("daily", recipient: "alice", count: 2)), at: Self.t0.addingTimeInterval(-20))
        #expect(outcome == .trigger(.remaining(RemainingResult(id: "daily", remaining: 2, state: .pending, nextFireAt: Self.t0))))
        var fired: [Date] = []
        for day in 0..<4 {
            let now = Self.t0.addingTimeInterval(Double(day) * 86_400)
            run.worker(at: now)
            let firings = DurableStateTests.firings(run.tick(at: now))
            fired += firings.map(\.dueAt)
            run.worker(acks: firings, at: now)
        }
        #expect(fired == [Self.t0, Self.t0.addingTimeInterval(86_400)])
        #expect(run.state.entries[Self.key]?.state == .finished)
        #expect(run.state.durable.triggers.remaining[Self.key] == 0)
        try Self.expectSameAfterRecovery(run)
        // A new count goes on from now.
        let now = Self.t0.addingTimeInterval(3.5 * 86_400)
        let revived = run.request(.trigger(.setRemaining("daily", recipient: "alice", count: 1)), at: now)
        #expect(revived == .trigger(.remaining(RemainingResult(
            id: "daily", remaining: 1, state: .pending, nextFireAt: Self.t0.addingTimeInterval(4 * 86_400)))))
        // And 0 finishes it at once.
        let finished = run.request(.trigger(.setRemaining("daily", recipient: "alice", count: 0)), at: now)
        #expect(finished == .trigger(.remaining(RemainingResult(id: "daily", remaining: 0, state: .finished, nextFireAt: nil))))
        try Self.expectSameAfterRecovery(run)
    }

    @Test func aDisableNoteIsListedUntilTheReminderIsSwitchedOn() throws {
        var run = Self.dailyRun()
        let client = ClientAddress(routing: [Data([1])])
        _ = run.keep(run.state.onRequest(
            ControlRequest(command: .setEnabled(["daily"], false, recipient: "alice"), note: "holiday freeze"), from: client,
            at: Self.t0.addingTimeInterval(-20)))
        #expect(run.journal.last == .trigger(.noted([Self.key], note: "holiday freeze", at: Self.t0.addingTimeInterval(-20))))
        guard case .listed(let page) = run.request(.list(ReminderFilter(recipient: "alice"), all: true, limit: nil)) else {
            Issue.record("list was refused")
            return
        }
        #expect(page.reminders.first?.note == "holiday freeze")
        try Self.expectSameAfterRecovery(run)
        run.request(.setEnabled(["daily"], true, recipient: "alice"), at: Self.t0.addingTimeInterval(-10))
        #expect(run.state.durable.triggers.notes.isEmpty)
        // Cancelling forgets everything the operators set.
        run.request(.trigger(.setRemaining("daily", recipient: "alice", count: 3)), at: Self.t0.addingTimeInterval(-5))
        run.request(.cancel(ReminderFilter(ids: ["daily"])), at: Self.t0.addingTimeInterval(-4))
        #expect(run.state.durable.triggers.isEmpty)
        try Self.expectSameAfterRecovery(run)
    }

    @Test func requestsDecodeStrictlyAndOnlyOperatorsMayUseThem() throws {
        let codec = WireCodec()
        let backfill = try codec.decode(
            ControlRequest.self,
            from: Data(#"{"op":"backfill","id":"daily","recipient":"alice","from":"2026-12-01T00:00:00Z","to":"2026-12-02T00:00:00Z"}"#.utf8))
        #expect(backfill.command == .trigger(.backfill(
            "daily", recipient: "alice", from: try RFC3339.parseInstant("2026-12-01T00:00:00Z"),
            to: try RFC3339.parseInstant("2026-12-02T00:00:00Z"))))
        #expect(backfill.routingRecipient == "alice" && backfill.isMutating)
        let remaining = try codec.decode(ControlRequest.self, from: Data(#"{"op":"remaining","id":"d","recipient":"a","count":null}"#.utf8))
        #expect(remaining.command == .trigger(.setRemaining("d", recipient: "a", count: nil)))
        for bad in [
            #"{"op":"backfill","id":"d","recipient":"a","from":"2026-12-02T00:00:00Z","to":"2026-12-01T00:00:00Z"}"#,
            #"{"op":"remaining","id":"d","recipient":"a"}"#, #"{"op":"remaining","id":"d","recipient":"a","count":-1}"#,
            #"{"op":"triggerNow","id":"d"}"#, #"{"op":"triggerNow","id":"d","recipient":"a","extra":1}"#,
            #"{"op":"enable","ids":["d"],"note":"x"}"#,
        ] {
            #expect(throws: (any Error).self, "\(bad)") { try codec.decode(ControlRequest.self, from: Data(bad.utf8)) }
        }
        for request in [backfill, remaining] {
            let again = try codec.decode(ControlRequest.self, from: codec.encode(request))
            #expect(again == request)
        }
        for op in [ControlOperation.triggerNow, .backfill, .remaining] {
            #expect(CoordinatorState.operations(for: .operator).contains(op))
            #expect(!CoordinatorState.operations(for: .client).contains(op))
        }
        let entry = JournalEntry.trigger(.backfilled(Self.key, from: Self.t0, through: Self.t0, dueAts: [Self.t0], at: Self.t0))
        let payload = try JournalEntryCodec().encode(entry)
        #expect(try JournalEntryCodec().decode(payload.bytes[...], encoding: payload.encoding) == entry)
        #expect(entry.subjects.firings == [FiringID(Self.key, dueAt: Self.t0)])
    }
}
