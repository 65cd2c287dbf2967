import ChimeClient
import ChimeCommandLine
import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation

/// What `chime up` does while its cluster runs: restarts a child that exited (with back-off,
/// `ChildSupervisor`), and kills (SIGKILL) and restarts one that stopped answering — the
/// active coordinator when `status` goes unanswered for `coordinatorSilence` seconds after
/// it had answered, a worker that any shard's coordinator reports as not alive for
/// `workerWatch.silenceSeconds` while its process still runs (SIGSTOPped, hung, or one of its
/// per-shard loops stalled; ``WorkerWatch``).
///
/// With a local standby (`--standby`) the standby takes over a paused coordinator by itself
/// (its lease expires, Docs/Chime.docc/Operations/Failover.md); the supervisor then only restarts the killed one,
/// which waits as the new standby.
final class UpSupervisor {
    /// The coordinators: one, or the two of `--standby` (either may be active).
    let coordinators: [ChildSupervisor]
    let workers: [ChildSupervisor]
    let client: ControlClient
    /// The control client of every shard, by shard id: each is asked for its `workers`.
    let workerClients: [(shard: Int, client: ControlClient)]
    /// How long the active coordinator may leave `status` unanswered before it is killed, in seconds.
    var coordinatorSilence = 3.0
    /// Judges the workers from every shard's listing.
    var workerWatch = WorkerWatch(silenceSeconds: 3)
    /// The pid of the coordinator that answered last, and when (monotonic).
    private var lastAnswer: (pid: Int32, at: ContinuousClock.Instant)?
    private var nextWorkerCheck = ContinuousClock.now
    private let report: (String) -> Void

    /// - Parameters:
    ///   - client: a control client of the coordinators' shard (short timeout, no retries).
    ///   - workerClients: every shard's control client, asked about `workers`; `nil`: `client`
    ///     as shard 0 (one coordinator).
    ///   - report: where the supervisor's lines go (standard error).
    init(
        coordinators: [ChildSupervisor], workers: [ChildSupervisor], client: ControlClient,
        workerClients: [(shard: Int, client: ControlClient)]? = nil, report: @escaping (String) -> Void
    ) {
        self.coordinators = coordinators
        self.workers = workers
        self.client = client
        self.workerClients = workerClients ?? [(0, client)]
        self.report = report
    }

    /// One round (call it every 100–200 ms): restarts what exited, checks the coordinator
    /// and, every second, the workers.
    func superviseOnce() {
        let now = ContinuousClock.now
        for child in coordinators + workers { restartIfExited(child, at: now) }
        checkCoordinator(at: now)
        if now >= nextWorkerCheck {
            nextWorkerCheck = now + .seconds(1)
            checkWorkers(at: now)
        }
    }

    private func restartIfExited(_ child: ChildSupervisor, at now: ContinuousClock.Instant) {
        guard !child.isRunning, let exit = child.exit else { return }
        if let delay = child.restartDelay, delay > .zero {
            if reportedExits.insert("\(child.name)#\(child.starts)").inserted {
                report("chime up: \(child.name) (pid \(child.process?.processIdentifier ?? 0)) exited (\(exit)); restarting in \(Self.format(delay))")
            }
            return
        }
        do {
            if try child.restartIfDue(at: now) {
                report("chime up: restarted \(child.name) (pid \(child.pid ?? 0), start \(child.starts))")
            }
        } catch {
            report("chime up: cannot restart \(child.name): \(error)")
        }
    }

    /// Exits already reported (`name#start`), so each is reported once.
    private var reportedExits = Set<String>()

    private func checkCoordinator(at now: ContinuousClock.Instant) {
        if let status = try? client.send(ControlRequest(command: .status), expecting: StatusReport.self).result {
            lastAnswer = (status.pid, now)
            return
        }
        // The coordinator that answered last, if it still runs as our child, is the suspect;
        // a new one recovering its store is not judged before it has answered once.
        if let (pid, at) = lastAnswer, now - at >= .milliseconds(Int64(coordinatorSilence * 1000)),
            let child = coordinators.first(where: { $0.pid == pid })
        {
            report("chime up: \(child.name) (pid \(pid)) has not answered for \(Self.format(now - at)); killing it")
            child.kill()
            lastAnswer = nil
        }
    }

    private func checkWorkers(at now: ContinuousClock.Instant) {
        guard !workers.isEmpty else { return }
        var listings: [Int: [WorkerReport]?] = [:]
        for (shard, client) in workerClients {
            // A shard that does not answer is no evidence about the workers.
            listings[shard] = .some(try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self).result?.workers)
        }
        var running: [String: Int32] = [:]
        for child in workers { if let pid = child.pid { running[child.name] = pid } }
        let elapsed = Self.origin.duration(to: now).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        for kill in workerWatch.observe(running: running, listings: listings, at: seconds) {
            guard let child = workers.first(where: { $0.name == kill.name }) else { continue }
            let shards = kill.shards.map(String.init).joined(separator: ", ")
            report("chime up: \(child.name) (pid \(child.pid ?? 0)) is running but not alive for shard(s) \(shards); killing it")
            child.kill()
        }
    }

    /// The instant the supervisor's clock readings count from.
    private static let origin = ContinuousClock.now

    static func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return String(format: "%.1f s", seconds)
    }
}
