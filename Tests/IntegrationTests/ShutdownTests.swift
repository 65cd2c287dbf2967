import ChimeRuntime
import ChimeTestSupport
import Foundation
import Testing

/// SIGTERM stops long-running commands promptly with status 0, whether or not a
/// coordinator is (or ever was) reachable, and one signal is enough.
@Suite(.serialized) struct ShutdownTests {
    /// How long a stop may take on a loaded CI machine, in seconds (about 1 s when idle:
    /// the sockets linger at most 1 s).
    static let stopBound = 3.0

    @Test func workerThatNeverSawACoordinatorStopsOnOneSigterm() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        try Data("{}".utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
        let worker = try cluster.spawn("worker", ["worker", "--id", "lonely"] + cluster.clusterArguments)
        try expectEventually(timeout: 20, "the worker to be ready") { cluster.log(of: "worker").contains("worker ready") }
        let (status, seconds) = try Self.terminate(worker, cluster: cluster)
        #expect(status == 0)
        #expect(seconds <= Self.stopBound)
        #expect(cluster.log(of: "worker").contains("worker stopping"))
    }

    @Test func workerWhoseCoordinatorWasKilledStopsOnOneSigterm() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        try cluster.start(workers: 1)
        cluster.crash("coordinator")
        let worker = try #require(cluster.process(of: "worker-1"))
        let (status, seconds) = try Self.terminate(worker, cluster: cluster)
        #expect(status == 0)
        #expect(seconds <= Self.stopBound)
    }

    @Test func subscriberThatNeverSawACoordinatorStopsOnOneSigterm() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        try Data("{}".utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
        let subscriber = try cluster.spawn("subscribe", ["subscribe"] + cluster.clusterArguments)
        let (status, seconds) = try Self.terminate(subscriber, cluster: cluster)
        #expect(status == 0)
        #expect(seconds <= Self.stopBound)
    }

    @Test func subscriberWhoseCoordinatorWasKilledStopsOnOneSigterm() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        try cluster.start(workers: 0)
        let subscriber = try cluster.spawn("subscribe", ["subscribe"] + cluster.clusterArguments)
        try Self.waitForTerminationHandler(subscriber)
        cluster.crash("coordinator")
        let (status, seconds) = try Self.terminate(subscriber, cluster: cluster)
        #expect(status == 0)
        #expect(seconds <= Self.stopBound)
    }

    /// A worker whose starter dies without stopping it (SIGKILL: a crashed test binary, a
    /// killed `chime up`) stops by itself, cleanly (`ParentWatch`): a shell starts the
    /// worker in the background naming itself as the starter, then is killed.
    @Test func aWorkerWhoseStarterIsKilledStopsByItself() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        try Data("{}".utf8).write(to: URL(fileURLWithPath: cluster.directory.path("chime.json")))
        let pidFile = cluster.directory.path("worker.pid")
        let log = cluster.directory.path("orphan.log")
        let worker = ([cluster.binary.path, "worker", "--id", "orphan"] + cluster.clusterArguments).map { "'\($0)'" }
        let script = "CHIME_PARENT_PID=$$ \(worker.joined(separator: " ")) >'\(log)' 2>&1 & echo $! >'\(pidFile)'; exec sleep 60"
        let shell = ChildSupervisor(
            name: "starter", launch: .init(executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script], output: .discard))
        let shellPID = try shell.start().processIdentifier
        defer { shell.stop(grace: 1) }
        var workerPID: Int32 = 0
        try expectEventually(timeout: 20, "the worker to be ready") {
            workerPID = Int32((try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            return workerPID > 0 && ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("worker ready")
        }
        // libcurl is loaded at the first HTTP request (a map register's), not at start.
        // (Read to its end: /proc files report size 0, and `String(contentsOfFile:)` reads one page.)
        let maps = String(decoding: FileHandle(forReadingAtPath: "/proc/\(workerPID)/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        #expect(maps.contains("libzmq") && !maps.contains("libcurl"))
        kill(shellPID, SIGKILL)
        try expectEventually(timeout: 10, "the orphaned worker to stop") {
            let stat = (try? String(contentsOfFile: "/proc/\(workerPID)/stat", encoding: .utf8)) ?? ""
            return stat.isEmpty || stat.contains(") Z ")
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("(pid \(shellPID)) is gone; stopping"))
        #expect(text.contains("worker stopping"))
        #expect(!text.contains("SIGKILL"))
    }

    /// Waits until `process` handles SIGTERM, sends it one SIGTERM by pid and waits for the
    /// exit (at most 20 s). Returns the exit status and the seconds from signal to exit.
    static func terminate(_ process: Process, cluster: LocalCluster) throws -> (status: Int32, seconds: Double) {
        try waitForTerminationHandler(process)
        let sent = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        do {
            try expectEventually(timeout: 20, interval: 0.01, "pid \(process.processIdentifier) to exit after SIGTERM") {
                !process.isRunning
            }
        } catch {
            print(cluster.logs())
            throw error
        }
        let elapsed = ContinuousClock.now - sent
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if process.terminationStatus != 0 || seconds > stopBound { print(cluster.logs()) }
        return (process.terminationStatus, seconds)
    }

    /// Waits (at most 20 s) until `process` catches SIGTERM (bit 15 of `SigCgt` in
    /// /proc/PID/status), so the signal tests the command's shutdown, not its start-up.
    static func waitForTerminationHandler(_ process: Process) throws {
        try expectEventually(timeout: 20, "pid \(process.processIdentifier) to catch SIGTERM") {
            guard process.isRunning,
                let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
                let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            else { return false }
            return mask & (1 << (UInt64(SIGTERM) - 1)) != 0
        }
    }
}
