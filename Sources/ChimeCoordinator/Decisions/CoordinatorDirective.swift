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
