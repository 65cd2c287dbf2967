import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import HelperThreads
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
    private let maxConcurrentHooks: Int
    private let finished = Mutex<[ActionOutcome]>([])
    private let running = Mutex(0)

    /// - Parameters:
    ///   - hooks: action identifier → shell command.
    ///   - timeLimit: how long a hook (its whole process group) may run, in seconds.
    ///   - maxConcurrentHooks: hooks running at once at most; a job beyond fails at once
    ///     (a failed attempt, like a hook that exits non-zero).
    public init(hooks: [String: String], timeLimit: Double, maxConcurrentHooks: Int = 8) {
        self.hooks = hooks
        self.timeLimit = timeLimit
        self.maxConcurrentHooks = max(1, maxConcurrentHooks)
    }

    /// Hooks running now.
    public var runningHooks: Int { running.withLock { $0 } }

    private func claimHookSlot() -> Bool {
        running.withLock { count in
            guard count < maxConcurrentHooks else { return false }
            count += 1
            return true
        }
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
            guard claimHookSlot() else {
                record(ActionOutcome(
                    jobId: job.jobId, status: .failed,
                    reason: "\(maxConcurrentHooks) hooks already running (notifications.maxConcurrentHooks)"))
                return
            }
            let timeLimit = timeLimit
            let runner = self
            HelperThread(name: "action-\(job.action)").start {
                // Recorded before the slot is given back, so a caller that sees no hook
                // running (a leaving worker) finds every outcome in `takeFinished`.
                runner.record(Self.runHook(command, job: job, timeLimit: timeLimit))
                runner.running.withLock { $0 -= 1 }
            }
        }
    }

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

    /// Runs `/bin/sh -c command` with the job JSON on stdin, killing its process group after
    /// `timeLimit` s (``HookProcess``). Every way a hook can end is an outcome, never a trap.
    static func runHook(_ command: String, job: ActionJob, timeLimit: Double) -> ActionOutcome {
        var environment = ProcessInfo.processInfo.environment
        environment["CHIME_ACTION"] = job.action
        environment["CHIME_FIRING_ID"] = job.firingId.text
        environment["CHIME_RECIPIENT"] = job.recipient.rawValue
        environment["CHIME_TEXT"] = job.text ?? ""
        let run = HookProcess.run(
            command, environment: environment.map { "\($0.key)=\($0.value)" }, input: WireCodec().encode(job),
            timeLimit: timeLimit)
        let text = String(decoding: run.output, as: UTF8.self)
        switch run.ending {
        case .notStarted(let reason):
            return ActionOutcome(jobId: job.jobId, status: .failed, reason: "hook did not start: \(reason)")
        case .timedOut:
            return ActionOutcome(
                jobId: job.jobId, status: .failed, reason: "hook timed out after \(DurationParser.format(seconds: timeLimit))",
                output: text)
        case .signaled(let signal):
            return ActionOutcome(jobId: job.jobId, status: .failed, reason: "hook killed by signal \(signal)", output: text)
        case .exited(let status) where status != 0:
            return ActionOutcome(jobId: job.jobId, status: .failed, reason: "hook exited with status \(status)", output: text)
        case .exited:
            return ActionOutcome(jobId: job.jobId, status: .completed, reason: "hook ran", output: text)
        }
    }
}
