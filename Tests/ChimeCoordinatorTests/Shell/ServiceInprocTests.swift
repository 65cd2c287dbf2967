import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator
import ZeroMQ
import ChimeClient

/// The coordinator and worker services' real loops, sockets and journal in one process over
/// `inproc://`, on a manual clock: due times, leases and liveness are reached by moving the
/// clock, never by waiting for them.
@Suite(.serialized) struct ServiceInprocTests {
    let start = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z

    @Test func aReminderFiresWhenTheClockReachesItsTimeAndNotBefore() throws {
        let cluster = try InprocCluster(start: start, workers: 1)
        defer { cluster.stop() }
        let client = try cluster.controlClient()
        try waitForWorkers(1, client)
        let due = start.addingTimeInterval(60)
        let scheduled = try client.send(
            ControlRequest(command: .schedule([reminder("tea", at: due)])), expecting: ScheduleResult.self)
        #expect(scheduled.result?.scheduled.map(\.nextFireAt) == [due])

        cluster.clock.advance(by: 59.999)
        // The reply comes after the turn that read the advanced clock and ticked.
        #expect(try client.send(ControlRequest(command: .ping), expecting: PongResult.self).result?.now == start.addingTimeInterval(59.999))
        let before = try listing("tea", client)
        #expect(before.state == .pending && before.deliveredCount == 0 && before.nextFireAt == due)

        cluster.clock.set(due)
        let event = try cluster.nextFireEvent()
        #expect(event.firing.firingId.text == "alice/tea@2026-12-24T08:01:00.000Z")
        #expect(event.firing.dueAt == due && event.firing.attempt == 1 && !event.firing.late)
        #expect(event.firedAt == due, "the worker reads the same clock")
        try expectEventually(timeout: 5, "the acknowledgement") { try listing("tea", client).deliveredCount == 1 }
        #expect(try listing("tea", client).state == .delivered)
        #expect(cluster.threadFailures.isEmpty)
    }

    @Test func anUnacknowledgedFiringIsRedeliveredExactlyWhenItsLeaseRunsOut() throws {
        let cluster = try InprocCluster(start: start) { configuration in
            configuration.coordinator.leaseSeconds = 10
            configuration.heartbeat.liveness = 1_000  // liveness never runs out here
        }
        defer { cluster.stop() }
        let client = try cluster.controlClient()
        let worker = try FakeWorker(cluster, id: "fake")
        defer { worker.socket.close() }
        try waitForWorkers(1, client)
        let due = start.addingTimeInterval(5)
        _ = try client.send(ControlRequest(command: .schedule([reminder("tea", at: due)])), expecting: ScheduleResult.self)

        cluster.clock.set(due)
        let first = try worker.nextBatch()
        #expect(first.firings.map(\.firingId.text) == ["alice/tea@2026-12-24T08:00:05.000Z"])
        #expect(first.firings.map(\.attempt) == [1])

        // One millisecond before the lease ends: still held, nothing sent again.
        cluster.clock.set(due.addingTimeInterval(9.999))
        _ = try client.send(ControlRequest(command: .ping), expecting: PongResult.self)
        #expect(try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.inFlight == 1)
        #expect(try worker.socket.receiveMessage(dontWait: true) == nil)

        cluster.clock.set(due.addingTimeInterval(10))
        let second = try worker.nextBatch()
        #expect(second.firings.map(\.firingId.text) == ["alice/tea@2026-12-24T08:00:05.000Z"])
        #expect(second.firings.map(\.attempt) == [2])
        let stats = try client.send(ControlRequest(command: .stats), expecting: StatsReport.self).result
        #expect(stats?.redelivered == 1 && stats?.acknowledged == 0)
    }

    @Test func aWallClockStepBackDoesNotFreezeALease() throws {
        let (cluster, _, worker) = try oneLeasedFiring(leaseSeconds: 10, liveness: 1_000, worker: "fake")
        defer { cluster.stop(); worker.socket.close() }
        // An hour back on the wall clock; ten seconds really pass. A wall-clock lease would
        // hold for another hour.
        cluster.clock.stepWall(by: -3_600)
        cluster.clock.advance(by: 10)
        let second = try worker.nextBatch()
        #expect(second.firings.map(\.firingId.text) == ["alice/tea@2026-12-24T08:00:00.000Z"])
        #expect(second.firings.map(\.attempt) == [2])
    }

    @Test func aWallClockStepForwardExpiresNoLeaseAndDropsNoWorker() throws {
        let (cluster, client, worker) = try oneLeasedFiring(leaseSeconds: 10, liveness: 3, worker: "fake")
        defer { cluster.stop(); worker.socket.close() }
        cluster.clock.stepWall(by: 3_600)
        cluster.clock.advance(by: 1)
        #expect(try client.send(ControlRequest(command: .ping), expecting: PongResult.self).result?.now == start.addingTimeInterval(3_601))
        let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result
        #expect(status?.inFlight == 1 && status?.workersAlive == 1)
        #expect(try worker.socket.receiveMessage(dontWait: true) == nil)
        #expect(try client.send(ControlRequest(command: .stats), expecting: StatsReport.self).result?.redelivered == 0)
    }

    @Test func aSilentWorkerIsDroppedAfterItsLivenessAndItsFiringsGoToAnother() throws {
        let (cluster, client, silent) = try oneLeasedFiring(leaseSeconds: 3_600, liveness: 3, worker: "silent")
        defer { cluster.stop(); silent.socket.close() }

        let healthy = try FakeWorker(cluster, id: "healthy")
        defer { healthy.socket.close() }
        try waitForWorkers(2, client)
        // 3 missed heartbeats of 1 s: the silent worker is gone, the healthy one (which
        // speaks up after each step) gets the firing with the next attempt.
        for _ in 0..<4 {
            cluster.clock.advance(by: 1)
            try healthy.heartbeat()
            _ = try client.send(ControlRequest(command: .ping), expecting: PongResult.self)
        }
        let redelivered = try healthy.nextBatch()
        #expect(redelivered.firings.map(\.firingId.text) == ["alice/tea@2026-12-24T08:00:00.000Z"])
        #expect(redelivered.firings.map(\.attempt) == [2])
        #expect(try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.workersAlive == 1)
    }

    @Test func aRestartOnTheSameStoreFiresWhatWasMissedWhileDown() throws {
        let directory = try TemporaryDirectory(prefix: "inproc-restart")
        do {
            let cluster = try InprocCluster(start: start, storeDirectory: directory.url)
            let client = try cluster.controlClient()
            _ = try client.send(
                ControlRequest(command: .schedule([reminder("tea", at: start.addingTimeInterval(60))])),
                expecting: ScheduleResult.self)
            cluster.stop()
            #expect(cluster.threadFailures.isEmpty)
        }
        // Down for ten minutes; the one-shot fires once, late, with its own due time.
        let cluster = try InprocCluster(start: start.addingTimeInterval(600), workers: 1, storeDirectory: directory.url)
        defer { cluster.stop() }
        let event = try cluster.nextFireEvent()
        #expect(event.firing.firingId.text == "alice/tea@2026-12-24T08:01:00.000Z")
        #expect(event.firing.late && event.firing.attempt == 1)
        #expect(event.firedAt == start.addingTimeInterval(600))
    }

    // MARK: - Helpers

    /// A cluster (1 s heartbeats) whose one worker, played by the test, holds the firing of
    /// `tea` due at `start`, attempt 1, unacknowledged.
    func oneLeasedFiring(leaseSeconds: Double, liveness: Int, worker id: WorkerID) throws
        -> (InprocCluster, ControlClient, FakeWorker)
    {
        let cluster = try InprocCluster(start: start) { configuration in
            configuration.coordinator.leaseSeconds = leaseSeconds
            configuration.heartbeat.intervalMilliseconds = 1_000
            configuration.heartbeat.liveness = liveness
        }
        let client = try cluster.controlClient()
        let worker = try FakeWorker(cluster, id: id)
        try waitForWorkers(1, client)
        _ = try client.send(ControlRequest(command: .schedule([reminder("tea", at: start)])), expecting: ScheduleResult.self)
        #expect(try worker.nextBatch().firings.map(\.attempt) == [1])
        return (cluster, client, worker)
    }

    func reminder(_ id: ReminderID, at due: Date) -> Reminder {
        Reminder(id: id, recipient: "alice", content: Content(title: "Tea"), trigger: Trigger(start: .instant(due)))
    }

    func listing(_ id: ReminderID, _ client: ControlClient) throws -> ReminderListing {
        let reply = try client.send(
            ControlRequest(command: .list(ReminderFilter(ids: [id]), all: true, limit: nil)), expecting: ListResult.self)
        return try #require(reply.result?.reminders.first)
    }

    /// Issue 37: the dispatch ROUTER hands a claimed routing id to the newest connection, so
    /// firings go to the route the worker announced itself on, which a claim of its bare id
    /// does not name.
    @Test func aConnectionClaimingAWorkersBareIDGetsNoneOfItsFirings() throws {
        let cluster = try InprocCluster(start: start) { configuration in
            configuration.heartbeat.liveness = 1_000  // liveness never runs out here
        }
        defer { cluster.stop() }
        let client = try cluster.controlClient()
        let route = DispatchRoute.routingID(for: "fake", nonce: (7, 9))
        let worker = try FakeWorker(cluster, id: "fake", routingID: route)
        defer { worker.socket.close() }
        try waitForWorkers(1, client)
        let claimer = try Socket(.dealer, context: cluster.context)
        defer { claimer.close() }
        try claimer.set(.linger(milliseconds: 0))
        try claimer.set(.routingID(Data("fake".utf8)))
        try claimer.connect(to: cluster.configuration.endpoints.dispatch.connect)
        // A loop turn after the connect: the ROUTER has attached the claimer (every turn polls dispatch).
        _ = try client.send(ControlRequest(command: .ping), expecting: PongResult.self)
        let due = start.addingTimeInterval(5)
        _ = try client.send(ControlRequest(command: .schedule([reminder("tea", at: due)])), expecting: ScheduleResult.self)

        cluster.clock.set(due)
        #expect(try worker.nextBatch().firings.map(\.firingId.text) == ["alice/tea@2026-12-24T08:00:05.000Z"])
        #expect(try claimer.receiveMessage(dontWait: true) == nil)
        #expect(cluster.threadFailures.isEmpty)
    }

    func waitForWorkers(_ count: Int, _ client: ControlClient) throws {
        try expectEventually(timeout: 5, "\(count) workers alive") {
            try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result?.workersAlive == count
        }
    }
}

/// A worker played by the test: a DEALER on the dispatch endpoint that announces itself and
/// receives batches, and acknowledges nothing unless told.
struct FakeWorker {
    let socket: Socket
    let id: WorkerID
    let codec = WireCodec()

    /// Connects with `routingID` (the bare id when `nil`) and announces itself.
    init(_ cluster: InprocCluster, id: WorkerID, routingID: Data? = nil) throws {
        self.id = id
        socket = try Socket(.dealer, context: cluster.context)
        try socket.set(.linger(milliseconds: 0))
        try socket.set(.routingID(routingID ?? Data(id.rawValue.utf8)))
        try socket.set(.receiveTimeout(milliseconds: 5000))
        try socket.connect(to: cluster.configuration.endpoints.dispatch.connect)
        try heartbeat()
    }

    /// Announces the worker (its first message) or beats its heartbeat.
    func heartbeat() throws {
        let message = WorkerMessage(worker: id, host: "test", pid: 1, capacity: 64, delivered: 0)
        _ = try socket.send([codec.encode(message)])
    }

    /// The next dispatch batch, within 5 s.
    func nextBatch() throws -> DispatchBatch {
        guard let frames = try socket.receiveMessage() else { throw DeadlineExceeded(what: "a dispatch batch", seconds: 5) }
        return try codec.decodeDispatch(frames)
    }
}
