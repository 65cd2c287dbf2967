import ChimeCore
import Foundation
import Testing

@testable import ChimeCluster

extension CoordinatorStateTests {
    @Test func acknowledgedLeasesLeaveTheFIFOAtTheNextTickNotAtTheirExpiry() {
        var state = makeState(workers: []) { $0.leaseDuration = 10 }
        join(&state, "w1", capacity: 10)
        let ids = (0..<30).map { String(format: "r%02d", $0) }
        request(&state, .schedule(ids.map { reminder($0, at: Self.t0) }))
        let first = firings(state.onTick(now: Self.t0))
        #expect(first.count == 10)
        #expect(state.leases.count == 10)

        // The oldest lease is still current, so the acknowledged ones behind it stay for now.
        _ = ack(&state, Array(first.dropFirst()), by: "w1", at: Self.t0.addingTimeInterval(1))
        let second = firings(state.onTick(now: Self.t0.addingTimeInterval(1)))
        #expect(second.count == 9)
        #expect(state.leases.count == 19)

        _ = ack(&state, [first[0]], by: "w1", at: Self.t0.addingTimeInterval(2))
        let third = firings(state.onTick(now: Self.t0.addingTimeInterval(2)))
        #expect(third.count == 1)
        #expect(state.leases.count == 10, "the first ten are acknowledged: gone, 8 s before their expiry")

        _ = ack(&state, second + third, by: "w1", at: Self.t0.addingTimeInterval(3))
        let fourth = firings(state.onTick(now: Self.t0.addingTimeInterval(3)))
        #expect(fourth.count == 10)
        #expect(state.leases.count == 10)

        _ = ack(&state, fourth, by: "w1", at: Self.t0.addingTimeInterval(4))
        #expect(state.onTick(now: Self.t0.addingTimeInterval(4)).allSatisfy { if case .dispatch = $0 { false } else { true } })
        #expect(state.leases.count == 0)
        #expect(state.inFlightCount == 0)
        #expect(Set((first + second + third + fourth).map(\.firingId.reminder.rawValue)) == Set(ids))
    }
}
