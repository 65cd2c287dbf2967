import ChimeClient
import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// Issue 25, item 3: `chime up` supervises. kill -9 and SIGSTOP of its coordinator and of a
/// worker: the cluster serves again within a stated time and delivers every firing.
@Suite(.serialized) struct UpSupervisionTests {
    /// `chime up` with `arguments`, on a fresh cluster folder (its children are its own; the
    /// test signals them by the pids the cluster reports).
    static func startUp(_ cluster: LocalCluster, _ arguments: [String]) throws {
        try Data(Durability.fastFailover.utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
        try cluster.spawn("up", ["up", "--no-samples", "--verbose"] + arguments + cluster.clusterArguments)
        try expectEventually(timeout: 30, "chime up to report its cluster") {
            guard cluster.pid(of: "up") != nil else { throw DeadlineExceeded(what: "chime up exited:\n\(cluster.log(of: "up"))", seconds: 0) }
            return cluster.log(of: "up").contains("Ctrl-C to stop")
        }
    }

    static func coordinatorPid(_ client: ControlClient) -> Int32? {
        (try? client.send(ControlRequest(command: .status), expecting: StatusReport.self))?.result?.pid
    }

    static func workerPid(_ id: String, _ client: ControlClient) -> Int32? {
        let reply = try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self)
        return reply?.result?.workers.first { $0.id.rawValue == id && $0.alive }?.pid
    }

    /// Schedules ten reminders due over the next 2 s and returns their firing ids.
    static func scheduleBurst(_ name: String, client: ControlClient) throws -> Set<FiringID> {
        let due = Date().addingTimeInterval(0.5)
        let reminders = try (0..<10).map { try Durability.plainReminder(id: "\(name)-\($0)", due: due.addingTimeInterval(Double($0) * 0.15)) }
        _ = try client.send(ControlRequest(command: .schedule(reminders)), expecting: ScheduleResult.self)
        return Set(reminders.flatMap { Durability.dueFiringIDs(of: $0, through: .distantFuture) })
    }

    @Test func upWithAStandbyRecoversFromKillAndStopOfItsCoordinatorAndWorkers() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        do {
            try Self.startUp(cluster, ["--workers", "2", "--store", "store", "--standby"])
            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(1), retries: 8)
            let pinger = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .milliseconds(100), retries: 0)
            let collector = EventCollector(endpoint: cluster.eventsEndpoint)
            defer { collector.close() }
            try ClusterDeliveryTests.waitUntilSubscribed(collector, client: client, recipient: "probe")
            var expected = Set<FiringID>()
            var figures: [String] = []

            for (index, fault) in ["kill -9", "SIGSTOP"].enumerated() {
                expected.formUnion(try Self.scheduleBurst("coordinator-fault-\(index)", client: client))
                let old = try #require(Self.coordinatorPid(client))
                let faultAt = Date()
                kill(old, fault == "kill -9" ? SIGKILL : SIGSTOP)
                try expectEventually(timeout: 10, interval: 0.005, "another coordinator to answer after \(fault)") {
                    Self.coordinatorPid(pinger).map { $0 != old } ?? false
                }
                figures.append(String(format: "coordinator %@: serving again after %.0f ms", fault, Date().timeIntervalSince(faultAt) * 1000))
                // chime up restarts the dead one, which waits as the new standby.
                try expectEventually(timeout: 15, "chime up to restart the coordinator after \(fault)") {
                    cluster.log(of: "up").components(separatedBy: "chime up: restarted").count - 1 >= figures.count
                }
            }
            for (worker, fault) in [("worker-1", "kill -9"), ("worker-2", "SIGSTOP")] {
                expected.formUnion(try Self.scheduleBurst("\(worker)-fault", client: client))
                let old = try #require(Self.workerPid(worker, client))
                let faultAt = Date()
                kill(old, fault == "kill -9" ? SIGKILL : SIGSTOP)
                try expectEventually(timeout: 20, interval: 0.05, "\(worker) to be replaced after \(fault)") {
                    Self.workerPid(worker, pinger).map { $0 != old } ?? false
                }
                figures.append(String(format: "%@ %@: a new one alive after %.0f ms", worker, fault, Date().timeIntervalSince(faultAt) * 1000))
            }
            let catchUp = CatchUpLog()
            try expectEventually(timeout: 30, interval: 0.1, "every firing to be delivered") {
                catchUp.fetch(with: client)
                return expected.isSubset(of: Set((collector.received + catchUp.events).map(\.firing.firingId)))
            }
            print("chime up --standby: " + figures.joined(separator: "; ") + "; \(expected.count) firings, lost 0")
            #expect(cluster.log(of: "up").contains("is running but not alive for shard(s) 0; killing it"))
            let exit = cluster.stop("up")
            #expect(exit == ChildSupervisor.Exit(status: 0, isSignal: false), "\(String(describing: exit))")
        } catch {
            cluster.stop()
            print("chime up supervision failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }

    @Test func upWithoutAStandbyKillsAndRestartsAStoppedCoordinator() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        do {
            try Self.startUp(cluster, ["--workers", "1", "--store", "store"])
            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(2), retries: 8)
            let pinger = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .milliseconds(100), retries: 0)
            let collector = EventCollector(endpoint: cluster.eventsEndpoint)
            defer { collector.close() }
            try ClusterDeliveryTests.waitUntilSubscribed(collector, client: client, recipient: "probe")
            let expected = try Self.scheduleBurst("solo", client: client)
            let old = try #require(Self.coordinatorPid(client))
            let stoppedAt = Date()
            kill(old, SIGSTOP)
            try expectEventually(timeout: 20, interval: 0.01, "a restarted coordinator to answer") {
                Self.coordinatorPid(pinger).map { $0 != old } ?? false
            }
            let seconds = Date().timeIntervalSince(stoppedAt)
            print(String(format: "chime up without a standby: SIGSTOPped coordinator killed and restarted, serving after %.0f ms", seconds * 1000))
            // 3 s without an answer, then the restart's pause (0.2 s) and a recovery.
            #expect(seconds < 6)
            #expect(kill(old, 0) == -1, "the stopped coordinator is gone")
            let catchUp = CatchUpLog()
            try expectEventually(timeout: 30, interval: 0.1, "every firing to be delivered") {
                catchUp.fetch(with: client)
                return expected.isSubset(of: Set((collector.received + catchUp.events).map(\.firing.firingId)))
            }
        } catch {
            cluster.stop()
            print("chime up supervision failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }
}
