import ChimeCore
import ChimeStore
import ChimeWire
import Foundation

/// One fact in the coordinator's journal, in past tense. The coordinator's state is the fold
/// of these entries (`CoordinatorState.apply(_:)`), live and in recovery alike.
public enum JournalEntry: Codable, Hashable, Sendable {
    /// A reminder was scheduled (or replaced, same id) at the given instant (UTC).
    ///
    /// The large payloads (`scheduled`, `registered`, `acted`) are `indirect`, so an entry
    /// is ~80 bytes instead of ~500 and a burst's per-firing entries move cheaply.
    indirect case scheduled(Reminder, at: Date)
    /// These reminders were cancelled.
    case cancelled([ReminderKey], at: Date)
    /// `reminder`'s occurrence due at `dueAt` (its fire instant, UTC) was taken from the
    /// schedule and made a firing (id `FiringID(reminder, dueAt:)`, attempt 1) that waits for a
    /// worker; the reminder moved on to `next` (`nil`: none left). `late`: a misfire, fired
    /// after the coordinator was down; `missed`: for a late firing, how many missed
    /// occurrences it stands for (the `fireOnce` policy coalesces them into the newest, whose
    /// instant is `dueAt`), 0 for a firing on time.
    case fired(ReminderKey, dueAt: Date, next: Occurrence?, late: Bool, missed: Int = 0, at: Date)
    /// A missed occurrence was skipped under the reminder's misfire policy or threshold; the
    /// reminder moved on to `next`.
    case skipped(ReminderKey, dueAt: Date, next: Occurrence?, at: Date)
    /// A nag re-alert armed after a delivery came due and waits for a worker.
    case nagFired(FiringID, at: Date)
    /// An unsettled firing's lease expired (or its worker was lost): it goes out again with
    /// the next attempt number.
    case leaseExpired(FiringID, at: Date)
    /// Event sequence numbers up to `through` may be handed out: a recovery resumes after it,
    /// so a seq never names two deliveries even when dispatches were not journaled.
    case seqReserved(through: UInt64)
    /// `worker` acknowledged delivery of the firing dispatched with event sequence `seq`, at
    /// `firedAt` (the worker's clock, UTC).
    case acknowledged(FiringID, seq: UInt64, worker: WorkerID, firedAt: Date)
    /// A firing exhausted its attempts and moved to the dead-letter list.
    case deadLettered(FiringID, at: Date)
    /// A firing's delivery destinations failed (refused, or retried until the worker gave up):
    /// it moved to the dead-letter list with `failure` (the cause, every destination's outcome
    /// and attempts) instead of being acknowledged.
    indirect case deliveryFailed(FiringID, DeliveryFailure, at: Date)
    /// An operator sent a dead-lettered firing back for delivery.
    case retried(FiringID, at: Date)
    /// A recipient registered (or re-registered, replacing) its settings and categories.
    indirect case registered(Recipient, at: Date)
    /// `chime badge`: the recipient's badge was set (N <= 0 also cleared its delivered list).
    case badgeSet(RecipientID, Int, at: Date)
    /// A delivered firing was handled (acknowledged by the user, or an action), by `action`.
    case handled(FiringID, action: String?, at: Date)
    /// A delivered firing was removed from the recipient's delivered list without handling it.
    case deliveredRemoved(RecipientID, FiringID, at: Date)
    /// Reminders were switched on (`true`) or off.
    case switched([ReminderKey], enabled: Bool, at: Date)
    /// An occurrence was not delivered: the recipient's settings allow none of its parts.
    /// The reminder moved on to `next`.
    case suppressed(ReminderKey, dueAt: Date, next: Occurrence?, reason: String, at: Date)
    /// An action job was accepted for a delivered firing.
    indirect case acted(ActionJob, at: Date)
    /// An action job ended (completed or failed).
    case actionFinished(ActionOutcome, at: Date)
    /// An action job's lease expired before its worker reported: it goes out again with the
    /// next attempt number.
    case jobLeaseExpired(jobId: String, at: Date)
    /// A mutating request with this `requestId` was answered with `reply` (the coordinator's
    /// encoded outcome), so a retry after a crash or takeover gets the same answer and is not
    /// applied twice. `recipient`: the one recipient the request was about, when it named one
    /// (its reply moves with that recipient to another shard).
    case answered(requestId: String, reply: Data, at: Date, recipient: RecipientID? = nil)
    /// A coordinator took the store at `at` (UTC) and fences its dispatches with `epoch`;
    /// the next start's epoch is above every epoch the journal, the snapshot and the `EPOCH`
    /// file record, so a lost `EPOCH` file cannot make an epoch repeat. `settings`: the
    /// tunables the fold reads from here on (`nil` in entries of earlier versions).
    case started(epoch: UInt64, at: Date, settings: DurableSettings? = nil)
    /// A step of a slot move this shard takes part in (see ``SlotMoveEntry``): folded into the
    /// move ledger of the durable state, and where a move hands data over, into the rest of it.
    indirect case slotMove(SlotMoveEntry)
    /// An operator deleted a dead-lettered firing for good: it never fires again.
    case deadLetterDeleted(FiringID, at: Date)
    /// A fact about the triggers beyond the clock (see ``TriggerEntry``).
    indirect case trigger(TriggerEntry)
    /// A fact about what a recipient lets through, and when (see ``AttentionEntry``): a
    /// firing held in quiet hours, or released at their end.
    indirect case attention(AttentionEntry)
}

extension JournalEntry {
    /// Whether the entry names a reminder or a firing without its recipient, as entries of
    /// earlier versions did (the coordinator resolves such names before folding the entry).
    public var hasLegacyIdentities: Bool {
        switch self {
        case .cancelled(let keys, _), .switched(let keys, _, _): keys.contains(where: \.isLegacy)
        case .fired(let key, _, _, _, _, _), .skipped(let key, _, _, _), .suppressed(let key, _, _, _, _): key.isLegacy
        case .nagFired(let id, _), .leaseExpired(let id, _), .acknowledged(let id, _, _, _), .deadLettered(let id, _),
            .retried(let id, _), .handled(let id, _, _), .deliveredRemoved(_, let id, _):
            id.isLegacy
        case .deadLetterDeleted(let id, _), .deliveryFailed(let id, _, _): id.isLegacy
        case .scheduled, .acted, .seqReserved, .registered, .badgeSet, .actionFinished, .jobLeaseExpired, .answered, .started,
            .slotMove, .trigger, .attention:
            false
        }
    }
}

/// An append-only log of `JournalEntry` values.
///
/// `append` may buffer; `sync` makes everything appended so far durable under the
/// journal's fsync policy. The coordinator appends all entries of one loop turn, hands the
/// turn's dispatches to workers, syncs once (group commit), then replies.
public protocol Journal {
    /// Appends entries in order.
    /// - Throws: an I/O error when the entries cannot be written.
    mutating func append(_ entries: [JournalEntry]) throws
    /// Makes every appended entry durable.
    /// - Throws: an I/O error when the journal cannot be flushed.
    mutating func sync() throws
}

extension FileJournal: Journal {
    /// Encodes `entries` with the shared ``JournalEntryCodec`` (see `append(_:using:)`).
    /// - Throws: as `append(_:using:)`.
    public func append(_ entries: [JournalEntry]) throws { try append(entries, using: JournalEntryCodec.shared) }
}

extension FileStore: Journal {
    /// Encodes `entries` with the shared ``JournalEntryCodec`` (see `append(_:using:)`).
    /// - Throws: as `append(_:using:)`.
    public func append(_ entries: [JournalEntry]) throws { try append(entries, using: JournalEntryCodec.shared) }
}

/// A journal that keeps entries in memory: for tests and for `--store none`.
public struct InMemoryJournal: Journal, Sendable {
    /// Every entry appended, in order.
    public private(set) var entries: [JournalEntry] = []
    /// How many times `sync` was called.
    public private(set) var syncCount = 0
    /// Whether to keep entries (false: count them only, so memory does not grow).
    public var keepsEntries: Bool
    /// How many entries were appended.
    public private(set) var appendedCount = 0

    /// An empty journal; `keepsEntries: false` only counts what is appended.
    public init(keepsEntries: Bool = true) { self.keepsEntries = keepsEntries }

    /// Appends entries in order (or only counts them).
    public mutating func append(_ entries: [JournalEntry]) {
        appendedCount += entries.count
        if keepsEntries { self.entries.append(contentsOf: entries) }
    }

    /// Counts the call; memory needs no flushing.
    public mutating func sync() { syncCount += 1 }
}
