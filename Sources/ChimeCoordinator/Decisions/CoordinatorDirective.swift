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
    /// The answer to a slot-move step: the shard's view after it.
    case move(SlotMoveStatus)
    /// A trigger operation's result (issue 41).
    case trigger(TriggerResult)
    case failed(WireError)
}

/// What `CoordinatorState` asks its service to do, in order: journal entries first
/// (handed to the journal writer before any dispatch or reply of the same turn), then
/// messages, then the store's and the map register's work. Every reply and event leaves
/// through the service's one outbox, ordered by the journal ticket it waits for: what a turn
/// journals is durable before a reply or event of that turn leaves, unless it says it
/// depends on no entry (`replyAtOnce`).
///
/// The store's work (`serveStoreRequest`, `writeSnapshot`, `removeSegments`) and the map
/// register's (`readMapRegister`) run off the decisions, on the service's threads; their
/// results come back as inputs (`onSnapshotWritten`, `onSegmentsRemoved`, `onMapRead`, …).
public enum CoordinatorDirective: Sendable, Hashable {
    /// Append to the journal.
    case append(JournalEntry)
    /// Send a batch to one worker (its lease has started); report a failed hand-off with
    /// `onDispatchFailed`.
    case dispatch(DispatchBatch, to: WorkerID)
    /// Answer a control request once this turn's entries are durable (`indirect`: an outcome
    /// is ~450 bytes, the other cases ~80).
    indirect case reply(ControlOutcome, requestId: String?, to: ClientAddress)
    /// Answer a retried request with the reply remembered for its `requestId`, byte for
    /// byte as it was first sent, once this turn's entries are durable.
    case replyEncoded(Data, to: ClientAddress)
    /// Answer with a reply (encoded) that depends on no journal entry: a read or a refusal
    /// while the store is full, a snapshot's failure. It leaves at the next send, ahead of
    /// replies still waiting for the journal.
    case replyAtOnce(Data, to: ClientAddress)
    /// Publish a coordinator event (badge change, finished action, hand-over) on the event
    /// stream once this turn's entries are durable.
    case publish(CoordinatorEvent)
    /// Serve a store operation (`store`, `snapshot`, `compact`) once every entry submitted
    /// so far is durable: answer `store` (and, without a file store, the others) with the
    /// store's figures, refuse it `store_full` when the journal finds the disk full, or hand
    /// `snapshot` and `compact` back to wait for the next snapshot
    /// (``CoordinatorState/onSnapshotAwaited(_:from:)``).
    case serveStoreRequest(ControlRequest, from: ClientAddress)
    /// Answer a `store`, `snapshot` or `compact` request with the store's figures now: with
    /// the snapshot's duration in milliseconds, and the journal's figures after a compaction
    /// removed its segments (the service's own otherwise). Depends on no journal entry.
    case reportStore(requestId: String?, to: ClientAddress, snapshotMilliseconds: Double?, journal: JournalFigures?)
    /// Start writing a snapshot of the state as it is now, covering every entry submitted so
    /// far, on the snapshot thread; report how it went with `onSnapshotWritten`.
    case writeSnapshot
    /// Remove the journal segments whose entries are all at or below this sequence number
    /// (on the journal writer's thread); for a compaction, report the removal's number with
    /// `onSegmentRemovalQueued` and its outcome with `onSegmentsRemoved`.
    case removeSegments(through: UInt64, isCompaction: Bool)
    /// Ask the map register's reader for a read that starts now (a fresh read a `move` step
    /// waits for); its records come back with `onMapRead`.
    case readMapRegister
}

/// The journal's size after a compaction removed segments: what its `compact` reply reports.
public struct JournalFigures: Sendable, Hashable {
    /// The journal's bytes on disk.
    public var bytes: Int
    /// Its segment files.
    public var segments: Int

    /// Creates the value from its fields (see each property for meaning and units).
    public init(bytes: Int, segments: Int) {
        self.bytes = bytes
        self.segments = segments
    }
}

/// An event the coordinator itself publishes.
public enum CoordinatorEvent: Sendable, Hashable {
    case badge(BadgeEvent)
    case action(ActionEvent)
    /// A slot move's end on this (the source) shard's stream.
    case handOver(HandOverEvent)
    /// A destination a provider called gone was removed from its recipient.
    case destinationRemoved(DestinationRemovedEvent)
    /// A recipient's scheduled summary went out (issue 40).
    case summary(SummaryEvent)

    /// `badge.<recipient>`, `action.<recipient>`, `handover` or `summary.<recipient>`.
    public var topic: String {
        switch self {
        case .badge(let event): Topic.badge(event.recipient)
        case .action(let event): Topic.action(event.recipient)
        case .handOver: Topic.handOver
        case .destinationRemoved(let event): Topic.destination(event.recipient)
        case .summary(let event): Topic.summary(event.recipient)
        }
    }
}
