import ChimeClient
import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation

/// What `chime up` does while its cluster runs: restarts a child that exited (with back-off,
/// `ChildSupervisor`), and kills (SIGKILL) and restarts one that stopped answering — the
/// active coordinator when `status` goes unanswered for `coordinatorSilence` seconds after
/// it had answered, a worker the coordinator reports as not alive for `workerSilence`
/// seconds while its process still runs (SIGSTOPped, hung).
///
/// With a local standby (`--standby`) the standby takes over a paused coordinator by itself
/// (its lease expires, README "Standby"); the supervisor then only restarts the killed one,
/// which waits as the new standby.
final class UpSupervisor {
    /// The coordinators: one, or the two of `--standby` (either may be active).
    let coordinators: [ChildSupervisor]
    let workers: [ChildSupervisor]
    let client: ControlClient
    /// How long the active coordinator may leave `status` unanswered before it is killed, in seconds.
    var coordinatorSilence = 3.0
    /// How long a running worker may be reported not alive before it is killed, in seconds.
    var workerSilence = 3.0
    /// The pid of the coordinator that answered last, and when (monotonic).
    private var lastAnswer: (pid: Int32, at: ContinuousClock.Instant)?
    /// Since when each worker (by name) has been reported not alive while running.
    private var silentSince: [String: ContinuousClock.Instant] = [:]
    private var nextWorkerCheck = ContinuousClock.now
    private let report: (String) -> Void

    /// - Parameters:
    ///   - client: a control client of the cluster (short timeout, no retries).
    ///   - report: where the supervisor's lines go (standard error).
    init(coordinators: [ChildSupervisor], workers: [ChildSupervisor], client: ControlClient, report: @escaping (String) -> Void) {
        self.coordinators = coordinators
        self.workers = workers
        self.client = client
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
        guard let listing = try? client.send(ControlRequest(command: .workers), expecting: WorkersResult.self).result else {
            // No coordinator to ask: nothing is known about the workers now.
            silentSince.removeAll()
            return
        }
        for child in workers {
            guard let pid = child.pid, let record = listing.workers.first(where: { $0.id.rawValue == child.name }),
                record.pid == pid, !record.alive
            else {
                silentSince[child.name] = nil
                continue
            }
            let since = silentSince[child.name] ?? now
            silentSince[child.name] = since
            if now - since >= .milliseconds(Int64(workerSilence * 1000)) {
                report("chime up: \(child.name) (pid \(pid)) is running but not alive for the coordinator; killing it")
                child.kill()
                silentSince[child.name] = nil
            }
        }
    }

    static func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return String(format: "%.1f s", seconds)
    }
}
