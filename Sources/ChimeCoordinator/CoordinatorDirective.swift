import ChimeCore
import ChimeSecurity
import ChimeRuntime
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// Where a control reply goes: the ROUTER envelope of the request.
public struct ClientAddress: Hashable, Sendable {
    /// The frames before the body (identity, and the empty delimiter if the client sent one).
    public var routing: [Data]
    /// The caller's tenant (its public key with CURVE; `nil` without keys): request ids are
    /// scoped by it, so another key's `requestId` is a different request.
    public var tenant: String?
    /// The recipients the caller's key is restricted to (`nil`: every recipient): reminder ids
    /// it names without a recipient name its recipients' reminders only.
    public var scope: RecipientScope?
    /// The quota the caller's key sets for its recipients, with `scope` (`nil`: the configured
    /// defaults, `limits.tenantMaxReminders` and `limits.tenantMaxReminderBytes`); without a
    /// scope, none applies.
    public var quota: TenantQuota?
    /// Creates the value from its fields (see each property for meaning and units).
    public init(routing: [Data], tenant: String? = nil, scope: RecipientScope? = nil, quota: TenantQuota? = nil) {
        self.routing = routing
        self.tenant = tenant
        self.scope = scope
        self.quota = quota
    }

    /// Whether the caller may see `recipient`'s reminders.
    func sees(_ recipient: RecipientID) -> Bool { scope?.allows(recipient) ?? true }

    /// The request log's key for `requestId` from this caller: the id itself without keys,
    /// else the tenant, a unit separator (U+001F) and the id.
    public func requestLogKey(_ requestId: String) -> String {
        tenant.map { "\($0)\u{1F}\(requestId)" } ?? requestId
    }
}

/// The outcome of a control request, before encoding (`encodedReply(requestId:)`); answers
/// to mutating requests are journaled as those bytes (`.answered`).
public enum ControlOutcome: Sendable, Hashable {
    case scheduled(ScheduleResult, warnings: [String])
    /// A page of `list`, decoded and encoded off the loop (`ListingPage.result`).
    case listed(ListingPage)
    case cancelled(CancelResult)
    case status(StatusReport)
    case workers(WorkersResult)
    case stats(StatsReport)
    case pong(PongResult)
    /// The shard map this coordinator serves under.
    case map(ShardMap)
    case deadLetters(DeadLettersResult)
    case retried(RetryResult)
    /// A dead letter deleted for good.
    case deadLetterDeleted(DeleteDeadLetterResult)
    case events(EventsResult)
    case recipient(RecipientResult)
    case badge(BadgeResult)
    case switched(SwitchResult)
    case delivered(DeliveredResult)
    case job(JobResult)
    /// The answer to a slot-move step (the coordinator's JSON for it).
    case move(MoveStepResult)
    /// A trigger operation's result (issue 41).
    case trigger(TriggerResult)
    case failed(WireError)
}

/// What `CoordinatorState` asks its service to do, in order: journal entries first
/// (appended and synced before any dispatch or reply of the same turn), then messages.
public enum CoordinatorDirective: Sendable, Hashable {
    /// Append to the journal.
    case append(JournalEntry)
    /// Send a batch to one worker (its lease has started); report a failed hand-off with
    /// `onDispatchFailed`.
    case dispatch(DispatchBatch, to: WorkerID)
    /// Answer a control request (`indirect`: an outcome is ~450 bytes, the other cases ~80).
    indirect case reply(ControlOutcome, requestId: String?, to: ClientAddress)
    /// Answer a retried request with the reply remembered for its `requestId`, byte for
    /// byte as it was first sent.
    case replyEncoded(Data, to: ClientAddress)
    /// Publish a coordinator event (badge change, finished action, hand-over) on the event stream.
    case publish(CoordinatorEvent)
}

/// An event the coordinator itself publishes.
public enum CoordinatorEvent: Sendable, Hashable {
    case badge(BadgeEvent)
    case action(ActionEvent)
    /// A slot move's end on this (the source) shard's stream.
    case handOver(HandOverEvent)

    /// `badge.<recipient>`, `action.<recipient>` or `handover`.
    public var topic: String {
        switch self {
        case .badge(let event): Topic.badge(event.recipient)
        case .action(let event): Topic.action(event.recipient)
        case .handOver: Topic.handOver
        }
    }
}

/// Tunables of the coordinator's decisions (no endpoints: those belong to the service).
///
/// The tunables that `config/chime.json` sets have no default here: they come from
/// ``ChimeConfiguration`` through ``init(from:)`` (`CoordinatorConfiguration+Chime.swift`),
/// the one place each default is written. The rest, which no file sets, carry theirs below.
public struct CoordinatorConfiguration: Sendable {
    /// The cluster's shard map and this coordinator's shard id in it (`map` answers it; a
    /// request for a recipient of another shard's slot gets `wrong_shard`). `nil`: a single
    /// shard owning every slot (the service fills it in from its own endpoints).
    public var shardMap: ShardMap?
    /// This coordinator's shard id in `shardMap`.
    public var shardID = 0
    /// Whether the map comes from a map register (`cluster.register`): the state then judges
    /// which data it serves only once it read the register (`adoptMapRecord`), not by the
    /// configured map at recovery (a shard's configured slots are those of its creation).
    public var followsMapRegister = false
    /// How long a dispatched firing may stay unacknowledged before redelivery, in seconds.
    public var leaseDuration: Double
    /// How long before its due instant a firing is handed to a worker, in seconds (0: when
    /// due). The worker delivers it from its own timer at the due instant; its lease runs from
    /// the due instant, not the hand-over.
    public var dispatchLead: Double
    /// Dispatch attempts before a firing moves to the dead-letter list.
    public var maxAttempts: Int
    /// The workers' heartbeat interval, in seconds.
    public var heartbeatInterval: Double
    /// Missed heartbeats after which a worker counts as dead.
    public var heartbeatLiveness: Int
    /// Firings per dispatch message at most.
    public var maxBatchSize: Int
    /// Reminders per `schedule` request at most.
    public var maxRemindersPerRequest: Int
    /// A restricted key's default quota: reminders its recipients hold at most (`nil`: unlimited).
    public var tenantMaxReminders: Int?
    /// A restricted key's default quota: the bytes those reminders take at most (`nil`: unlimited).
    public var tenantMaxReminderBytes: Int?
    /// The `userInfo` JSON size limit, in bytes.
    public var maximumUserInfoBytes: Int
    /// Remembered request ids, for idempotent retries (each keeps its encoded reply; see
    /// also `rememberedReplyBytes`).
    public var rememberedRequests = 1000
    /// The remembered small replies' total size at most, in bytes: the oldest are forgotten
    /// first (the newest is always kept). Replies above `largeReplyThreshold` have their own
    /// budget, `rememberedLargeReplyBytes`, so they never push a small one out.
    public var rememberedReplyBytes = 16 << 20
    /// The size above which a remembered reply is large, in bytes (64 KiB). A bulk `schedule`
    /// of 1,000 reminders answers with ~80 KB; a `schedule --file` chunk of 2,000 with ~200 KB.
    public var largeReplyThreshold = RequestLog.defaultLargeReplyThreshold
    /// The remembered large replies' total size at most, in bytes: the oldest large ones are
    /// forgotten first (the newest is always kept).
    public var rememberedLargeReplyBytes = 16 << 20
    /// How many missed occurrences one reminder may fire late under `fireAll`.
    public var fireAllCap: Int
    /// The default `misfireThreshold` (seconds) for reminders that give none; `nil`: no limit.
    public var misfireThreshold: Double?
    /// Whether scheduled start times lose their seconds, as many reminder apps do.
    public var truncateToMinute: Bool
    /// Checks a named sound (`nil`: fine, else the problem); `nil` when no sounds directory
    /// is configured. Injected I/O: the state itself reads no files.
    public var soundCheck: (@Sendable (String) -> String?)?
    /// The default cap on a recipient's armed reminders (`nil`: unlimited); a recipient's own
    /// `maxPending` wins.
    public var maxPendingPerRecipient: Int?
    /// Whether unregistered recipients get nothing, as on iOS.
    public var requireRegistration: Bool
    /// The snooze delay when an `act snooze` request gives none, in seconds.
    public var snoozeSeconds: Double
    /// How long a worker may run an action handler, in seconds; the job's lease adds 5 s.
    public var actionTimeLimit: Double
    /// Acknowledged fire events kept for `events` catch-up requests.
    public var eventRetention: Int
    /// Finished action jobs kept for `job` requests (the oldest finished are forgotten first).
    public var finishedJobRetention = 1000
    /// Worker records kept at most (alive or recently lost); a message from a new worker
    /// id beyond this is dropped, so forged heartbeats cannot grow memory.
    public var maxWorkers: Int
    /// How long a lost worker's record stays (listed with `alive: false`) after its liveness
    /// expired, in seconds.
    public var deadWorkerRetention: Double
    /// Journal entries the writer may have queued and not yet made durable before the loop
    /// stops dispatching (a slow disk then slows firing instead of growing memory).
    public var maxUndurableEntries = 65_536
    /// How many event `seq` numbers one `.seqReserved` entry reserves. Dispatch does not wait
    /// for the journal, so a block is reserved when half of the previous one is still unused:
    /// more than `maxUndurableEntries` plus what one loop turn can dispatch (the workers'
    /// total credit). A recovery resumes after the reserved block, so a seq never names two
    /// deliveries; subscribers see a gap of at most this size across a restart.
    public var eventSeqReservation: UInt64 = 1 << 20

    /// The fencing epoch stamped on every dispatch.
    public var epoch: UInt64 = 1
    /// Chime's version, shown by `status`.
    public var version = "0.1.0"
    /// The coordinator's process id, shown by `status`.
    public var pid: Int32 = 0

    /// The defaults of ``ChimeConfiguration`` (where the file's keys have theirs) and those
    /// shown on the properties the file does not set.
    public init() { self.init(from: ChimeConfiguration()) }

    /// The tunables the fold reads, as the durable state records them.
    public var durableSettings: DurableSettings {
        DurableSettings(
            maxPendingPerRecipient: maxPendingPerRecipient, requireRegistration: requireRegistration,
            eventRetention: eventRetention, rememberedRequests: rememberedRequests,
            rememberedReplyBytes: rememberedReplyBytes, largeReplyThreshold: largeReplyThreshold,
            rememberedLargeReplyBytes: rememberedLargeReplyBytes, finishedJobRetention: finishedJobRetention)
    }
}
