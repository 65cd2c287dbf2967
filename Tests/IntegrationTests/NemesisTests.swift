import ChimeCluster
import ChimeCore
import ChimeStore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// Issue 13 over real processes: a seeded nemesis of `kill -9` (active coordinator under a
/// warm standby, workers) and SIGSTOP of the active coordinator, which a test watchdog
/// supervisor (`WatchdogSupervisor` on the child's `NOTIFY_SOCKET`) kills when its pings
/// stop; a coordinator paused while its store was taken stops without answering.
///
/// The CI form runs 6 rounds; `CHIME_NEMESIS_ROUNDS=N` runs more, `CHIME_NEMESIS_SEED=S`
/// repeats a run.
@Suite(.serialized) struct NemesisTests {
    enum Fault: String, CaseIterable {
        case killActive = "kill -9 active coordinator"
        case pauseActive = "SIGSTOP active coordinator (watchdog kill)"
        case killWorker = "kill -9 worker"
    }

    @Test func survivesSeededRoundsOfKillsAndPausesWithAWatchdogSupervisor() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["CHIME_NEMESIS_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        let rounds = environment["CHIME_NEMESIS_ROUNDS"].flatMap { Int($0) } ?? 6
        print("nemesis: seed \(seed), \(rounds) rounds (repeat with CHIME_NEMESIS_SEED=\(seed))")
        var random = SeededRandomNumberGenerator(seed: seed)
        let started = Date()

        let cluster = try LocalCluster()
        defer { cluster.stop() }
        let supervisors = [
            "coordinator": try WatchdogSupervisor(socketPath: cluster.directory.path("notify-a"), timeout: .milliseconds(1500)),
            "standby": try WatchdogSupervisor(socketPath: cluster.directory.path("notify-b"), timeout: .milliseconds(1500)),
        ]
        defer { for supervisor in supervisors.values { supervisor.close() } }
        for (name, supervisor) in supervisors { cluster.environmentByName[name] = supervisor.environment }
        let store = cluster.directory.path("store")
        let standbyArguments = ["coordinator", "--standby", "--store", store] + cluster.clusterArguments
        do {
            try cluster.start(workers: 2, configuration: Durability.fastFailover, coordinatorArguments: ["--store", store])
            supervisors["coordinator"]?.watch(pid: try #require(cluster.pid(of: "coordinator")))
            try cluster.spawn("standby", standbyArguments)
            supervisors["standby"]?.watch(pid: try #require(cluster.pid(of: "standby")))
            try expectEventually(timeout: 20, "the standby to load its warm state") {
                cluster.log(of: "standby").contains("standby: warm state loaded")
            }

            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(1), retries: 8)
            let collector = EventCollector(endpoint: cluster.eventsEndpoint)
            defer { collector.close() }
            try ClusterDeliveryTests.waitUntilSubscribed(collector, client: client, recipient: "probe")
            let ledger = RequestLedger()
            var faults: [Fault: Int] = [:]
            var takeovers: [Fault: [Double]] = [:]

            func activeName() throws -> String {
                let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self)
                let pid = try #require(status.result?.pid)
                return try #require(["coordinator", "standby"].first { cluster.pid(of: $0) == pid }, "pid \(pid) is one of ours")
            }
            /// Replaces a dead coordinator with a new standby and waits until it is warm.
            func restartAsStandby(_ name: String) throws {
                let warmLoads = cluster.log(of: name).components(separatedBy: "standby: warm state loaded").count
                try cluster.spawn(name, standbyArguments)
                supervisors[name]?.watch(pid: try #require(cluster.pid(of: name)))
                try expectEventually(timeout: 20, "\(name) to wait warm as the standby") {
                    cluster.log(of: name).components(separatedBy: "standby: warm state loaded").count > warmLoads
                }
            }

            for round in 1...rounds {
                let due = Date().addingTimeInterval(0.8)
                let reminders = try (0..<20).map {
                    try Durability.plainReminder(id: "n\(round)-\($0)", due: due.addingTimeInterval(Double($0) * 0.05))
                }
                ledger.schedule(reminders, round: round, with: client)
                // The fault lands at a seeded moment: before, during or after these firings.
                Thread.sleep(forTimeInterval: Double(random.next() % 1500) / 1000)
                let fault = Fault.allCases[Int(random.next() % UInt64(Fault.allCases.count))]
                faults[fault, default: 0] += 1
                switch fault {
                case .killActive, .pauseActive:
                    let active = try activeName()
                    let faultAt = Date()
                    if fault == .killActive {
                        cluster.crash(active)
                    } else {
                        let killsBefore = supervisors[active]?.kills.count ?? 0
                        cluster.send(SIGSTOP, to: active)
                        try expectEventually(timeout: 10, "the supervisor to kill the paused \(active)") {
                            (supervisors[active]?.kills.count ?? 0) > killsBefore
                        }
                        // Reaps the killed child (SIGKILL again is harmless).
                        cluster.crash(active)
                    }
                    try cluster.waitForCoordinator(timeout: 15)
                    takeovers[fault, default: []].append(Date().timeIntervalSince(faultAt))
                    try restartAsStandby(active)
                case .killWorker:
                    let worker = "worker-\(1 + Int(random.next() % 2))"
                    cluster.crash(worker)
                    try cluster.restart(worker)
                }
                print("nemesis round \(round): \(fault.rawValue)")
            }

            let acknowledged = ledger.all.filter { $0.outcome == .acknowledged }.flatMap(\.reminders)
            let expected = Set(acknowledged.flatMap { Durability.dueFiringIDs(of: $0, through: .distantFuture) })
            let catchUp = CatchUpLog()
            try expectEventually(timeout: 30, interval: 0.1, "every acknowledged firing to be delivered") {
                catchUp.fetch(with: client)
                return expected.isSubset(of: Set((collector.received + catchUp.events).map(\.firing.firingId)))
            }
            let listing = try Durability.listAll(cluster)
            let missing = acknowledged.filter { listing[$0.id]?.reminder != $0 }
            #expect(missing.isEmpty, "every acknowledged reminder is stored with its fields: \(missing.map(\.id))")
            // One delivery attempt per seq, whether the live stream or the catch-up saw it.
            var bySeq: [UInt64: FireEvent] = [:]
            for event in collector.received + catchUp.events { bySeq[event.seq] = event }
            let events = bySeq.values.filter { $0.firing.reminderId.rawValue.hasPrefix("n") }
            let duplicates = Durability.expectDuplicatesShareTheirFiringID(events, "nemesis")
            let lost = expected.subtracting(events.map(\.firing.firingId))
            #expect(lost.isEmpty)
            let unanswered = ledger.all.filter { $0.outcome != .acknowledged }.count
            let summary = Fault.allCases.map { "\($0.rawValue): \(faults[$0] ?? 0)" }.joined(separator: ", ")
            let watchdogKills = supervisors.values.map(\.kills.count).reduce(0, +)
            func figures(_ fault: Fault) -> String {
                let times = (takeovers[fault] ?? []).sorted()
                guard let median = times.dropFirst(times.count / 2).first, let maximum = times.last else { return "none" }
                return String(format: "median %.0f ms, max %.0f ms", median * 1000, maximum * 1000)
            }
            print(String(
                format: "nemesis: %d rounds in %.1f s (%@); %d watchdog kills; %d reminders acknowledged, %d requests unanswered; %d firings due, lost %d, %d duplicate deliveries (same firing id); serving again after kill -9: %@; after SIGSTOP (watchdog 1.5 s): %@",
                rounds, Date().timeIntervalSince(started), summary, watchdogKills, acknowledged.count, unanswered, expected.count,
                lost.count, duplicates, figures(.killActive), figures(.pauseActive)))
            #expect(watchdogKills == faults[.pauseActive] ?? 0, "the supervisor killed exactly the paused coordinators")
        } catch {
            cluster.stop()
            print("nemesis failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }

    @Test func aPausedCoordinatorWhoseStoreWasTakenOverStopsWithoutAnswering() throws {
        try withLocalCluster(workers: 0, coordinatorArguments: ["--store", "store"]) { cluster in
            let store = cluster.directory.path("store")
            let oldPid = try #require(cluster.pid(of: "coordinator"))
            cluster.send(SIGSTOP, to: "coordinator")
            let pausedAt = Date()
            // The paused one still holds the old endpoints, so the new one serves on others
            // (another host, in the field); the store is what they contend for.
            try FileManager.default.removeItem(atPath: "\(store)/LOCK")
            let otherBase = try LocalCluster.freePortBase()
            try cluster.spawn("successor", [
                "coordinator", "--standby", "--store", store, "--config", cluster.directory.path("chime.json"),
                "--port-base", String(otherBase),
            ])
            let successor = try ControlClient(endpoint: "tcp://127.0.0.1:\(otherBase)", timeout: .milliseconds(300), retries: 0)
            try expectEventually(timeout: 15, interval: 0.05, "the successor to serve") {
                (try? successor.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil
            }

            // A request waits in the paused coordinator's socket; once resumed it must neither
            // answer nor journal it.
            let reminder = try Durability.plainReminder(id: "after-stall", due: Date().addingTimeInterval(3600))
            let endpoint = cluster.controlEndpoint
            let outcome = RequestLedger()
            let sender = Thread {
                // On this thread: a client's socket lives on the thread that made it.
                guard let old = try? ControlClient(endpoint: endpoint, timeout: .seconds(3), retries: 0) else { return }
                outcome.schedule([reminder], round: 0, with: old)
            }
            sender.start()
            // The fault itself: a pause well past the stall threshold (1 s).
            Thread.sleep(until: max(Date().addingTimeInterval(0.2), pausedAt.addingTimeInterval(2.5)))
            cluster.send(SIGCONT, to: "coordinator")
            try expectEventually(timeout: 10, "the resumed coordinator to stop") { cluster.pid(of: "coordinator") == nil }
            let status = cluster.stop("coordinator")?.status
            try expectEventually(timeout: 10, "the request to time out") { !outcome.all.isEmpty }

            #expect(status == 1, "it exits 1 (lock_lost)")
            let log = cluster.log(of: "coordinator")
            #expect(log.contains("the loop stalled; checking that the store is still ours"))
            #expect(log.contains("lock_lost"))
            #expect(outcome.all.first?.outcome == .noReply, "no reply after the stall")
            let listed = try successor.send(
                ControlRequest(command: .list(ReminderFilter(ids: [reminder.id]), all: true, limit: nil)), expecting: ListResult.self)
            #expect(listed.result?.reminders.isEmpty == true, "the request never reached the store")
            print("stall fencing: pid \(oldPid) resumed after its store was taken over and stopped without answering")
        }
    }
}
