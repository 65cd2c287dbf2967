import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


extension CoordinatorStateTests {
    /// Acknowledges `firings` from `w1`, which keeps announcing a capacity of 10.
    func ackWithCapacity10(_ state: inout CoordinatorState, _ firings: [Firing], at now: Date) {
        let acks = firings.map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: now, attempt: $0.attempt, epoch: 1) }
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 10, delivered: acks.count, acks: acks), at: now)
    }

    @Test func acknowledgedLeasesLeaveTheFIFOAtTheNextTickNotAtTheirExpiry() {
        var state = makeState(workers: []) { $0.leaseDuration = 10 }
        join(&state, "w1", capacity: 10)
        let ids = (0..<30).map { String(format: "r%02d", $0) }
        request(&state, .schedule(ids.map { reminder($0, at: Self.t0) }))
        let first = firings(state.onTick(now: Self.t0))
        #expect(first.count == 10)
        #expect(state.dispatch.leases.count == 10)

        // The oldest lease is still current, so the acknowledged ones behind it stay for now.
        ackWithCapacity10(&state, Array(first.dropFirst()), at: Self.t0.addingTimeInterval(1))
        let second = firings(state.onTick(now: Self.t0.addingTimeInterval(1)))
        #expect(second.count == 9)
        #expect(state.dispatch.leases.count == 19)

        ackWithCapacity10(&state, [first[0]], at: Self.t0.addingTimeInterval(2))
        let third = firings(state.onTick(now: Self.t0.addingTimeInterval(2)))
        #expect(third.count == 1)
        #expect(state.dispatch.leases.count == 10, "the first ten are acknowledged: gone, 8 s before their expiry")

        ackWithCapacity10(&state, second + third, at: Self.t0.addingTimeInterval(3))
        let fourth = firings(state.onTick(now: Self.t0.addingTimeInterval(3)))
        #expect(fourth.count == 10)
        #expect(state.dispatch.leases.count == 10)

        ackWithCapacity10(&state, fourth, at: Self.t0.addingTimeInterval(4))
        #expect(state.onTick(now: Self.t0.addingTimeInterval(4)).allSatisfy { if case .dispatch = $0 { false } else { true } })
        #expect(state.dispatch.leases.count == 0)
        #expect(state.inFlightCount == 0)
        #expect(Set((first + second + third + fourth).map(\.firingId.reminder.rawValue)) == Set(ids))
    }
}
