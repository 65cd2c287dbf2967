import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// The durable state as one value: the divergences a reviewer found between the live fold, a
/// journal replay and a snapshot load, each as a named case, plus what `==` must see.
@Suite struct DurableStateTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    /// A coordinator as the service starts one: its settings journaled first.
    struct Run {
        var configuration: CoordinatorConfiguration
        var state: CoordinatorState
        var journal: [JournalEntry] = []

        init(_ configure: (inout CoordinatorConfiguration) -> Void = { _ in }) {
            var configuration = CoordinatorConfiguration()
            configuration.heartbeatInterval = 3600
            configuration.maxAttempts = 3
            configure(&configuration)
            self.configuration = configuration
            state = CoordinatorState(configuration: configuration, startedAt: DurableStateTests.t0)
            let started = JournalEntry.started(epoch: 1, at: DurableStateTests.t0, settings: configuration.durableSettings)
            journal.append(started)
            state.apply(started)
            state.finishRecovery(at: DurableStateTests.t0)
        }

        mutating func keep(_ directives: [CoordinatorDirective]) -> [CoordinatorDirective] {
            journal += directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
            return directives
        }

        @discardableResult
        mutating func request(_ command: ControlRequest.Command, at now: Date = DurableStateTests.t0) -> ControlOutcome {
            let directives = keep(state.onRequest(ControlRequest(command: command), from: ClientAddress(routing: [Data([1])]), at: now))
            guard case .reply(let outcome, _, _)? = directives.last else { return .failed(WireError(.internal, "no reply")) }
            return outcome
        }

        /// A heartbeat over the dispatch connection with these acknowledgements and outcomes.
        @discardableResult
        mutating func worker(acks: [Firing] = [], outcomes: [ActionOutcome] = [], at now: Date) -> [CoordinatorDirective] {
            var message = WorkerMessage(
                worker: "w1", host: "h", pid: 1, capacity: 8, delivered: acks.count,
                acks: acks.map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: now, attempt: $0.attempt, epoch: 1) })
            if !outcomes.isEmpty { message.outcomes = outcomes }
            return keep(state.onWorkerMessage(message, viaDispatch: true, at: now))
        }

        mutating func tick(at now: Date) -> [CoordinatorDirective] { keep(state.onTick(now: now)) }

        /// The journal replayed from empty by a coordinator configured with `configuration`.
        func replayed(with configuration: CoordinatorConfiguration? = nil) -> CoordinatorState {
            var replay = CoordinatorState(configuration: configuration ?? self.configuration, startedAt: DurableStateTests.t0)
            for entry in journal { replay.apply(entry) }
            return replay
        }

        /// The state loaded from a snapshot of this one.
        func reloaded() throws -> CoordinatorState {
            var loaded = CoordinatorState(configuration: configuration, startedAt: DurableStateTests.t0)
            try loaded.load(snapshot: state.encodedSnapshot(at: DurableStateTests.t0))
            return loaded
        }
    }

    static func firings(_ directives: [CoordinatorDirective]) -> [Firing] {
        directives.flatMap { directive -> [Firing] in if case .dispatch(let batch, _) = directive { batch.firings } else { [] } }
    }

    static func jobs(_ directives: [CoordinatorDirective]) -> [ActionJob] {
        directives.flatMap { directive -> [ActionJob] in if case .dispatch(let batch, _) = directive { batch.jobs ?? [] } else { [] } }
    }

    static func entries(_ directives: [CoordinatorDirective]) -> [JournalEntry] {
        directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
    }

    /// Delivers a one-shot for `alice` and returns the firing, acknowledged.
    static func delivered(in run: inout Run, id: ReminderID = "r", nag: NagPolicy? = nil) -> Firing {
        let reminder = Reminder(
            id: id, recipient: "alice", content: Content(title: "t"), trigger: Trigger(start: .instant(t0)), nag: nag)
        run.request(.schedule([reminder]))
        run.worker(at: t0)
        let firing = firings(run.tick(at: t0))[0]
        run.worker(acks: [firing], at: t0)
        return firing
    }

    // MARK: The five divergences

    /// Before: `job` answered "completed" live and after a journal-only replay, but
    /// `not_found` after a restart from a snapshot, which kept only unfinished jobs.
    @Test func aFinishedJobAnswersTheSameLiveAfterAReplayAndAfterASnapshot() throws {
        var run = Run()
        let firing = Self.delivered(in: &run)
        guard case .job(let accepted) = run.request(.act(firingId: firing.firingId, action: "open", text: nil, token: nil, snoozeSeconds: nil))
        else { Issue.record("act was refused"); return }
        let job = try #require(Self.jobs(run.tick(at: Self.t0)).first)
        #expect(job.jobId == accepted.job.jobId)
        run.worker(outcomes: [ActionOutcome(jobId: job.jobId, status: .completed, reason: nil)], at: Self.t0)
        var replayed = run.replayed()
        var reloaded = try run.reloaded()
        for state in [run.state, replayed, reloaded] {
            guard case .job(let result) = state.jobResult(job.jobId) else {
                Issue.record("job \(job.jobId) is not found")
                continue
            }
            #expect(result.status == "completed")
        }
        #expect(replayed.durable == run.state.durable)
        #expect(reloaded.durable == run.state.durable)
        // Nothing of a finished job is left waiting after either recovery.
        replayed.finishRecovery(at: Self.t0)
        reloaded.finishRecovery(at: Self.t0)
        #expect(replayed.jobLine.waiting.isEmpty && reloaded.jobLine.waiting.isEmpty)
    }

    /// Before: `jobs` was never pruned and grew with every `act`.
    @Test func finishedJobsAreKeptUpToTheirRetentionOldestFinishedFirst() throws {
        var run = Run { $0.finishedJobRetention = 2 }
        let firing = Self.delivered(in: &run)
        var jobIds: [String] = []
        for (index, action) in ["open", "dismiss", "open"].enumerated() {
            let now = Self.t0.addingTimeInterval(Double(index + 1))
            run.request(.act(firingId: firing.firingId, action: action, text: nil, token: nil, snoozeSeconds: nil), at: now)
            let job = try #require(Self.jobs(run.tick(at: now)).first)
            run.worker(outcomes: [ActionOutcome(jobId: job.jobId, status: .completed, reason: nil)], at: now)
            jobIds.append(job.jobId)
        }
        #expect(run.state.jobs.count == 2)
        let reloaded = try run.reloaded()
        for state in [run.state, run.replayed(), reloaded] {
            #expect(state.jobResult(jobIds[0]) == .failed(WireError(.notFound, "no action job \(jobIds[0])", field: "jobId")))
            guard case .job(let second) = state.jobResult(jobIds[1]), case .job(let third) = state.jobResult(jobIds[2]) else {
                Issue.record("a kept job is missing")
                continue
            }
            #expect(second.status == "completed" && third.status == "completed")
        }
        #expect(reloaded.durable == run.state.durable)
    }

    /// Before: the live coordinator built a coalesced misfire's firing with the fired
    /// occurrence's event instant, a replay rebuilt it as `dueAt + offset`; now the fold builds
    /// it, once, for both.
    @Test func aCoalescedMisfireWithARemindBeforeOffsetIsTheSameFiringLiveAndReplayed() throws {
        var run = Run()
        // Every minute from 08:01, reminded 30 s before: fires 08:00:30, 08:01:30, …
        let reminder = Reminder(
            id: "m", recipient: "alice", content: Content(title: "t"),
            trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(60)), repeatRule: RepeatRule(unit: .minute, interval: 1), offset: 30))
        run.request(.schedule([reminder]))
        // Down until 08:05:10: the firings of 08:00:30 … 08:04:30 were missed and coalesce
        // into the newest (event 08:05:00, fired 08:04:30).
        let restart = Self.t0.addingTimeInterval(310)
        var recovered = run.replayed()
        recovered.finishRecovery(at: restart)
        var after = Run()
        after.state = recovered
        after.journal = run.journal
        after.worker(at: restart)
        let firing = try #require(Self.firings(after.tick(at: restart)).first)
        #expect(firing.dueAt == Self.t0.addingTimeInterval(270))
        #expect(firing.eventAt == Self.t0.addingTimeInterval(300))
        #expect(firing.missed == 5)
        let replayed = after.replayed()
        #expect(replayed.durable == after.state.durable)
        #expect(replayed.unsettled[firing.firingId]?.firing.eventAt == Self.t0.addingTimeInterval(300))
    }

    /// Before: handing a job to a worker counted its attempt outside the fold (and a failed
    /// hand-off took it back), so a restart forgot how often a job had been tried.
    @Test func jobAttemptsAreJournaledAndAFailedHandOffCountsNone() throws {
        var run = Run()
        let firing = Self.delivered(in: &run)
        run.request(.act(firingId: firing.firingId, action: "open", text: nil, token: nil, snoozeSeconds: nil))
        let batch = run.tick(at: Self.t0).compactMap { if case .dispatch(let batch, let worker) = $0 { (batch, worker) } else { nil } }
        let (dispatched, worker) = try #require(batch.first)
        let job = try #require(dispatched.jobs?.first)
        let before = run.state.durable
        run.state.onDispatchFailed(dispatched, to: worker, at: Self.t0)
        #expect(run.state.durable == before, "a failed hand-off changes nothing durable")
        #expect(run.state.jobs[job.jobId]?.attempt == 1)
        // The lease (time limit + 5 s) runs out twice: attempts 2 and 3 are journaled.
        var now = Self.t0
        for attempt in 2...3 {
            run.worker(at: now)
            _ = run.tick(at: now)
            now = now.addingTimeInterval(run.configuration.actionTimeLimit + 6)
            let entries = Self.entries(run.tick(at: now))
            #expect(entries.contains(.jobLeaseExpired(jobId: job.jobId, at: now)))
            #expect(run.state.jobs[job.jobId]?.attempt == attempt)
            #expect(run.replayed().jobs[job.jobId]?.attempt == attempt)
        }
        // The third lease runs out: maxAttempts (3) reached, the job fails.
        run.worker(at: now)
        _ = run.tick(at: now)
        now = now.addingTimeInterval(run.configuration.actionTimeLimit + 6)
        _ = run.tick(at: now)
        guard case .job(let result) = run.replayed().jobResult(job.jobId) else {
            Issue.record("the job is not found")
            return
        }
        #expect(result.status == "failed")
        #expect(result.outcome?.reason == "no worker completed it in 3 attempts")
    }

    /// Before: releasing a due nag popped the nag timer without a journal entry, and a load
    /// re-armed it.
    @Test func aNagReleaseIsJournaledAndATickThatJournalsNothingChangesNothingDurable() throws {
        var run = Run()
        let firing = Self.delivered(in: &run, nag: NagPolicy(count: 1, interval: 60))
        let nagID = FiringID(nag: 1, of: firing.firingId)
        #expect(run.state.nags.deadline(of: nagID) == Self.t0.addingTimeInterval(60))
        let quiet = run.state.durable
        #expect(Self.entries(run.tick(at: Self.t0.addingTimeInterval(30))).isEmpty)
        #expect(run.state.durable == quiet, "nothing due: the durable state is as it was")
        let directives = run.tick(at: Self.t0.addingTimeInterval(61))
        #expect(Self.entries(directives).first == .nagFired(nagID, at: Self.t0.addingTimeInterval(61)))
        #expect(Self.firings(directives).map(\.firingId) == [nagID])
        #expect(run.state.nags.isEmpty && run.state.nagFirings.isEmpty)
        #expect(run.replayed().durable == run.state.durable)
        #expect(try run.reloaded().durable == run.state.durable)
    }

    /// Before: the fold read `maxPendingPerRecipient` and `requireRegistration` from today's
    /// configuration, so a replay after a configuration change folded differently from the
    /// live run.
    @Test func aReplayAfterAConfigurationChangeFoldsWithTheRecordedSettingsUntilTheNextStart() throws {
        var run = Run()
        let reminders = (0..<3).map { index in
            Reminder(
                id: ReminderID("c\(index)"), recipient: "alice", content: Content(title: "t"),
                trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(Double(3600 * (index + 1))))))
        }
        run.request(.schedule(reminders))
        let late = Reminder(id: "now", recipient: "bob", content: Content(title: "t"), trigger: Trigger(start: .instant(Self.t0)))
        run.request(.schedule([late]))
        run.worker(at: Self.t0)
        #expect(Self.firings(run.tick(at: Self.t0)).map(\.content.title) == ["t"], "bob is not registered; nothing is required")
        // Restarted with a cap of 1 and registration required: the replay still folds the
        // journal as it was decided.
        var changed = run.configuration
        changed.maxPendingPerRecipient = 1
        changed.requireRegistration = true
        var replayed = run.replayed(with: changed)
        #expect(replayed.durable == run.state.durable)
        #expect(replayed.durable.schedule.caps.isEmpty)
        #expect(replayed.unsettled.values.map(\.firing.content.title) == ["t"])
        // Then the start records the new settings, and the fold takes them on.
        replayed.apply(.started(epoch: 2, at: Self.t0, settings: changed.durableSettings))
        #expect(replayed.durable.settings == changed.durableSettings)
        let cap = try #require(replayed.durable.schedule.caps["alice"])
        #expect(cap.armedKeys.map(\.id) == ["c0"] && cap.waitingKeys.map(\.id) == ["c1", "c2"])
        var reloaded = CoordinatorState(configuration: run.configuration, startedAt: Self.t0)
        try reloaded.load(snapshot: replayed.encodedSnapshot(at: Self.t0))
        #expect(reloaded.durable == replayed.durable, "a snapshot carries the settings it was folded with")
    }

    /// Before: the badge event sequence was not saved and restarted at 0.
    @Test func theBadgeEventSeqSurvivesARestart() throws {
        var run = Run()
        run.request(.badge("alice", 3))
        run.request(.badge("alice", 3))
        run.request(.badge("alice", 5))
        #expect(run.state.durable.recipients.badgeEventSeq == 2, "the unchanged number made no event")
        var replayed = run.replayed()
        let reloaded = try run.reloaded()
        #expect(replayed.durable == run.state.durable && reloaded.durable == run.state.durable)
        let directives = replayed.onRequest(ControlRequest(command: .badge("alice", 7)), from: client, at: Self.t0)
        let seqs = directives.compactMap { if case .publish(.badge(let event)) = $0 { event.seq } else { nil } }
        #expect(seqs == [3])
    }

    /// Before: the crash-equivalence test compared snapshot projections, which carry neither
    /// which of a recipient's reminders a cap holds back nor the nag timers.
    @Test func capMembershipAndNagTimersTakePartInEquality() {
        var run = Run { $0.maxPendingPerRecipient = 1 }
        let reminders = (0..<2).map { index in
            Reminder(
                id: ReminderID("c\(index)"), recipient: "alice", content: Content(title: "t"),
                trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(Double(3600 * (index + 1))))))
        }
        run.request(.schedule(reminders))
        var other = run.state.durable
        #expect(other == run.state.durable)
        other.schedule.caps["alice"]?.remove(ReminderKey("c1", of: "alice"))
        #expect(other != run.state.durable, "a cap holding back another set differs")
        var nagged = run.state.durable
        nagged.deliveries.nags.schedule(FiringID(ReminderKey("c0", of: "alice"), dueAt: Self.t0), at: Self.t0)
        #expect(nagged != run.state.durable, "a nag timer differs")
    }
}
