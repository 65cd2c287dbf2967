import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Redelivery away from the worker that let a lease run out, and quarantine of a worker whose
/// leases keep running out (issue 24, item 4). Pure: no sockets, time passed in.
@Suite struct LeaseFailureTests {
    let base = CoordinatorStateTests()
    static let t0 = CoordinatorStateTests.t0

    @Test func aRedeliveryGoesToAnotherLiveWorker() {
        var state = base.makeState(workers: ["w1"]) { $0.leaseDuration = 10 }
        base.request(&state, .schedule([base.reminder("a", at: Self.t0)]))
        let first = base.batches(state.onTick(now: Self.t0))
        #expect(first.map(\.worker) == ["w1"])
        // w2 joins with less free credit than w1 has after its lease ends: without the rule,
        // the redelivery would go back to w1.
        base.join(&state, "w2", capacity: 1, at: Self.t0.addingTimeInterval(9))
        base.join(&state, "w1", at: Self.t0.addingTimeInterval(9))
        let again = base.batches(state.onTick(now: Self.t0.addingTimeInterval(10)))
        #expect(again.map(\.worker) == ["w2"])
        #expect(again.flatMap(\.batch.firings).map(\.attempt) == [2])
    }

    @Test func aWorkerWhoseLeasesKeepRunningOutIsQuarantinedWithBackOff() {
        var state = base.makeState(workers: ["bad", "good"]) {
            $0.leaseDuration = 10
            $0.maxAttempts = 100
        }
        // Everything lands on "bad" first (most credit), which never acknowledges.
        base.join(&state, "good", capacity: 1)
        base.request(&state, .schedule((0..<3).map { base.reminder("r\($0)", at: Self.t0) }))
        #expect(Set(base.batches(state.onTick(now: Self.t0)).map(\.worker)) == ["bad"])
        base.join(&state, "bad", at: Self.t0.addingTimeInterval(9))
        base.join(&state, "good", capacity: 1, at: Self.t0.addingTimeInterval(9))
        let redelivered = base.firings(state.onTick(now: Self.t0.addingTimeInterval(10)))
        #expect(state.takeNotices().contains(.workerQuarantined("bad", seconds: 30)))
        _ = base.ack(&state, redelivered, by: "good", at: Self.t0.addingTimeInterval(10.5))
        #expect(state.metrics(at: Self.t0.addingTimeInterval(10)).workersQuarantined == 1)
        // Quarantined: new firings go to "good" only, however much credit "bad" has.
        base.request(&state, .schedule([base.reminder("later", at: Self.t0.addingTimeInterval(11))]), at: Self.t0.addingTimeInterval(10))
        base.join(&state, "good", capacity: 100, at: Self.t0.addingTimeInterval(11))
        base.join(&state, "bad", at: Self.t0.addingTimeInterval(11))
        let during = base.batches(state.onTick(now: Self.t0.addingTimeInterval(11)))
        #expect(!during.isEmpty && during.allSatisfy { $0.worker == "good" })
        _ = base.ack(&state, during.flatMap(\.batch.firings), by: "good", at: Self.t0.addingTimeInterval(12))
        // After 30 s it may take firings again.
        base.join(&state, "good", capacity: 0, at: Self.t0.addingTimeInterval(41))
        base.join(&state, "bad", at: Self.t0.addingTimeInterval(41))
        base.request(&state, .schedule([base.reminder("after", at: Self.t0.addingTimeInterval(41))]), at: Self.t0.addingTimeInterval(41))
        #expect(base.batches(state.onTick(now: Self.t0.addingTimeInterval(41))).map(\.worker) == ["bad"])
        #expect(state.metrics(at: Self.t0.addingTimeInterval(41)).quarantines == 1)
    }

    @Test func theBackOffDoublesAndAnAcknowledgementEndsTheSeries() {
        var book = LeaseFailureBook()
        let firing = FiringID(ReminderKey("a", of: "alice"), dueAtMilliseconds: 0)
        #expect(book.noteExpired(firing, heldBy: "w", at: 0) == nil)
        #expect(book.noteExpired(firing, heldBy: "w", at: 1) == nil)
        #expect(book.noteExpired(firing, heldBy: "w", at: 2) == 30)
        #expect(book.isQuarantined("w", at: 31.9))
        #expect(!book.isQuarantined("w", at: 32))
        for time in [40.0, 41, 42] { _ = book.noteExpired(firing, heldBy: "w", at: time) }
        #expect(book.isQuarantined("w", at: 101.9), "60 s the second time")
        book.noteAcknowledged(by: "w")
        for time in [200.0, 201] { #expect(book.noteExpired(firing, heldBy: "w", at: time) == nil) }
        #expect(book.noteExpired(firing, heldBy: "w", at: 202) == 30, "the series starts again")
        #expect(book.workerToAvoid(for: firing) == "w")
        book.forget(firing)
        #expect(book.workerToAvoid(for: firing) == nil)
    }
}
