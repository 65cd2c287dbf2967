import ChimeClient
import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

extension ServiceInprocTests {
    /// With a 200 ms dispatch lead, the real worker holds both firings due at `due`; a cancel
    /// of one of them 150 ms before `due` reaches it as a revocation, and only the other is
    /// delivered, at `due` on the worker's own timer, and acknowledged once the 10 ms
    /// acknowledgement delay has passed.
    @Test func aCancelInsideTheDispatchLeadPreventsDelivery() throws {
        let cluster = try InprocCluster(start: start, workers: 1) { configuration in
            configuration.coordinator.dispatchLeadMilliseconds = 200
            configuration.worker.acknowledgementDelayMilliseconds = 10
            configuration.heartbeat.liveness = 1_000  // liveness never runs out here
        }
        defer { cluster.stop() }
        let client = try cluster.controlClient()
        try waitForWorkers(1, client)
        let due = start.addingTimeInterval(60)
        _ = try client.send(
            ControlRequest(command: .schedule([reminder("tea", at: due), reminder("cake", at: due)])),
            expecting: ScheduleResult.self)

        // Inside the lead: the ping's turn hands both over; the worker holds them.
        cluster.clock.set(due.addingTimeInterval(-0.15))
        _ = try client.send(ControlRequest(command: .ping), expecting: PongResult.self)
        #expect(try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.inFlight == 2)
        let cancelled = try client.send(
            ControlRequest(command: .cancel(ReminderFilter(ids: ["tea"]))), expecting: CancelResult.self)
        #expect(cancelled.result?.cancelled == ["tea"])
        #expect(try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.inFlight == 1)

        // A third firing, handed over after the revocation on the same connection and due
        // first: once it is delivered, the worker has read the revocation.
        _ = try client.send(
            ControlRequest(command: .schedule([reminder("check", at: due.addingTimeInterval(-0.1))])),
            expecting: ScheduleResult.self)
        cluster.clock.set(due.addingTimeInterval(-0.1))
        let check = try cluster.nextFireEvent()
        #expect(check.firing.firingId.reminder == "check")
        #expect(check.firedAt == due.addingTimeInterval(-0.1))
        // Its acknowledgement waits out the delay on the manual clock.
        cluster.clock.set(due.addingTimeInterval(-0.08))
        try expectEventually(timeout: 5, "check's acknowledgement") { try listing("check", client).deliveredCount == 1 }

        cluster.clock.set(due)
        let cake = try cluster.nextFireEvent()
        #expect(cake.firing.firingId.reminder == "cake", "tea, held first for the same instant, was dropped")
        #expect(cake.firedAt == due, "delivered from the worker's timer at the due instant")
        #expect(try listing("cake", client).deliveredCount == 0, "held by the acknowledgement delay")
        cluster.clock.set(due.addingTimeInterval(0.02))
        try expectEventually(timeout: 5, "cake's acknowledgement") { try listing("cake", client).deliveredCount == 1 }
        #expect(try cluster.firings.receiveMessage(dontWait: true) == nil)
        let stats = try client.send(ControlRequest(command: .stats), expecting: StatsReport.self).result
        #expect(stats?.acknowledged == 2 && stats?.redelivered == 0)
        #expect(cluster.threadFailures.isEmpty)
    }
}
