import ChimeClient
import ChimeCore
import ChimeRuntime
import ChimeTestSupport
import ChimeWire
import Foundation
import Synchronization
import Testing

/// The faults of the nemesis (issue 25): each leaves the cluster to recover by itself.
enum NemesisFault: String, CaseIterable, Sendable {
    case killActive = "kill -9 active coordinator"
    case pauseActive = "SIGSTOP active coordinator"
    case handOver = "SIGTERM hand-over"
    case truncateTail = "journal tail cut under the active coordinator"
    case diskFull = "disk full"
    case clockStep = "wall clock step"
    case killWorker = "kill -9 worker"

    /// Whether the fault takes the active coordinator away (a standby must take over).
    var replacesTheCoordinator: Bool { [.killActive, .pauseActive, .handOver, .truncateTail].contains(self) }
}

/// Pings the control endpoint every 10 ms on a thread of its own and keeps the longest
/// stretch between two answers: the longest time without a serving coordinator.
final class ServingMonitor: Sendable {
    private let longest = Mutex<(seconds: Double, at: Date?)>((0, nil))
    private let stopFlag = StopFlag()
    private let finished = DispatchSemaphore(value: 0)

    init(endpoint: String) {
        let thread = Thread { [self] in
            defer { finished.signal() }
            guard let client = try? ControlClient(endpoint: endpoint, timeout: .milliseconds(100), retries: 0) else { return }
            var lastAnswer = Date()
            while !stopFlag.isRaised {
                if (try? client.send(ControlRequest(command: .ping), expecting: PongResult.self)) != nil {
                    let gap = Date().timeIntervalSince(lastAnswer)
                    longest.withLock { if gap > $0.seconds { $0 = (gap, lastAnswer) } }
                    lastAnswer = Date()
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        thread.start()
    }

    /// Stops pinging.
    /// - Returns: the longest stretch without an answer, in seconds, and when it began.
    func stop() -> (seconds: Double, at: Date?) {
        stopFlag.raise()
        finished.wait()
        return longest.withLock { $0 }
    }
}

/// A cluster with a warm standby that a nemesis works on: which coordinator is active, how
/// to apply each fault, and how long each recovery took.
final class NemesisRig {
    let cluster: LocalCluster
    let store: String
    let tmpfs: Tmpfs?
    let offsetFile: String?
    let client: ControlClient
    var takeovers: [NemesisFault: [Double]] = [:]
    var standbyArguments: [String] { ["coordinator", "--standby", "--store", store] + cluster.clusterArguments }

    /// - Parameters:
    ///   - tmpfs: where the store lives when the disk-full fault is on.
    ///   - shim: the clock-shifting `LD_PRELOAD` library (`ClockStepTests`), when the clock-step fault is on.
    init(cluster: LocalCluster, tmpfs: Tmpfs?, shim: String?) throws {
        self.cluster = cluster
        self.tmpfs = tmpfs
        store = (tmpfs?.path ?? cluster.directory.url.path) + "/store"
        if let shim {
            let offsetFile = cluster.directory.path("clock-offset")
            try Data("0".utf8).write(to: URL(fileURLWithPath: offsetFile))
            for name in ["coordinator", "standby"] {
                cluster.environmentByName[name] = ["LD_PRELOAD": shim, "CHIME_TEST_CLOCK_OFFSET_FILE": offsetFile]
            }
            self.offsetFile = offsetFile
        } else {
            offsetFile = nil
        }
        try cluster.start(workers: 2, configuration: Durability.fastFailover, coordinatorArguments: ["--standby", "--store", store])
        client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(1), retries: 8)
        try cluster.spawn("standby", standbyArguments)
        try waitWarm("standby", loadsBefore: 0)
    }

    /// The faults this machine can apply: the disk-full one needs a tmpfs (root), the clock
    /// step one the shim (gcc).
    var availableFaults: [NemesisFault] {
        NemesisFault.allCases.filter { ($0 != .diskFull || tmpfs != nil) && ($0 != .clockStep || offsetFile != nil) }
    }

    func warmLoads(_ name: String) -> Int {
        cluster.log(of: name).components(separatedBy: "standby: warm state loaded").count - 1
    }

    func waitWarm(_ name: String, loadsBefore: Int) throws {
        try expectEventually(timeout: 30, "\(name) to wait warm as the standby") { warmLoads(name) > loadsBefore }
    }

    /// Coordinators that stopped by themselves outside a coordinator fault (a lease that
    /// lapsed on an overloaded machine, say), restarted as standbys as a supervisor would.
    private(set) var unexpectedStops: [String] = []

    /// Restarts, as a standby, each coordinator that has exited by itself (what systemd's
    /// `Restart=always` or `chime up` does), and waits until it is warm.
    func superviseCoordinators() throws {
        for name in ["coordinator", "standby"] where cluster.process(of: name) == nil {
            let exit = cluster.reap(name)
            unexpectedStops.append("\(name): \(exit.map { "\($0)" } ?? "?")")
            let loads = warmLoads(name)
            try cluster.spawn(name, standbyArguments)
            try waitWarm(name, loadsBefore: loads)
        }
    }

    /// The child that is the active coordinator now.
    func activeName() throws -> String {
        let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self)
        let pid = try #require(status.result?.pid)
        return try #require(["coordinator", "standby"].first { cluster.pid(of: $0) == pid }, "pid \(pid) is one of ours")
    }

    /// Applies `fault` and waits until the cluster has recovered: a coordinator serving and,
    /// after a coordinator fault, the old one back as a warm standby.
    func apply(_ fault: NemesisFault, random: inout SeededRandomNumberGenerator) throws {
        switch fault {
        case .killActive, .pauseActive, .handOver, .truncateTail:
            let active = try activeName()
            let oldPid = try #require(cluster.pid(of: active))
            let loads = warmLoads(active)
            let faultAt = Date()
            switch fault {
            case .killActive: cluster.crash(active)
            case .pauseActive: cluster.send(SIGSTOP, to: active)
            case .handOver: cluster.terminate(active)
            default: try cutJournalTail()
            }
            let pinger = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .milliseconds(100), retries: 0)
            try expectEventually(timeout: 15, interval: 0.005, "a coordinator other than pid \(oldPid) to serve after \(fault.rawValue)") {
                guard let status = try? pinger.send(ControlRequest(command: .status), expecting: StatusReport.self) else { return false }
                return status.result?.pid != oldPid
            }
            takeovers[fault, default: []].append(Date().timeIntervalSince(faultAt))
            // Paused: the standby killed it; cut: it stopped by itself; hand-over: it exits 0.
            try expectEventually(timeout: 15, "the old coordinator to be gone") { cluster.process(of: active) == nil }
            cluster.reap(active)
            try cluster.spawn(active, standbyArguments)
            try waitWarm(active, loadsBefore: loads)
        case .diskFull:
            guard let tmpfs else { return }
            try tmpfs.fill(with: "ballast")
            Thread.sleep(forTimeInterval: 0.5 + Double(random.next() % 1000) / 1000)
            try FileManager.default.removeItem(atPath: "\(tmpfs.path)/ballast")
            // Changes are refused (store_full) until a journal retry finds space again.
            let probe = try Durability.plainReminder(id: "space-\(UUID().uuidString)", due: Date().addingTimeInterval(3600))
            try expectEventually(timeout: 15, interval: 0.1, "the store to take changes again") {
                (try? client.send(ControlRequest(command: .schedule([probe])), expecting: ScheduleResult.self)) != nil
            }
        case .clockStep:
            guard let offsetFile else { return }
            let seconds = Int(random.next() % 5) - 2
            try Data("\(seconds == 0 ? 3 : seconds)".utf8).write(to: URL(fileURLWithPath: offsetFile))
            Thread.sleep(forTimeInterval: 1)
            try Data("0".utf8).write(to: URL(fileURLWithPath: offsetFile))
        case .killWorker:
            let worker = "worker-\(1 + Int(random.next() % 2))"
            cluster.crash(worker)
            try cluster.restart(worker)
        }
    }

    /// Cuts the newest journal segment in the middle of its last record.
    func cutJournalTail() throws {
        let segment = try StoreFiles.newest(in: "\(store)/journal", suffix: ".log")
        // A segment just rolled holds its header only: cut into that.
        let cut = try StoreFiles.records(ofSegment: segment).last.map { $0.offset + $0.length / 2 } ?? 12
        try FileHandle(forWritingTo: URL(fileURLWithPath: segment)).truncate(atOffset: UInt64(cut))
    }

    /// "median M ms, max X ms" of a fault's takeovers, or "none".
    func figures(_ fault: NemesisFault) -> String {
        let times = (takeovers[fault] ?? []).sorted()
        guard let median = times.dropFirst(times.count / 2).first, let maximum = times.last else { return "none" }
        return String(format: "median %.0f ms, max %.0f ms (%d)", median * 1000, maximum * 1000, times.count)
    }
}
