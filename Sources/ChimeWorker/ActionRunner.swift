import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import Synchronization

/// Runs action handlers for a worker: built-ins inline, command hooks on threads of their
/// own (so a slow hook never stalls deliveries), each within the time limit.
///
/// Built-ins: `dismiss` (nothing to do), `open` (the caller publishes an `action.<recipient>`
/// event), `snooze` (a re-firing after `snoozeSeconds`). Other identifiers run the
/// configured hook; without one the job fails with a reason.
public final class ActionRunner: Sendable {
    private let hooks: [String: String]
    private let timeLimit: Double
    private let finished = Mutex<[ActionOutcome]>([])
    private let running = Atomic<Int>(0)

    /// - Parameters:
    ///   - hooks: action identifier → shell command.
    ///   - timeLimit: how long a hook may run, in seconds.
    public init(hooks: [String: String], timeLimit: Double) {
        self.hooks = hooks
        self.timeLimit = timeLimit
    }

    /// Starts a job; built-ins finish at once, hooks later. Collect outcomes with `takeFinished`.
    public func start(_ job: ActionJob, at now: Date) {
        switch job.action {
        case "dismiss":
            record(ActionOutcome(jobId: job.jobId, status: .completed, reason: "dismissed"))
        case "open":
            record(ActionOutcome(jobId: job.jobId, status: .completed, reason: "opened"))
        case "snooze" where hooks["snooze"] == nil:
            let delay = job.snoozeSeconds ?? 600
            record(ActionOutcome(
                jobId: job.jobId, status: .completed, reason: "snoozed for \(DurationParser.format(seconds: delay))",
                effects: [.refire(at: now.addingTimeInterval(delay))]))
        default:
            guard let command = hooks[job.action] else {
                record(ActionOutcome(
                    jobId: job.jobId, status: .failed,
                    reason: "no handler for action \(job.action) (configure notifications.hooks)"))
                return
            }
            let timeLimit = timeLimit
            let runner = self
            running.add(1, ordering: .relaxed)
            let thread = Thread {
                runner.record(Self.runHook(command, job: job, timeLimit: timeLimit))
                runner.running.subtract(1, ordering: .releasing)
            }
            thread.name = "action-\(job.action)"
            thread.start()
        }
    }

    /// Hooks still running (each ends within the time limit).
    public var runningCount: Int { running.load(ordering: .acquiring) }

    /// The outcomes finished since the last call.
    public func takeFinished() -> [ActionOutcome] {
        finished.withLock { outcomes in
            defer { outcomes.removeAll() }
            return outcomes
        }
    }

    func record(_ outcome: ActionOutcome) {
        finished.withLock { $0.append(outcome) }
    }

    /// Runs `/bin/sh -c command` with the job JSON on stdin, killing it (SIGKILL, by its
    /// `ChildSupervisor`) after `timeLimit` s.
    static func runHook(_ command: String, job: ActionJob, timeLimit: Double) -> ActionOutcome {
        let child = ChildSupervisor(
            name: "hook-\(job.action)",
            launch: .init(
                executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", command],
                environment: [
                    "CHIME_ACTION": job.action, "CHIME_FIRING_ID": job.firingId.text,
                    "CHIME_RECIPIENT": job.recipient.rawValue, "CHIME_TEXT": job.text ?? "",
                ]))
        let input = Pipe()
        let output = Pipe()
        child.standardInput = input
        child.pipes = (output, output)
        do {
            try child.start()
        } catch {
            return ActionOutcome(jobId: job.jobId, status: .failed, reason: "hook did not start: \(error)")
        }
        input.fileHandleForWriting.write(WireCodec().encode(job))
        try? input.fileHandleForWriting.close()
        let collected = OutputBox()
        let reading = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            collected.set(output.fileHandleForReading.readDataToEndOfFile())
            reading.signal()
        }
        // Monotonic (ChildSupervisor waits on ContinuousClock): a wall-clock step must neither
        // kill a hook early nor let it run on.
        let limit = timeLimit.isFinite ? min(max(timeLimit, 0), 31_536_000) : 0
        var exit = child.waitForExit(timeout: limit)
        let timedOut = exit == nil
        if timedOut { exit = child.kill() }
        _ = reading.wait(timeout: .now() + 1)
        let text = String(decoding: collected.get().prefix(4096), as: UTF8.self)
        if timedOut {
            return ActionOutcome(
                jobId: job.jobId, status: .failed, reason: "hook timed out after \(DurationParser.format(seconds: timeLimit))",
                output: text)
        }
        if let exit, exit.status != 0 {
            return ActionOutcome(
                jobId: job.jobId, status: .failed, reason: "hook exited with status \(exit.status)", output: text)
        }
        return ActionOutcome(jobId: job.jobId, status: .completed, reason: "hook ran", output: text)
    }
}

/// Bytes read on one thread, taken on another.
final class OutputBox: Sendable {
    private let data = Mutex(Data())
    func set(_ value: Data) { data.withLock { $0 = value } }
    func get() -> Data { data.withLock { $0 } }
}
