import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

/// Actions on delivered firings: checked here (category, token), run by a worker, their
/// effects (snooze) applied here. Built-ins: `open` (the default action, foreground),
/// `dismiss` (background), `snooze` (background; a category action with that identifier
/// replaces the built-in one, with its own authentication and destructive marks).
extension CoordinatorState {
    mutating func act(
        _ firingId: FiringID, action: String, text: String?, token: String?, snoozeSeconds: Double?, at now: Date,
        directives: inout [CoordinatorDirective]
    ) -> ControlOutcome {
        guard let firingId = durable.resolve(firingId), let entry = entries[firingId.key] else {
            return .failed(WireError(.notFound, "no reminder for firing \(firingId)", field: "firingId"))
        }
        let reminderId = firingId.reminder
        let dueAt = firingId.dueAt
        let reminder = entry.reminder
        let recipient = recipients[reminder.recipient]
        var destructive = false
        var mode = ActivationMode.background
        var categoryID: String?
        switch action {
        case "open":
            mode = .foreground
        case "dismiss":
            break
        default:
            let categorySnooze = reminder.content.category.flatMap {
                recipient?.category(withIdentifier: $0)?.action(withIdentifier: "snooze")
            }
            if action == "snooze", categorySnooze == nil { break }
            guard let category = reminder.content.category else {
                return .failed(WireError(
                    .invalidArgument, "\(reminderId) has no category, so only open, dismiss and snooze apply", field: "action"))
            }
            guard let registered = recipient?.category(withIdentifier: category) else {
                return .failed(WireError(
                    .invalidArgument, "category \(category) is not registered for \(reminder.recipient)", field: "action"))
            }
            guard let definition = registered.action(withIdentifier: action) else {
                let known = registered.actions.map(\.identifier).joined(separator: ", ")
                return .failed(WireError(
                    .invalidArgument, "action \(action) is not in category \(category) (\(known))", field: "action"))
            }
            if definition.authenticationRequired && !(recipient?.authorizes(definition, token: token) ?? false) {
                return .failed(WireError(
                    .unauthenticated, "action \(action) needs the recipient's token", field: "token"))
            }
            if text != nil, definition.textInput == nil {
                return .failed(WireError(
                    .invalidArgument, "action \(action) of category \(category) takes no text (give it a textInput to make it a text-input action)",
                    field: "text"))
            }
            destructive = definition.destructive
            mode = definition.activationMode
            categoryID = category
        }
        if text != nil, categoryID == nil {
            return .failed(WireError(.invalidArgument, "\(action) takes no text; only a category's text-input action does", field: "text"))
        }
        if let snoozeSeconds, !(snoozeSeconds >= 60) {
            return .failed(WireError(.invalidArgument, "snooze must be at least 60 seconds", field: "snooze"))
        }
        if let snoozeSeconds, snoozeSeconds > NagPolicy.maximumInterval {
            return .failed(WireError(.invalidArgument, "snooze must be at most 366 days", field: "snooze"))
        }
        var firing = Firing(
            reminderId: reminderId, recipient: reminder.recipient, dueAt: dueAt, content: reminder.content)
        firing.firingId = firingId
        let job = ActionJob(
            jobId: "\(firingId.text)#\(action)@\(Int64(now.timeIntervalSince1970 * 1000))", firing: firing,
            action: action, text: text, destructive: destructive, activationMode: mode, category: categoryID,
            snoozeSeconds: action == "snooze" ? (snoozeSeconds ?? configuration.snoozeSeconds) : nil)
        record(.acted(job, at: now), into: &directives)
        _ = handle(firingId, action: action, at: now, directives: &directives)
        return .job(JobResult(status: "pending", job: job, outcome: nil))
    }

    func jobResult(_ jobId: String) -> ControlOutcome {
        guard let record = jobs[jobId] else {
            return .failed(WireError(.notFound, "no action job \(jobId)", field: "jobId"))
        }
        let status = record.outcome?.status.rawValue ?? "pending"
        return .job(JobResult(status: status, job: record.job, outcome: record.outcome))
    }

    /// Hands waiting jobs to live workers, one batch per job; a job whose lease expires is
    /// retried with its next attempt number (journaled), and fails after `maxAttempts`.
    mutating func assignJobs(at now: Date, directives: inout [CoordinatorDirective]) {
        for (jobId, _) in jobLine.leases.popDue(at: now) {
            guard let record = jobs[jobId], record.outcome == nil else { continue }
            if record.attempt >= configuration.maxAttempts {
                let outcome = ActionOutcome(
                    jobId: jobId, status: .failed, reason: "no worker completed it in \(record.attempt) attempts")
                self.record(.actionFinished(outcome, at: now), into: &directives)
                directives.append(.publish(.action(finishedEvent(record.job, outcome: outcome, at: now))))
            } else {
                self.record(.jobLeaseExpired(jobId: jobId, at: now), into: &directives)
                jobLine.waiting.append(jobId)
            }
        }
        while !jobLine.waiting.isEmpty, let (worker, _) = workerWithMostCredit() {
            let jobId = jobLine.waiting.removeFirst()
            guard let record = jobs[jobId], record.outcome == nil else { continue }
            jobLine.leases.schedule(jobId, at: now.addingTimeInterval(configuration.actionTimeLimit + 5))
            directives.append(.dispatch(
                DispatchBatch(epoch: identity.epoch, leaseMilliseconds: Int(configuration.actionTimeLimit * 1000),
                              firings: [], jobs: [record.job]),
                to: worker))
        }
    }

    /// Records how a job ended and applies its effects (a snooze schedules a one-shot
    /// re-firing as a new reminder, so it has its own firing id).
    mutating func finish(_ outcome: ActionOutcome, at now: Date, directives: inout [CoordinatorDirective]) {
        guard let job = jobs[outcome.jobId], job.outcome == nil else { return }
        record(.actionFinished(outcome, at: now), into: &directives)
        applyEffects(of: outcome, job: job.job, at: now, directives: &directives)
        directives.append(.publish(.action(finishedEvent(job.job, outcome: outcome, at: now))))
    }

    mutating func applyEffects(of outcome: ActionOutcome, job: ActionJob, at now: Date,
                               directives: inout [CoordinatorDirective]) {
        guard outcome.status == .completed else { return }
        for effect in outcome.effects {
            switch effect {
            case .refire(let at):
                guard let original = entries[ReminderKey(job.reminderId, of: job.recipient)]?.reminder else { continue }
                let snoozed = Reminder(
                    id: ReminderID("\(job.reminderId.rawValue).snooze-\(Int64(at.timeIntervalSince1970 * 1000))"),
                    recipient: original.recipient, content: original.content, trigger: Trigger(start: .instant(at)))
                guard let recurrence = try? snoozed.trigger.makeRecurrence() else { continue }
                record(.scheduled(snoozed, at: now), into: &directives, hints: ApplyHints(recurrence: recurrence))
            }
        }
    }
}
