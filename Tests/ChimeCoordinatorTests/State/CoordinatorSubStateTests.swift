import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


/// The coordinator's sub-states on their own: each is a value with its own rules.
@Suite struct CoordinatorSubStateTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)

    @Test func requestLogForgetsTheOldestBeyondItsCountAndByteBounds() {
        var log = RequestLog(capacity: 3, byteLimit: 10)
        log.remember(Data("aaa".utf8), for: "q1")
        log.remember(Data("bbb".utf8), for: "q2")
        log.remember(Data("ccc".utf8), for: "q3")
        #expect(log.entries.map(\.requestId) == ["q1", "q2", "q3"])
        #expect(log.byteCount == 9)
        log.remember(Data("dd".utf8), for: "q4")
        #expect(log.entries.map(\.requestId) == ["q2", "q3", "q4"], "count bound: the oldest goes")
        #expect(log.reply(to: "q1") == nil)
        log.remember(Data("eeeeeeeeeeee".utf8), for: "q5")
        #expect(log.entries.map(\.requestId) == ["q5"], "byte bound: all older go, the newest stays however large")
        #expect(log.byteCount == 12)
        log.remember(Data("f".utf8), for: "q5")
        #expect(log.entries.map(\.requestId) == ["q5"], "a replaced reply keeps its place")
        #expect(log.reply(to: "q5") == Data("f".utf8))
        #expect(log.byteCount == 1)
    }

    @Test func requestLogsAreEqualByContentAndOrder() {
        var a = RequestLog(capacity: 2, byteLimit: 100)
        var b = RequestLog(capacity: 2, byteLimit: 100)
        a.remember(Data([1]), for: "x")
        a.remember(Data([2]), for: "y")
        a.remember(Data([3]), for: "z")
        b.remember(Data([2]), for: "y")
        b.remember(Data([3]), for: "z")
        #expect(a == b)
        b.remember(Data([4]), for: "z")
        #expect(a != b)
    }

    func event(_ seq: UInt64, to recipient: RecipientID) -> FireEvent {
        let firing = Firing(reminderId: ReminderID("r\(seq)"), recipient: recipient, dueAt: Self.t0, content: Content())
        return FireEvent(seq: seq, publisher: "w1", firing: firing, firedAt: Self.t0)
    }

    @Test func eventLogKeepsTheNewestAndSelectsBySeqAndRecipient() {
        var log = EventLog(capacity: 3)
        for (seq, recipient) in [(5, "a"), (2, "b"), (9, "a"), (7, "a")] as [(UInt64, RecipientID)] {
            log.retain(event(seq, to: recipient))
        }
        #expect(log.events.map(\.seq) == [2, 9, 7], "acknowledgement order, the oldest dropped")
        #expect(log.oldestSeq == 2)
        let all = log.events(after: 0, recipient: nil, limit: nil)
        #expect(all.events.map(\.seq) == [2, 7, 9])
        #expect(!all.truncated)
        #expect(log.events(after: 2, recipient: "a", limit: nil).events.map(\.seq) == [7, 9])
        let limited = log.events(after: 0, recipient: nil, limit: 2)
        #expect(limited.events.map(\.seq) == [2, 7])
        #expect(limited.truncated)
        var none = EventLog(capacity: 0)
        none.retain(event(1, to: "a"))
        #expect(none.events.isEmpty)
    }

    @Test func eventLogStorageStopsAtItsCapacityInsteadOfDoublingPastIt() {
        var log = EventLog(capacity: 1000)
        for seq in 1...2500 as ClosedRange<UInt64> { log.retain(event(seq, to: "a")) }
        #expect(log.events.capacity == 1000, "16, 32, … 512, then 1000: not 1024")
        #expect(log.events.map(\.seq) == Array(1501...2500))
    }

    /// Caches, indexes and arrival numbers are `@Derived`: each sub-state's synthesized `==`
    /// leaves them out, so a state rebuilt from a snapshot equals the live one.
    @Test func equalityLeavesDerivedValuesOut() throws {
        #expect(Derived(wrappedValue: 1) == Derived(wrappedValue: 2))
        var early = EventLog(capacity: 2)
        var late = EventLog(capacity: 2)
        for seq in 1...3 as ClosedRange<UInt64> { early.retain(event(seq, to: "a")) }
        for seq in 2...3 as ClosedRange<UInt64> { late.retain(event(seq, to: "a")) }
        #expect(early == late, "the same events, other arrival numbers")
        let reminder = Reminder(
            id: "r", recipient: "a", content: Content(), trigger: Trigger(start: .instant(Self.t0), repeatRule: RepeatRule(unit: .day)))
        var cached = Schedule()
        let plain = cached
        cached.recurrences[reminder.key] = try reminder.trigger.makeRecurrence()
        #expect(cached == plain, "the recurrence cache is derived")
        var ahead = Deliveries(eventRetention: 1)
        ahead.ahead[reminder.key] = [FiringID(reminder.key, dueAt: Self.t0)]
        #expect(ahead == Deliveries(eventRetention: 1), "the held-ahead index is derived")
    }
}
