import ChimeCore
import ChimeJournal
import ChimeRuntime
import ChimeWire
import Foundation

/// Tunables of the coordinator's decisions: numbers and switches only. No endpoints (those
/// are the service's), no file reads (the shell checks named sounds, `SoundLibrary`) and no
/// facts of the running process (its epoch, version and pid are the state's
/// ``CoordinatorIdentity``).
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
    /// Categories one `register` request may give its recipient at most.
    public var maxCategoriesPerRecipient: Int
    /// The most bytes one registration is stored in (JSON); a register that grows one past it
    /// is refused `too_large`.
    public var maxRegistrationBytes: Int
    /// Journal records between automatic snapshots at least (and at least half as many as
    /// there are reminders).
    public var snapshotEveryRecords: Int
    /// A restricted key's default quota: reminders its recipients hold at most (`nil`: unlimited).
    public var tenantMaxReminders: Int?
    /// A restricted key's default quota: the bytes those reminders and its recipients'
    /// registrations take at most (`nil`: unlimited).
    public var tenantMaxReminderBytes: Int?
    /// A restricted key's quota of delivery destinations over all its recipients (`nil`: unlimited).
    public var tenantMaxDestinations: Int? = 10_000
    /// The `userInfo` JSON size limit, in bytes.
    public var maximumUserInfoBytes: Int
    /// The string tables localizable keys resolve in when a firing is dispatched (read by
    /// the shell from `notifications.stringsDirectory`); none by default.
    public var strings = StringTables()
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
