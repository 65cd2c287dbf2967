import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Spread through the coordinator: a burst due at one instant fires over the bound, each
/// firing at its documented delay, the same live, replayed and after a snapshot; a daily
/// reminder keeps every day's occurrence.
@Suite struct SpreadFiringTests {
    static let t0 = DurableStateTests.t0

    @Test func aBurstAtOneInstantFiresOverTheSpreadAtTheDocumentedInstants() throws {
        var run = DurableStateTests.Run { $0.dispatchLead = 0 }
        run.worker(at: Self.t0)
        let reminders = (0..<200).map { index in
            Reminder(
                id: "daily", recipient: RecipientID("user-\(index)"), content: Content(body: "b"),
                trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(60)), repeatRule: RepeatRule(unit: .day, interval: 1), spread: 120))
        }
        run.request(.schedule(reminders))
        var fired: [FiringID: Date] = [:]
        var now = Self.t0
        while now <= Self.t0.addingTimeInterval(200) {
            let firings = DurableStateTests.firings(run.tick(at: now))
            for firing in firings {
                fired[firing.firingId] = now
                #expect(firing.dueAt <= now)
            }
            run.worker(acks: firings, at: now)
            now = now.addingTimeInterval(1)
        }
        #expect(fired.count == 200)
        for reminder in reminders {
            let nominal = Self.t0.addingTimeInterval(60)
            let due = nominal.addingTimeInterval(Trigger.spreadDelay(of: FiringID(reminder.key, dueAt: nominal), spread: 120))
            let firingId = FiringID(reminder.key, dueAt: due)
            #expect(fired[firingId] != nil, "\(firingId) fired")
            if let at = fired[firingId] { #expect(at.timeIntervalSince(due) < 1) }
            // The next day's occurrence is armed at its own spread instant.
            let tomorrow = nominal.addingTimeInterval(86_400)
            let next = tomorrow.addingTimeInterval(Trigger.spreadDelay(of: FiringID(reminder.key, dueAt: tomorrow), spread: 120))
            #expect(run.state.schedule.deadline(of: reminder.key) == next)
        }
        let firstAt = fired.values.min() ?? now
        let lastAt = fired.values.max() ?? now
        #expect(firstAt < Self.t0.addingTimeInterval(70) && lastAt > Self.t0.addingTimeInterval(170), "spread over the 2 minutes")
        #expect(run.replayed().durable == run.state.durable)
        #expect(try run.reloaded().durable == run.state.durable)
    }

    @Test func aSpreadLongerThanTheRepeatStillFiresEveryOccurrenceInOrder() {
        var run = DurableStateTests.Run { $0.dispatchLead = 0 }
        run.worker(at: Self.t0)
        let reminder = Reminder(
            id: "tick", recipient: "alice", content: Content(body: "b"),
            trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(60)), repeatRule: RepeatRule(unit: .minute, interval: 1), spread: 600))
        run.request(.schedule([reminder]))
        var dues: [Date] = []
        var now = Self.t0
        while now <= Self.t0.addingTimeInterval(1800) {
            let firings = DurableStateTests.firings(run.tick(at: now))
            dues += firings.map(\.dueAt)
            run.worker(acks: firings, at: now)
            now = now.addingTimeInterval(5)
        }
        let events = dues.map { due in
            reminder.trigger.eventInstant(fireInstant: due, of: reminder.key, in: try? reminder.trigger.makeRecurrence())
        }
        // Every minute from 08:01 fires, once and in order: none is skipped because an earlier
        // one fired late in its spread.
        #expect(events.count >= 15)
        #expect(events == (1...max(1, events.count)).map { Self.t0.addingTimeInterval(60 * Double($0)) })
    }
}
