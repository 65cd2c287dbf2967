import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Issue 25, item 5: a worker that stops says so, and what it still holds goes to another
/// worker in the same turn, not after its lease.
extension CoordinatorStateTests {
    @Test func aLeavingWorkerHandsWhatItHoldsToAnotherWorkerAtOnce() {
        var state = makeState(workers: ["w1"])
        let due = Self.t0.addingTimeInterval(1)
        request(&state, .schedule(["a", "b", "c"].map { reminder($0, at: due) }))
        let dispatched = firings(state.onTick(now: due))
        #expect(dispatched.count == 3)
        join(&state, "w2", at: due)

        // w1 delivered "a" and leaves holding "b" and "c".
        let now = due.addingTimeInterval(0.2)
        var last = WorkerMessage(
            worker: "w1", host: "h", pid: 1, capacity: 0, delivered: 1,
            acks: [.init(firingId: dispatched[0].firingId, firedAt: now, attempt: 1, epoch: 1)])
        last.leaving = true
        let directives = state.onWorkerMessage(last, at: now)
        let entries = directives.compactMap { directive -> JournalEntry? in
            if case .append(let entry) = directive { return entry }
            return nil
        }
        #expect(entries.count == 3)
        if case .acknowledged(let id, _, let worker, _)? = entries.first {
            #expect(id == dispatched[0].firingId && worker == "w1")
        } else {
            Issue.record("the acknowledgement comes first: \(entries)")
        }
        #expect(entries.dropFirst() == [.leaseExpired(dispatched[1].firingId, at: now), .leaseExpired(dispatched[2].firingId, at: now)])
        #expect(state.takeNotices().contains(.workerLeft("w1", host: "h", pid: 1, handedBack: 2, firings: [dispatched[1].firingId, dispatched[2].firingId])))

        // The same turn's tick hands them to w2, as their second attempt; w1 gets nothing more.
        let redispatched = batches(state.onTick(now: now))
        #expect(redispatched.map(\.worker) == ["w2"])
        #expect(redispatched.flatMap(\.batch.firings).map(\.firingId) == [dispatched[1].firingId, dispatched[2].firingId])
        #expect(redispatched.flatMap(\.batch.firings).map(\.attempt) == [2, 2])
        request(&state, .schedule([reminder("d", at: now)]), at: now)
        #expect(batches(state.onTick(now: now)).map(\.worker) == ["w2"])
    }

    /// The worker says it leaves on results and on dispatch. Neither a results message nor an
    /// older heartbeat on dispatch read after that brings it back, the second `leaving` notes
    /// nothing more, and a message of a new incarnation over dispatch does.
    @Test func aLeftWorkerStaysGoneUntilItAnnouncesItselfOverDispatchAgain() {
        var state = makeState(workers: ["w1"])
        let now = Self.t0.addingTimeInterval(1)
        _ = state.takeNotices()
        var leaving = WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 0, delivered: 0, acks: [])
        leaving.leaving = true
        _ = state.onWorkerMessage(leaving, at: now)
        #expect(state.takeNotices() == [.workerLeft("w1", host: "h", pid: 1, handedBack: 0, firings: [])])

        let late = WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 8, delivered: 0, acks: [])
        _ = state.onWorkerMessage(late, at: now)
        #expect(state.dispatch.workers["w1"]?.isAlive == false)
        _ = state.onWorkerMessage(leaving, viaDispatch: true, at: now)
        #expect(state.dispatch.workers["w1"]?.isAlive == false)
        #expect(state.takeNotices().isEmpty)

        _ = state.onWorkerMessage(late, viaDispatch: true, at: now.addingTimeInterval(5))
        #expect(state.dispatch.workers["w1"]?.isAlive == true)
        #expect(state.takeNotices() == [.workerJoined("w1", host: "h", pid: 1, capacity: 8, isReturning: true)])
    }
}
