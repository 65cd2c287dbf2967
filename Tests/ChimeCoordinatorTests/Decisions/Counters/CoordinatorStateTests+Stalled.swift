import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

extension CoordinatorStateTests {
    /// `ctl status` flags firings due while no worker is alive (issue 42), and stops when one joins.
    @Test func statusFlagsDueFiringsWithoutALiveWorker() throws {
        var state = makeState(workers: [])
        let due = Self.t0.addingTimeInterval(10)
        request(&state, .schedule((0..<3).map { reminder("r\($0)", at: due) }))
        var status = state.status(at: Self.t0)
        // Nothing due yet: a cluster without workers is not stalled.
        #expect(status.dueWithoutWorker == nil)
        #expect(status.oldestDueAgeSeconds == nil)

        _ = state.onTick(now: due.addingTimeInterval(2))
        status = state.status(at: due.addingTimeInterval(5))
        #expect(status.workersAlive == 0)
        #expect(status.dueWithoutWorker == 3)
        #expect(status.oldestDueAgeSeconds == 5)

        join(&state, "w1", at: due.addingTimeInterval(6))
        status = state.status(at: due.addingTimeInterval(6))
        #expect(status.workersAlive == 1)
        #expect(status.dueWithoutWorker == nil)
        #expect(status.oldestDueAgeSeconds == nil)
    }
}
