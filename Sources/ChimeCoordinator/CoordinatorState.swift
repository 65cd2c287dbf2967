import ChimeCore
import ChimeRuntime
import ChimeSecurity
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// The coordinator's decisions: the schedule, the firings waiting for a worker, in-flight
/// firings with their leases, and the workers with their credit. Pure: events in,
/// directives out, time passed in.
///
/// Invariants: every enabled reminder with an occurrence left is armed in `schedule` at
/// that occurrence; every in-flight firing is assigned to one worker and has a lease;
/// a worker never holds more firings than the capacity it announced (credit-based flow
/// control, ZeroMQ Guide ch. 7). Redelivery reuses the firing id (at-least-once delivery
/// with an idempotency key).
public struct CoordinatorState: Sendable {
    typealias Entry = ReminderEntry

    struct InFlight: Sendable {
        let shared: SharedFiring
        /// The event seq of this delivery attempt.
        var seq: UInt64
        var worker: WorkerID
        /// When the lease runs out, on the monotonic timeline (`elapsed`), in seconds: the
        /// lease duration after the dispatch, or after the due instant for a firing handed
        /// over ahead of it.
        var leaseExpiresAt: Double
        /// When it was dispatched, on the monotonic timeline (`elapsed`), in seconds.
        var dispatchedAt: Double
        var firing: Firing { shared.firing }
    }

    struct WorkerRecord: Sendable {
        var host: String
        var pid: Int32
        /// When it was last heard from (UTC), for `workers` listings.
        var lastSeenAt: Date
        /// The same moment on the monotonic timeline (`elapsed`), in seconds: liveness is
        /// measured on it.
        var lastSeenElapsed: Double
        var capacity: Int
        var outstanding = 0
        var isAlive = true
        /// Whether the dispatch socket can route to it: set by a message that came over the
        /// dispatch connection, cleared when a hand-off fails.
        var isReachable = false
        /// Whether it said it was leaving: its results (another socket, so they may arrive
        /// after the `leaving` announcement) settle what they acknowledge without bringing it
        /// back; only a message over dispatch, or another pid, does.
        var hasLeft = false
        var acknowledged = 0
        var delivered = 0
        /// When this worker last got a batch (a counter), so ties rotate between workers.
        var lastAssignment = 0
    }

    /// The durable state: changed only by ``apply(_:)`` (and replaced whole by ``load(_:)``),
    /// here in this file; every other part of the coordinator reads it.
    public private(set) var durable: DurableState

    /// The tunables this state decides with.
    public internal(set) var configuration: CoordinatorConfiguration
    /// The coordinator this state decides for: its epoch, version, pid and start.
    public internal(set) var identity: CoordinatorIdentity
    /// Unsettled firings not yet assigned to a worker, oldest first (the boxes
    /// `durable.deliveries.unsettled` holds).
    var waiting = RingQueue<SharedFiring>()
    var inFlight: [FiringID: InFlight] = [:]
    /// Lease expiries in dispatch order. Every lease lasts `leaseDuration` from its dispatch,
    /// or from its due instant for a firing handed over ahead of it (at most `dispatchLead`
    /// later), so expiries grow but for that lead (a clock stepped back merely delays them): a
    /// FIFO instead of a heap, with no hashing per firing; an expiry behind a later one is
    /// noticed at most `dispatchLead` late. An entry is stale once its firing was acknowledged, requeued or
    /// leased again (`inFlight[id]?.leaseExpiresAt` no longer matches); `onTick` drops stale
    /// entries as soon as they reach the front, not at their expiry, so the FIFO holds about
    /// the in-flight window (one lookup per entry either way).
    var leases = RingQueue<(firingId: FiringID, expiresAt: Double)>()
    /// The monotonic reading of the current call, in seconds (`observeClocks`).
    var elapsed: Double = 0
    /// The wall-clock reading of the current call (UTC), paired with `elapsed`.
    var elapsedWall = Date(timeIntervalSinceReferenceDate: 0)
    var workers: [WorkerID: WorkerRecord] = [:]
    /// Who let which lease run out, and the workers set aside for it: volatile.
    var leaseFailures = LeaseFailureBook()
    /// When recovery finished: occurrences due before it are misfires.
    var recoveredAt: Date?
    /// Whether the last `onTick` left due reminders in the timer because the waiting line
    /// already held what the workers' free credit can take; `nextWake` then waits for credit
    /// (a worker message) instead of the past due time.
    var isScheduleBacklogged = false
    /// Journal or snapshot records that no longer validate and were skipped.
    public internal(set) var skippedEntries = 0
    /// Unfinished action jobs waiting for a worker, oldest first.
    var waitingJobs: [String] = []
    /// When each job handed to a worker must have finished (its lease).
    var jobLeases = TimerQueue<String>()
    var suppressedCount = 0
    /// The `seq` the next dispatched firing gets (volatile: a recovery resumes after
    /// `eventSeqReserved`).
    var nextEventSeq: UInt64 = 1
    var generatedIDs = 0
    var assignmentCounter = 0
    var dispatchLateness = LatenessRecorder()
    var fireLateness = LatenessRecorder()
    var dispatchedCount = 0
    var redeliveredCount = 0
    var acknowledgedCount = 0
    /// Firings dead-lettered since start (`deadLetters` holds those not yet retried).
    var deadLetteredCount = 0
    /// Firings handed over ahead of their due instant and revoked before it since start
    /// (their reminder was cancelled, switched off or replaced).
    public internal(set) var revokedCount = 0
    /// `firedAt − dueAt` of acknowledged firings, in seconds, for `/metrics`.
    var fireLatenessSeconds = Histogram(upperBounds: Histogram.latencySecondsBounds)
    /// Counters once a second, for the rates of `stats`.
    var throughput = ThroughputWindow()
    /// Worker messages dropped because `maxWorkers` records were kept and none could go.
    public internal(set) var refusedWorkerMessages = 0
    /// Worker joins and losses for the service's log (`takeNotices()`).
    var notices: [CoordinatorNotice] = []
    /// Which slots this shard owns (from `configuration.shardMap` and `shardID`).
    var ownership: ShardOwnership
    /// The map register's record this shard last read (`nil`: no register; the map is the
    /// configured one).
    public internal(set) var mapRecord: SlotMapRecord?
    /// Volatile write pauses of the moves this shard sends (until when, UTC), by move: set by
    /// the mover's pause request, lost in a crash (the mover asks again).
    var movePauses: [SlotMoveID: Date] = [:]
    /// Volatile staging of the moves this shard receives (before adoption), by move.
    var moveStaging: [SlotMoveID: SlotMoveStaging] = [:]
    /// Whether a newer register record was adopted while moves are in progress here: the
    /// next tick follows its outcomes (`followMapRecord`).
    var isMoveFollowDue = false
    /// Cancels by filter still walking, oldest first (volatile: a crash loses the walk; the
    /// request was not answered, so its client retries).
    var bulkCancels: [BulkCancel] = []

    /// Makes an empty coordinator state.
    /// - Parameters:
    ///   - configuration: the tunables; the fold starts with their `durableSettings` (a store
    ///     that recorded its own replaces them with those).
    ///   - startedAt: when the coordinator started (UTC), for `status`.
    public init(configuration: CoordinatorConfiguration = CoordinatorConfiguration(), startedAt: Date) {
        self.configuration = configuration
        identity = CoordinatorIdentity(startedAt: startedAt)
        ownership = ShardOwnership(map: configuration.shardMap, shardID: configuration.shardID)
        durable = DurableState(settings: configuration.durableSettings)
    }

    /// Appends `entry` to the turn's directives and folds it into the state.
    /// - Returns: what the entry changed that the caller acts on.
    @discardableResult
    mutating func record(
        _ entry: JournalEntry, into directives: inout [CoordinatorDirective], hints: ApplyHints = ApplyHints()
    ) -> AppliedEntry {
        directives.append(.append(entry))
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
        if applied.wasSkipped { skippedEntries += 1 }
        switch entry {
        case .suppressed: suppressedCount += 1
        case .acted(let job, _): waitingJobs.append(job.jobId)
        case .actionFinished(let outcome, _):
            jobLeases.remove(outcome.jobId)
            waitingJobs.removeAll { $0 == outcome.jobId }
        default: break
        }
        return applied
    }

    /// Takes a decoded snapshot's state into an empty coordinator state; journal entries after
    /// it are then `apply`ed.
    public mutating func load(_ decoded: DurableState.DecodedSnapshot) {
        precondition(durable.reminderCount == 0 && durable.unsettledCount == 0, "a snapshot loads into an empty state")
        durable = decoded.state
        skippedEntries += decoded.skippedReminders
        waitingJobs = durable.actionJobs.unfinished.map(\.jobId)
    }

    /// The reminders and stored bytes `scope`'s recipients hold, tracked from now on: the first
    /// call for a scope counts it in one pass over the reminders, then the entry table keeps it
    /// (``TenantUsage``, derived: not part of the durable state's `==` or its snapshot).
    mutating func tenantUsage(of scope: RecipientScope) -> TenantUsage.Usage {
        durable.schedule.entries.track(scope)
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
    public var inFlightCount: Int { inFlight.count }

    /// How many due firings wait for a worker with free capacity.
    public var waitingCount: Int { waiting.count }

    /// The earliest instant at which `onTick` has something to do (UTC), if any: the next
    /// occurrence, lease expiry or worker liveness deadline.
    public var nextWake: Date? {
        // While slots are handed over their occurrences stay armed here but are not fired:
        // the loop looks again every 50 ms instead of spinning on them.
        // Ahead of the due instant by half the lead and more: each wake hands over what falls
        // due within the lead, so the wake-ups come about twice a lead, not once a firing.
        let nextHandOver = schedule.nextDeadline.map { $0.addingTimeInterval(-configuration.dispatchLead / 2) }
        let scheduleWake = durable.moves.hasHandedOver
            ? nextHandOver.map { max($0, elapsedWall.addingTimeInterval(0.05)) } : nextHandOver
        var wake = [isScheduleBacklogged ? nil : scheduleWake, leases.first.map { wallClock(at: $0.expiresAt) },
                    jobLeases.nextDeadline, nags.nextDeadline]
            .compactMap { $0 }.min()
        if !inFlight.isEmpty, let liveness = nextLivenessDeadline {
            wake = min(wake ?? liveness, liveness)
        }
        // A walking cancel goes on next turn, right after the poll.
        if !bulkCancels.isEmpty { wake = min(wake ?? elapsedWall, elapsedWall) }
        return wake
    }

    /// Reads the clocks of the current call: `now` (wall clock, UTC) for due times and
    /// `monotonic` (seconds on a clock that never steps, CLOCK_MONOTONIC in a process) for
    /// durations — leases and worker liveness — so a wall-clock step neither expires every
    /// lease at once nor freezes failure detection. Without a monotonic reading (pure state
    /// tests), the wall clock serves for both.
    mutating func observeClocks(_ now: Date, monotonic: Double?) {
        elapsed = monotonic ?? now.timeIntervalSinceReferenceDate
        elapsedWall = now
    }

    /// The wall-clock instant a monotonic `deadline` corresponds to, as of the current call.
    func wallClock(at deadline: Double) -> Date { elapsedWall.addingTimeInterval(deadline - elapsed) }

    /// Whether nothing is due (or due within the dispatch lead), waiting for a worker or in
    /// flight at `now`: a good moment for work that pauses the loop (a snapshot).
    public func isQuiet(at now: Date) -> Bool {
        waitingCount == 0 && inFlight.isEmpty
            && (schedule.nextDeadline.map { $0 > now.addingTimeInterval(configuration.dispatchLead) } ?? true)
    }

    var livenessWindow: Double { configuration.heartbeatInterval * Double(configuration.heartbeatLiveness) }

    var nextLivenessDeadline: Date? {
        workers.values.filter(\.isAlive).map { $0.lastSeenElapsed + livenessWindow }.min().map(wallClock(at:))
    }

    /// Whether `worker` was heard from within the liveness window, on the monotonic timeline.
    func isAlive(_ worker: WorkerRecord) -> Bool {
        worker.isAlive && elapsed - worker.lastSeenElapsed <= livenessWindow
    }
}
