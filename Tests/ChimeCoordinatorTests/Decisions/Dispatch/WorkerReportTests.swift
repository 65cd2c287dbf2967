import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// `workers` names each worker's capacity, the firings it holds (leases) and whether it is
/// quarantined, as the dashboard's Workers page shows them.
@Suite struct WorkerReportTests {
    let base = CoordinatorStateTests()
    static let t0 = CoordinatorStateTests.t0

    func report(_ state: CoordinatorState, _ worker: WorkerID, at now: Date) -> WorkerReport? {
        state.workerReports(at: now).workers.first { $0.id == worker }
    }

    @Test func capacityLeasesAndQuarantineAreReported() throws {
        var state = base.makeState(workers: ["bad", "good"]) {
            $0.leaseDuration = 10
            $0.maxAttempts = 100
        }
        base.join(&state, "good", capacity: 1)
        base.request(&state, .schedule((0..<3).map { base.reminder("r\($0)", at: Self.t0) }))
        #expect(Set(base.batches(state.onTick(now: Self.t0)).map(\.worker)) == ["bad"])
        let holding = try #require(report(state, "bad", at: Self.t0))
        #expect((holding.capacity, holding.leases, holding.quarantined) == (4096, 3, false))
        let idle = try #require(report(state, "good", at: Self.t0))
        #expect((idle.capacity, idle.leases, idle.quarantined) == (1, 0, false))
        // Three leases of "bad" run out: it is quarantined, and "good" holds what it can take.
        base.join(&state, "bad", at: Self.t0.addingTimeInterval(9))
        base.join(&state, "good", capacity: 1, at: Self.t0.addingTimeInterval(9))
        #expect(base.firings(state.onTick(now: Self.t0.addingTimeInterval(10))).count == 1)
        let set = try #require(report(state, "bad", at: Self.t0.addingTimeInterval(10)))
        #expect((set.capacity, set.leases, set.quarantined) == (4096, 0, true))
        let busy = try #require(report(state, "good", at: Self.t0.addingTimeInterval(10)))
        #expect((busy.capacity, busy.leases, busy.quarantined) == (1, 1, false))
        let json = String(decoding: WireCodec().encode(set), as: UTF8.self)
        #expect(json.contains("\"capacity\":4096") && json.contains("\"leases\":0") && json.contains("\"quarantined\":true"))
    }

    @Test func aReportOfAnEarlierCoordinatorDecodesWithoutTheNewFields() throws {
        let json = #"{"id":"w1","host":"h","pid":7,"alive":true,"lastSeenAt":"2026-12-24T08:00:00.000Z","acknowledged":1,"delivered":2}"#
        let decoded = try WireCodec().decode(WorkerReport.self, from: Data(json.utf8))
        #expect(decoded.capacity == nil && decoded.leases == nil && decoded.quarantined == nil)
        #expect(decoded.delivered == 2)
    }
}
