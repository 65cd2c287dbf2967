import ChimeCore
import ChimeRuntime
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
    /// One reminder with its place in the schedule, kept small: the reminder itself is held
    /// in its binary form (`Reminder.binaryEncoded()`, about 150 bytes for a one-shot with a
    /// 100-byte body instead of ~1 KB of structs and strings) and decoded when a firing,
    /// listing or change needs it. The recurrence of a repeating reminder is cached in
    /// `CoordinatorState.recurrences`; a one-shot's is rebuilt on demand.
    struct Entry: Sendable {
        /// `Reminder.binaryEncoded()` of the reminder.
        private(set) var bytes: [UInt8]
        /// The reminder's recipient, decoded once: arming, caps and acknowledgements ask.
        private(set) var recipient: RecipientID
        // Declared before the one-byte fields, which then share its padding: 72 bytes a value
        // instead of 80 (2 MB of the table's 25 MB at 100,000 reminders).
        var next: Occurrence?
        /// Whether its trigger repeats (`Trigger.isRepeating`), decoded once.
        private(set) var isRepeating: Bool
        /// Whether it has a nag policy, decoded once (every acknowledgement asks).
        private(set) var hasNag: Bool
        /// Whether its trigger has a remind-before offset (rare: only then does a fire
        /// instant need the reminder decoded).
        private(set) var hasOffset: Bool
        var state: ReminderState
        var deliveredCount = 0
        var lastFiredAt: Date?

        init(reminder: Reminder, next: Occurrence?, state: ReminderState, deliveredCount: Int = 0, lastFiredAt: Date? = nil) {
            bytes = reminder.binaryEncoded()
            recipient = reminder.recipient
            isRepeating = reminder.trigger.isRepeating
            hasNag = reminder.nag != nil
            hasOffset = reminder.trigger.offset != nil
            self.next = next
            self.state = state
            self.deliveredCount = deliveredCount
            self.lastFiredAt = lastFiredAt
        }

        /// Decodes an entry's bytes: the coordinator's own encoding, or a snapshot's that passed
        /// the file's CRC-32C and `binarySummary`, so a failure is a bug in this code (the one
        /// place that says so, for entries and for listing pages decoded off the loop).
        static func decodeStored(_ bytes: ArraySlice<UInt8>) -> Reminder {
            do {
                return try Reminder(binary: bytes)
            } catch {
                preconditionFailure("a reminder the coordinator encoded does not decode: \(error)")
            }
        }

        /// Takes bytes a snapshot holds as they are (checked: they must decode).
        /// - Throws: `ReminderBinaryError` when they do not.
        init(bytes: [UInt8], next: Occurrence?, state: ReminderState, deliveredCount: Int, lastFiredAt: Date?)
            throws(ReminderBinaryError)
        {
            let summary = try Reminder.binarySummary(in: bytes[...])
            recipient = summary.recipient
            isRepeating = summary.isRepeating
            hasNag = summary.hasNag
            hasOffset = summary.hasOffset
            self.bytes = bytes
            self.next = next
            self.state = state
            self.deliveredCount = deliveredCount
            self.lastFiredAt = lastFiredAt
        }

        /// The reminder, decoded from `bytes`; setting it re-encodes.
        var reminder: Reminder {
            get { Self.decodeStored(bytes[...]) }
            set {
                bytes = newValue.binaryEncoded()
                recipient = newValue.recipient
                isRepeating = newValue.trigger.isRepeating
                hasNag = newValue.nag != nil
                hasOffset = newValue.trigger.offset != nil
            }
        }
    }

    /// When `entry`'s occurrence fires: its instant less the trigger's remind-before offset
    /// (`Trigger.fireInstant(eventInstant:)`; the reminder is decoded only when it has one).
    static func fireInstant(of entry: Entry, _ occurrence: Occurrence) -> Date {
        entry.hasOffset ? entry.reminder.trigger.fireInstant(eventInstant: occurrence.instant) : occurrence.instant
    }

    /// A firing as the unsettled map and the in-flight map share it: a reference, so those
    /// hash tables move 8 bytes instead of a whole `Firing` (~250 bytes) when they insert or
    /// delete. Immutable: a changed firing is a new box, so states stay values.
    final class SharedFiring: Sendable {
        let firing: Firing
        init(_ firing: Firing) { self.firing = firing }
    }

    struct InFlight: Sendable {
        let shared: SharedFiring
        /// The event seq of this delivery attempt.
        var seq: UInt64
        var worker: WorkerID
        /// When the lease runs out, on the monotonic timeline (`elapsed`), in seconds.
        var leaseExpiresAt: Double
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
        var acknowledged = 0
        var delivered = 0
        /// When this worker last got a batch (a counter), so ties rotate between workers.
        var lastAssignment = 0
    }

    struct JobRecord: Sendable {
        var job: ActionJob
        var worker: WorkerID?
        var attempts = 0
        var outcome: ActionOutcome?
    }

    /// The tunables this state decides with.
    public internal(set) var configuration: CoordinatorConfiguration
    var startedAt: Date
    var entries = EntryTable()
    /// The ids of `entries` in order, for `list` pages (kept by `place` and `removeEntry`, the
    /// only places that add or remove an entry, and rebuilt by `load`).
    var reminderIndex = SortedKeySet<ReminderID>()
    /// The occurrence sequence of every repeating reminder in `entries` (one-shots rebuild
    /// theirs on demand), with recipient zones resolved.
    var recurrences: [ReminderID: Recurrence] = [:]
    var schedule = TimerQueue<ReminderID>(shardCount: EntryTable.shardCount, shardHash: { $0.shardHash })
    /// Unsettled firings not yet assigned to a worker, oldest first (the boxes `unsettled`
    /// holds).
    var waiting = RingQueue<SharedFiring>()
    var inFlight: [FiringID: InFlight] = [:]
    /// Lease expiries in dispatch order. Every lease lasts `leaseDuration`, so expiries only
    /// grow (a clock stepped back merely delays them): a FIFO instead of a heap, with no
    /// hashing per firing. An entry is stale once its firing was acknowledged, requeued or
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
    /// Firings made (`.fired`, `.nagFired`, `.retried`) and not yet acknowledged or
    /// dead-lettered, with their attempt numbers: durable. Which worker holds one, its lease
    /// and its `seq` are volatile (`inFlight`).
    var unsettled: [FiringID: SharedFiring] = [:]
    var deadLetters: [FiringID: Firing] = [:]
    /// The keys of `deadLetters` in listing order (kept by the fold of `.deadLettered` and
    /// `.retried`, rebuilt by `load`).
    var deadLetterIndex = SortedKeySet<DeadLetterKey>()
    /// Encoded replies of recent mutating requests, for idempotent retries.
    var requestLog: RequestLog
    /// When recovery finished: occurrences due before it are misfires.
    var recoveredAt: Date?
    /// Whether the last `onTick` left due reminders in `schedule` because the waiting line
    /// already held what the workers' free credit can take; `nextWake` then waits for credit
    /// (a worker message) instead of the past due time.
    var isScheduleBacklogged = false
    /// Late firings made per reminder since it last fired on time, for `fireAllCap`.
    var lateFirings: [ReminderID: Int] = [:]
    /// Journal or snapshot records that no longer validate and were skipped.
    public internal(set) var skippedEntries = 0
    /// Registered recipients (settings, categories, token).
    var recipients: [RecipientID: Recipient] = [:]
    /// Badge numbers and delivered lists, for every recipient that has one.
    var ledgers: [RecipientID: BadgeLedger] = [:]
    var badgeEventSeq: UInt64 = 0
    /// Action jobs by id, with their outcome once finished.
    var jobs: [String: JobRecord] = [:]
    var waitingJobs: [String] = []
    var jobLeases = TimerQueue<String>()
    var suppressedCount = 0
    /// Per-recipient caps on armed reminders, for recipients that have one.
    var caps: [RecipientID: PendingCap<ReminderID>] = [:]
    /// Nag re-alerts armed after delivery, by nag firing id.
    var nagFirings: [FiringID: Firing] = [:]
    var nags = TimerQueue<FiringID>()
    /// The `seq` the next dispatched firing gets (volatile: a recovery resumes after
    /// `eventSeqReserved`).
    var nextEventSeq: UInt64 = 1
    /// The highest event `seq` reserved in the journal (`.seqReserved`).
    var eventSeqReserved: UInt64 = 0
    /// The highest coordinator epoch the journal (`.started`) and the snapshot recorded: the
    /// next start's epoch is above it.
    public internal(set) var highestRecordedEpoch: UInt64 = 0
    /// Acknowledged fire events kept for catch-up.
    var eventLog: EventLog
    var generatedIDs = 0
    var assignmentCounter = 0
    var dispatchLateness = LatenessRecorder()
    var fireLateness = LatenessRecorder()
    var dispatchedCount = 0
    var redeliveredCount = 0
    var acknowledgedCount = 0
    /// Firings dead-lettered since start (`deadLetters` holds those not yet retried).
    var deadLetteredCount = 0
    /// `firedAt − dueAt` of acknowledged firings, in seconds, for `/metrics`.
    var fireLatenessSeconds = Histogram(upperBounds: Histogram.latencySecondsBounds)
    /// Counters once a second, for the rates of `stats`.
    var throughput = ThroughputWindow()
    /// Worker messages dropped because `maxWorkers` records were kept and none could go.
    public internal(set) var refusedWorkerMessages = 0
    /// Worker joins and losses for the service's log (`takeNotices()`).
    var notices: [CoordinatorNotice] = []
    /// Cancels by filter still walking, oldest first (volatile: a crash loses the walk; the
    /// request was not answered, so its client retries).
    var bulkCancels: [BulkCancel] = []

    /// Makes an empty coordinator state.
    /// - Parameters:
    ///   - configuration: the tunables.
    ///   - startedAt: when the coordinator started (UTC), for `status`.
    public init(configuration: CoordinatorConfiguration = CoordinatorConfiguration(), startedAt: Date) {
        self.configuration = configuration
        self.startedAt = startedAt
        requestLog = RequestLog(
            capacity: configuration.rememberedRequests, byteLimit: configuration.rememberedReplyBytes,
            largeReplyThreshold: configuration.largeReplyThreshold, largeByteLimit: configuration.rememberedLargeReplyBytes)
        eventLog = EventLog(capacity: configuration.eventRetention)
    }

    /// How many reminders the state holds, in any state.
    public var reminderCount: Int { entries.count }

    /// How many firings are assigned to a worker and unacknowledged.
    public var inFlightCount: Int { inFlight.count }

    /// How many due firings wait for a worker with free capacity.
    public var waitingCount: Int { waiting.count }

    /// The earliest instant at which `onTick` has something to do (UTC), if any: the next
    /// occurrence, lease expiry or worker liveness deadline.
    public var nextWake: Date? {
        var wake = [isScheduleBacklogged ? nil : schedule.nextDeadline, leases.first.map { wallClock(at: $0.expiresAt) },
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

    /// Whether nothing is due, waiting for a worker or in flight at `now`: a good moment for
    /// work that pauses the loop (a snapshot).
    public func isQuiet(at now: Date) -> Bool {
        waitingCount == 0 && inFlight.isEmpty && (schedule.nextDeadline.map { $0 > now } ?? true)
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
