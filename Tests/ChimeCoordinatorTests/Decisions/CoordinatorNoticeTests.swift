import ChimeCore
import Foundation
import Testing

@testable import ChimeCoordinator


/// The notices the coordinator's log is made of: one per worker join and one per loss.
@Suite struct CoordinatorNoticeTests {
    let support = CoordinatorStateTests()
    var t0: Date { CoordinatorStateTests.t0 }

    @Test func workerLossIsNotedOnceWithItsLeasesInDueOrder() {
        var state = support.makeState(workers: ["w1"]) { $0.heartbeatInterval = 1; $0.heartbeatLiveness = 3; $0.leaseDuration = 30 }
        #expect(state.takeNotices() == [.workerJoined("w1", host: "h", pid: 1, capacity: 4096, isReturning: false)])
        support.request(&state, .schedule([
            support.reminder("b", at: t0.addingTimeInterval(-1)), support.reminder("a", at: t0.addingTimeInterval(-2)),
        ]))
        let held = support.firings(state.onTick(now: t0)).map(\.firingId)
        #expect(held.map(\.reminder) == ["a", "b"])
        #expect(state.takeNotices().isEmpty)
        _ = state.onTick(now: t0.addingTimeInterval(3.5))
        #expect(state.takeNotices() == [.workerLost("w1", host: "h", pid: 1, silentSeconds: 3.5, leases: 2, firings: held)])
        _ = state.onTick(now: t0.addingTimeInterval(10))
        #expect(state.takeNotices().isEmpty, "a lost worker is noted once")
        support.join(&state, "w1", at: t0.addingTimeInterval(11))
        #expect(state.takeNotices() == [.workerJoined("w1", host: "h", pid: 1, capacity: 4096, isReturning: true)])
        support.join(&state, "w1", at: t0.addingTimeInterval(11.5))
        #expect(state.takeNotices().isEmpty, "heartbeats are not joins")
    }

    @Test func lossListsAtMostFiveFirings() {
        var state = support.makeState(workers: ["w1"]) { $0.heartbeatInterval = 1; $0.heartbeatLiveness = 3; $0.leaseDuration = 30 }
        support.request(&state, .schedule((0..<8).map { support.reminder("r\($0)", at: t0.addingTimeInterval(Double($0) - 10)) }))
        let held = support.firings(state.onTick(now: t0)).map(\.firingId)
        _ = state.takeNotices()
        _ = state.onTick(now: t0.addingTimeInterval(4))
        #expect(state.takeNotices() == [
            .workerLost("w1", host: "h", pid: 1, silentSeconds: 4, leases: 8, firings: Array(held.prefix(5))),
        ])
    }
}
