import ChimeCore
import ChimeRuntime
import ChimeSecurity
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// The coordinator's decisions: pure, events in, directives out, time passed in.
///
/// Its stored state is a handful of values, each in a folder of its own with its decisions:
/// the ``DurableState`` (what the journal makes of the schedule, deliveries, recipients, jobs,
/// requests and moves; changed only by ``apply(_:)``), and beside it the volatile values a
/// recovery rebuilds: the ``DispatchLine`` (firings waiting, in flight with their leases, the
/// workers and their credit), the ``ActionJobLine``, the ``CoordinatorCounters``, this
/// shard's ``ShardView``, the ``StoreUpkeep`` and the ``CoordinatorClocks``; with the tunables
/// (``CoordinatorConfiguration``) and the ``CoordinatorIdentity`` it decides for.
///
/// Invariants: every enabled reminder with an occurrence left is armed in `schedule` at
/// that occurrence; every in-flight firing is assigned to one worker and has a lease;
/// a worker never holds more firings than the capacity it announced (credit-based flow
/// control, ZeroMQ Guide ch. 7). Redelivery reuses the firing id (at-least-once delivery
/// with an idempotency key).
public struct CoordinatorState: Sendable {
    typealias Entry = ReminderEntry

    /// The durable state: changed only by ``apply(_:)`` (and replaced whole by ``load(_:)``),
    /// here in this file; every other part of the coordinator reads it.
    public private(set) var durable: DurableState

    /// The tunables this state decides with.
    public internal(set) var configuration: CoordinatorConfiguration
    /// The coordinator this state decides for: its epoch, version, pid and start.
    public internal(set) var identity: CoordinatorIdentity
    /// The readings of the current call and the end of recovery.
    var clocks = CoordinatorClocks()
    /// Firings waiting for a worker and in flight, and the workers.
    var dispatch = DispatchLine()
    /// Unfinished action jobs waiting for a worker, and the leases of those handed out.
    var jobLine = ActionJobLine()
    /// What was counted since start.
    var counters = CoordinatorCounters()
    /// This shard's slots, map record and the volatile side of its slot moves.
    var shardView: ShardView
    /// The store's mode and snapshots, and the requests waiting for them.
    var upkeep = StoreUpkeep()
    /// Worker joins and losses for the service's log (`takeNotices()`).
    var notices: [CoordinatorNotice] = []
    /// Cancels by filter still walking, oldest first (volatile: a crash loses the walk; the
    /// request was not answered, so its client retries).
    var bulkCancels: [BulkCancel] = []
    #if DEBUG
    /// A deliberately broken rule of slot moves that a simulator turns on to see its
    /// invariants catch it (set only by tests; absent from release builds).
    var sabotage: SlotMoveSabotage = .none
    #endif

    /// Makes an empty coordinator state.
    /// - Parameters:
    ///   - configuration: the tunables; the fold starts with their `durableSettings` (a store
    ///     that recorded its own replaces them with those).
    ///   - startedAt: when the coordinator started (UTC), for `status` (``takeOver(as:)``
    ///     sets it again with the rest of the identity).
    public init(configuration: CoordinatorConfiguration = CoordinatorConfiguration(), startedAt: Date) {
        self.configuration = configuration
        identity = CoordinatorIdentity(startedAt: startedAt)
        shardView = ShardView(map: configuration.shardMap, shardID: configuration.shardID)
        durable = DurableState(settings: configuration.durableSettings)
    }

    /// Drops the stale timer entries due at `now` that untaken due occurrences keep from
    /// surfacing (`TimerQueue.compactDue(at:)`): how the timer is kept, not what it holds,
    /// so it is no journal entry.
    mutating func compactDueTimerEntries(at now: Date) { durable.schedule.timer.compactDue(at: now) }

    /// Appends `entry` to the turn's directives and folds it into the state.
    /// - Returns: what the entry changed that the caller acts on.
    @discardableResult
    mutating func record(
        _ entry: JournalEntry, into directives: inout [CoordinatorDirective], hints: ApplyHints = ApplyHints()
    ) -> AppliedEntry {
        directives.append(.append(entry))
        upkeep.recordsSinceSnapshot += 1
        let applied = apply(entry, hints: hints)
        if !applied.revoked.isEmpty { revoke(applied.revoked, directives: &directives) }
        return applied
    }

    /// Folds one journal entry into the durable state (``DurableState/apply(_:hints:)``), as
    /// the live coordinator did when it decided the entry; recovery calls it for every entry
    /// after the snapshot. The volatile bookkeeping that follows an entry (counters, the job
    /// line) follows here, for both.
    @discardableResult
    public mutating func apply(_ entry: JournalEntry) -> AppliedEntry { apply(entry, hints: ApplyHints()) }

    mutating func apply(_ entry: JournalEntry, hints: ApplyHints) -> AppliedEntry {
        let applied = durable.apply(entry, hints: hints)
        if applied.wasSkipped { counters.skippedEntries += 1 }
        switch entry {
        case .suppressed: counters.suppressed += 1
        case .acted(let job, _): jobLine.accept(job.jobId)
        case .actionFinished(let outcome, _): jobLine.finish(outcome.jobId)
        default: break
        }
        return applied
    }

    /// Takes a decoded snapshot's state into an empty coordinator state; journal entries after
    /// it are then `apply`ed.
    public mutating func load(_ decoded: DurableState.DecodedSnapshot) {
        precondition(durable.reminderCount == 0 && durable.unsettledCount == 0, "a snapshot loads into an empty state")
        durable = decoded.state
        counters.skippedEntries += decoded.skippedReminders
        jobLine = ActionJobLine(unfinished: durable.actionJobs.unfinished.map(\.jobId))
    }

    /// The reminders `scope`'s recipients hold, and the stored bytes of those reminders, of
    /// their registrations and of their delivered lists, tracked from now on: the first call
    /// for a scope counts it in one pass over the reminders and one over the registrations
    /// and delivered lists, then the entry table and the
    /// recipients keep it (``TenantUsage``, derived: not part of the durable state's `==` or
    /// its snapshot).
    mutating func tenantUsage(of scope: RecipientScope) -> TenantUsage.Usage {
        var usage = durable.schedule.entries.track(scope)
        usage.bytes += durable.recipients.track(scope)
        return usage
    }

    /// The durable state's parts, read by the decisions (only `apply` changes them).
    var entries: EntryTable { durable.schedule.entries }
    var reminderIndex: SortedKeySet<ReminderKey> { durable.schedule.index }
    var schedule: TimerQueue<ReminderKey> { durable.schedule.timer }
    var lateFirings: [ReminderKey: Int] { durable.schedule.lateFirings }
    var unsettled: [FiringID: SharedFiring] { durable.deliveries.unsettled }
    var deadLetters: [FiringID: Firing] { durable.deliveries.deadLetters }
    var deadLetterIndex: SortedKeySet<DeadLetterKey> { durable.deliveries.deadLetterIndex }
    var nagFirings: [FiringID: Firing] { durable.deliveries.nagFirings }
    var nags: TimerQueue<FiringID> { durable.deliveries.nags }
    var eventLog: EventLog { durable.deliveries.eventLog }
    var eventSeqReserved: UInt64 { durable.deliveries.eventSeqReserved }
    var recipients: [RecipientID: Recipient] { durable.recipients.registered }
    var ledgers: [RecipientID: BadgeLedger] { durable.recipients.ledgers }
    var jobs: ActionJobs { durable.actionJobs }
    var requestLog: RequestLog { durable.requestLog }
    /// The highest coordinator epoch the journal (`.started`) and the snapshot recorded: the
    /// next start's epoch is above it.
    public var highestRecordedEpoch: UInt64 { durable.highestRecordedEpoch }

    /// How many reminders the state holds, in any state.
    public var reminderCount: Int { entries.count }

    /// How many firings are assigned to a worker and unacknowledged.
    public var inFlightCount: Int { dispatch.inFlight.count }

    /// How many due firings wait for a worker with free capacity.
    public var waitingCount: Int { dispatch.waiting.count }

    /// The map register's record this shard last read (`nil`: no register).
    public var mapRecord: SlotMapRecord? { shardView.mapRecord }

    /// Journal or snapshot records that no longer validate and were skipped.
    public var skippedEntries: Int { counters.skippedEntries }

    /// Firings handed over ahead of their due instant and revoked before it, since start.
    public var revokedCount: Int { counters.revoked }

    /// Worker messages dropped because `maxWorkers` records were kept and none could go.
    public var refusedWorkerMessages: Int { counters.refusedWorkerMessages }

    /// The earliest instant at which `onTick` has something to do (UTC), if any: the next
    /// occurrence, lease expiry or worker liveness deadline.
    public var nextWake: Date? {
        // While slots are handed over their occurrences stay armed here but are not fired:
        // the loop looks again every 50 ms instead of spinning on them.
        // Ahead of the due instant by half the lead and more: each wake hands over what falls
        // due within the lead, so the wake-ups come about twice a lead, not once a firing.
        let nextHandOver = schedule.nextDeadline.map { $0.addingTimeInterval(-configuration.dispatchLead / 2) }
        let scheduleWake = isServingRestricted
            ? nextHandOver.map { max($0, clocks.wall.addingTimeInterval(0.05)) } : nextHandOver
        var wake = [dispatch.isScheduleBacklogged ? nil : scheduleWake, dispatch.leases.first.map { clocks.wallClock(at: $0.expiresAt) },
                    jobLine.leases.nextDeadline, nags.nextDeadline, durable.deliveries.holds.nextDeadline]
            .compactMap { $0 }.min()
        if !dispatch.inFlight.isEmpty, let liveness = nextLivenessDeadline {
            wake = min(wake ?? liveness, liveness)
        }
        // A walking cancel goes on next turn, right after the poll.
        if !bulkCancels.isEmpty { wake = min(wake ?? clocks.wall, clocks.wall) }
        return wake
    }

    /// Reads the clocks of the current call (``CoordinatorClocks/observe(_:monotonic:)``).
    mutating func observeClocks(_ now: Date, monotonic: Double?) { clocks.observe(now, monotonic: monotonic) }

    /// Whether nothing is due (or due within the dispatch lead), waiting for a worker or in
    /// flight at `now`: a good moment for work that pauses the loop (a snapshot).
    public func isQuiet(at now: Date) -> Bool {
        waitingCount == 0 && dispatch.inFlight.isEmpty
            && (schedule.nextDeadline.map { $0 > now.addingTimeInterval(configuration.dispatchLead) } ?? true)
    }

    var livenessWindow: Double { configuration.heartbeatInterval * Double(configuration.heartbeatLiveness) }

    var nextLivenessDeadline: Date? {
        dispatch.workers.values.filter(\.isAlive).map { $0.lastSeenElapsed + livenessWindow }.min().map(clocks.wallClock(at:))
    }

    /// Whether `worker` was heard from within the liveness window, on the monotonic timeline.
    func isAlive(_ worker: WorkerRecord) -> Bool {
        worker.isAlive && clocks.elapsed - worker.lastSeenElapsed <= livenessWindow
    }
}
