import ChimeCluster
import ChimeCore
import ChimeRuntime
import ChimeStore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// Issue 25, item 2: a stopped (SIGSTOP) primary loses the store within the lease, with no
/// supervisor anywhere; the standby takes over by itself, and the old primary never writes,
/// sends or answers again.
@Suite(.serialized) struct FailoverTests {
    /// The takeover bound the README states: the lease (1.5 s) plus half a second for the
    /// standby's poll, the kill, the warm replay and the binds.
    static let takeoverBound = 2.0

    @Test func aStandbyTakesOverFromAStoppedPrimaryWithoutAnySupervisor() throws {
        try withLocalCluster(workers: 2, configuration: Durability.fastFailover, coordinatorArguments: ["--store", "store"]) { cluster in
            try cluster.startStandby(store: cluster.directory.path("store"))
            try expectEventually(timeout: 20, "the standby to wait warm") {
                cluster.log(of: "standby").contains("standby: warm state loaded")
            }
            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(1), retries: 5)
            let collector = EventCollector(endpoint: cluster.eventsEndpoint)
            defer { collector.close() }
            try ClusterDeliveryTests.waitUntilSubscribed(collector, client: client, recipient: "probe")
            let epochBefore = try Durability.storeReport(cluster).epoch
            let oldPid = try #require(cluster.pid(of: "coordinator"))

            // Firings due before, during and after the pause.
            let start = Date().addingTimeInterval(1)
            let reminders = try (0..<40).map { try Durability.plainReminder(id: "pause-\($0)", due: start + Double($0) * 0.1) }
            _ = try client.send(ControlRequest(command: .schedule(reminders)), expecting: ScheduleResult.self)
            Thread.sleep(until: start.addingTimeInterval(1))
            let pausedAt = Date()
            cluster.send(SIGSTOP, to: "coordinator")
            // Not `waitForCoordinator`: the killed primary is an exited child by then.
            let pinger = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .milliseconds(100), retries: 0)
            try expectEventually(timeout: 10, interval: 0.005, "the standby to answer") {
                (try? pinger.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil
            }
            let takeover = Date().timeIntervalSince(pausedAt)
            print(String(format: "takeover from a SIGSTOPped primary, no supervisor: %.0f ms", takeover * 1000))
            #expect(takeover < Self.takeoverBound, "the standby serves within the stated bound")

            // The standby killed it: it can never run again, SIGCONT or not.
            try expectEventually(timeout: 5, "the stopped primary to be gone") { cluster.process(of: "coordinator") == nil }
            let exit = cluster.reap("coordinator")
            #expect(exit == ChildSupervisor.Exit(status: SIGKILL, isSignal: true), "\(String(describing: exit))")
            #expect(cluster.log(of: "standby").contains("lease expired; killed it (same host)"))

            let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self)
            #expect(status.result?.pid == cluster.pid(of: "standby"))
            #expect(status.result?.pid != oldPid)
            #expect(try Durability.storeReport(cluster).epoch == epochBefore + 1)
            let expected = Set(reminders.flatMap { Durability.dueFiringIDs(of: $0, through: .distantFuture) })
            let catchUp = CatchUpLog()
            try expectEventually(timeout: 20, interval: 0.1, "every firing to arrive") {
                catchUp.fetch(with: client)
                return expected.isSubset(of: Set((collector.received + catchUp.events).map(\.firing.firingId)))
            }
            let events = (collector.received + catchUp.events).filter { $0.firing.reminderId.rawValue.hasPrefix("pause-") }
            Durability.expectDuplicatesShareTheirFiringID(events, "takeover from a stopped primary")
        }
    }

    /// Whether this machine lets an unprivileged test make a pid namespace (`unshare -rpf`):
    /// the stand-in for a standby on another host, which cannot signal the primary.
    static let canMakePidNamespaces: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
            let result = try? LocalCluster.run(
                binary: URL(fileURLWithPath: "/usr/bin/unshare"), ["-r", "-p", "-f", "--mount-proc", "true"], timeout: 10)
        else { return false }
        return result.status == 0
    }()

    @Test(.enabled(if: canMakePidNamespaces))
    func aStoppedPrimaryTheStandbyCannotKillIsFencedAndNeverAnswersOrWritesAfterSIGCONT() throws {
        try withLocalCluster(workers: 0, configuration: Durability.fastFailover, coordinatorArguments: ["--store", "store"]) { cluster in
            let store = cluster.directory.path("store")
            // In a pid namespace of its own the standby cannot see the primary, as from another
            // host; the paused primary keeps its ports, so the standby serves on others.
            let otherBase = try LocalCluster.freePortBase()
            try cluster.spawn(
                "remote-standby",
                ["coordinator", "--standby", "--store", store, "--config", cluster.directory.path("chime.json"), "--port-base", String(otherBase)],
                wrapper: ["/usr/bin/unshare", "-r", "-p", "-f", "--kill-child", "--mount-proc"])
            try expectEventually(timeout: 20, "the standby to wait warm") {
                cluster.log(of: "remote-standby").contains("standby: warm state loaded")
            }
            let before = try Durability.plainReminder(id: "before-pause", due: Date().addingTimeInterval(3600))
            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(1), retries: 3)
            _ = try client.send(ControlRequest(command: .schedule([before])), expecting: ScheduleResult.self)

            let pausedAt = Date()
            cluster.send(SIGSTOP, to: "coordinator")
            let successor = try ControlClient(endpoint: "tcp://127.0.0.1:\(otherBase)", timeout: .milliseconds(200), retries: 0)
            try expectEventually(timeout: 10, interval: 0.02, "the standby to serve") {
                (try? successor.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil
            }
            let takeover = Date().timeIntervalSince(pausedAt)
            print(String(format: "takeover by LOCK replacement from a primary the standby cannot kill: %.0f ms", takeover * 1000))
            #expect(takeover < Self.takeoverBound)
            #expect(cluster.log(of: "remote-standby").contains("replacing LOCK to take over"))
            let journalBefore = try StoreFiles.contents(of: "\(store)/journal")

            // A request waits in the paused primary's socket; resumed, it must neither answer
            // nor journal it, nor write anything else.
            let after = try Durability.plainReminder(id: "sent-to-the-paused-primary", due: Date().addingTimeInterval(3600))
            let endpoint = cluster.controlEndpoint
            let outcome = RequestLedger()
            let sender = Thread {
                guard let old = try? ControlClient(endpoint: endpoint, timeout: .seconds(3), retries: 0) else { return }
                outcome.schedule([after], round: 0, with: old)
            }
            sender.start()
            Thread.sleep(forTimeInterval: 0.3)
            cluster.send(SIGCONT, to: "coordinator")
            try expectEventually(timeout: 10, "the resumed primary to stop") { cluster.process(of: "coordinator") == nil }
            let exit = cluster.reap("coordinator")
            try expectEventually(timeout: 10, "the request to time out") { !outcome.all.isEmpty }

            #expect(exit == ChildSupervisor.Exit(status: 1, isSignal: false), "it stops with lock_lost: \(String(describing: exit))")
            #expect(cluster.log(of: "coordinator").contains("lease lapsed"))
            #expect(outcome.all.first?.outcome == .noReply, "no reply after the pause")
            let listed = try successor.send(
                ControlRequest(command: .list(ReminderFilter(ids: [after.id, before.id]), all: true, limit: nil)), expecting: ListResult.self)
            #expect(listed.result?.reminders.map(\.reminder.id) == [before.id], "the acknowledged one is there, the late one never reached the store")
            #expect(try StoreFiles.contents(of: "\(store)/journal") == journalBefore, "the resumed primary wrote nothing to the journal")
            cluster.crash("remote-standby")
        }
    }
}
