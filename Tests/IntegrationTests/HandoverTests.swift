import ChimeClient
import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// Issue 25, item 1: SIGTERM hand-overs under load to a same-host warm standby. Each one must
/// end with a coordinator serving every listener it was configured with (control, dispatch,
/// results, events, HTTP: `/readyz` answers 200), and lose no acknowledged reminder.
///
/// The CI form runs 4 hand-overs; `CHIME_HANDOVER_ROUNDS=100` runs the long form.
@Suite(.serialized) struct HandoverTests {
    @Test func sigtermHandOversUnderLoadAlwaysLeaveACoordinatorServingEveryListener() throws {
        let rounds = ProcessInfo.processInfo.environment["CHIME_HANDOVER_ROUNDS"].flatMap { Int($0) } ?? 4
        let started = Date()
        try withLocalCluster(workers: 2, configuration: Durability.fastFailover, coordinatorArguments: ["--store", "store", "--standby"]) { cluster in
            let store = cluster.directory.path("store")
            let standbyArguments = ["coordinator", "--standby", "--store", store] + cluster.clusterArguments
            try cluster.spawn("standby", standbyArguments)
            try expectEventually(timeout: 20, "the standby to wait warm") { cluster.log(of: "standby").contains("standby: warm state loaded") }
            let httpPort = cluster.portBase + 5
            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(1), retries: 8)
            let collector = EventCollector(endpoint: cluster.eventsEndpoint)
            defer { collector.close() }
            try ClusterDeliveryTests.waitUntilSubscribed(collector, client: client, recipient: "probe")

            // Load: schedules of five reminders, due within two seconds, back to back.
            let ledger = RequestLedger()
            let stopLoad = StopFlag()
            let loadDone = DispatchSemaphore(value: 0)
            let endpoint = cluster.controlEndpoint
            let load = Thread {
                defer { loadDone.signal() }
                guard let loader = try? ControlClient(endpoint: endpoint, timeout: .seconds(1), retries: 8) else { return }
                var batch = 0
                while !stopLoad.isRaised {
                    batch += 1
                    let due = Date().addingTimeInterval(0.5)
                    let reminders = (0..<5).compactMap {
                        try? Durability.plainReminder(id: "h\(batch)-\($0)", due: due.addingTimeInterval(Double($0) * 0.3))
                    }
                    ledger.schedule(reminders, round: batch, with: loader)
                    Thread.sleep(forTimeInterval: 0.02)
                }
            }
            load.start()

            var takeovers: [Double] = []
            var httpOff = 0
            var names = (active: "coordinator", standby: "standby")
            for round in 1...rounds {
                let activePid = try #require(cluster.pid(of: names.active))
                let readyLines = cluster.log(of: names.standby).components(separatedBy: "coordinator ready").count
                let pinger = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .milliseconds(100), retries: 0)
                let terminatedAt = Date()
                cluster.terminate(names.active)
                try expectEventually(timeout: 15, interval: 0.002, "round \(round): a coordinator other than pid \(activePid) to answer") {
                    guard let status = try? pinger.send(ControlRequest(command: .status), expecting: StatusReport.self) else { return false }
                    return status.result?.pid != activePid
                }
                takeovers.append(Date().timeIntervalSince(terminatedAt))
                // Every listener: HTTP ready, and the start-up line names it.
                try expectEventually(timeout: 5, "round \(round): /readyz to answer 200") {
                    LoopbackHTTP.get(port: httpPort, path: "/readyz")?.status == 200
                }
                try expectEventually(timeout: 5, "round \(round): the ready line") {
                    cluster.log(of: names.standby).components(separatedBy: "coordinator ready").count > readyLines
                }
                let ready = try #require(StoreFiles.lastLine(containing: "coordinator ready", in: cluster.log(of: names.standby)))
                if ready.fields["http"] == "off" { httpOff += 1 }
                #expect(ready.fields["http"] == "127.0.0.1:\(httpPort)", "round \(round): \(ready.line)")

                try expectEventually(timeout: 10, "round \(round): the old coordinator to exit") { cluster.process(of: names.active) == nil }
                let exit = try #require(cluster.reap(names.active))
                #expect(exit == ChildSupervisor.Exit(status: 0, isSignal: false), "round \(round): the old coordinator exits 0: \(exit)")
                let warmLoads = cluster.log(of: names.active).components(separatedBy: "standby: warm state loaded").count
                try cluster.spawn(names.active, standbyArguments)
                try expectEventually(timeout: 20, "round \(round): \(names.active) to wait warm") {
                    cluster.log(of: names.active).components(separatedBy: "standby: warm state loaded").count > warmLoads
                }
                names = (names.standby, names.active)
            }
            stopLoad.raise()
            loadDone.wait()

            let acknowledged = ledger.all.filter { $0.outcome == .acknowledged }.flatMap(\.reminders)
            let listing = try Durability.listAll(cluster)
            let missing = acknowledged.filter { listing[$0.id]?.reminder != $0 }
            #expect(missing.isEmpty, "every acknowledged reminder is stored: \(missing.map(\.id).prefix(10))")
            let expected = Set(acknowledged.flatMap { Durability.dueFiringIDs(of: $0, through: .distantFuture) })
            let catchUp = CatchUpLog()
            try expectEventually(timeout: 30, interval: 0.1, "every acknowledged firing to be delivered") {
                catchUp.fetch(with: client)
                return expected.isSubset(of: Set((collector.received + catchUp.events).map(\.firing.firingId)))
            }
            // One delivery attempt per seq, whether the live stream or the catch-up saw it.
            var bySeq: [UInt64: FireEvent] = [:]
            for event in collector.received + catchUp.events { bySeq[event.seq] = event }
            let events = bySeq.values.filter { $0.firing.reminderId.rawValue.hasPrefix("h") }
            let duplicates = Durability.expectDuplicatesShareTheirFiringID(events, "hand-overs")
            #expect(httpOff == 0)
            let sorted = takeovers.sorted()
            print(String(
                format: "hand-overs: %d SIGTERM rounds under load in %.1f s; takeover (SIGTERM to the successor answering) median %.0f ms, max %.0f ms; http=off %d; %d reminders acknowledged, %d unanswered, lost %d; %d firings, %d duplicate deliveries (same firing id)",
                rounds, Date().timeIntervalSince(started), sorted[sorted.count / 2] * 1000, (sorted.last ?? 0) * 1000, httpOff,
                acknowledged.count, ledger.all.count - ledger.all.filter { $0.outcome == .acknowledged }.count, missing.count,
                expected.count, duplicates))
        }
    }
}
