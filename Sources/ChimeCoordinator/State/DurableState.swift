import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// The coordinator's durable state as one value: everything a recovery must restore, and
/// nothing it can rebuild (the waiting line, leases, workers, metrics live beside it in
/// `CoordinatorState`).
///
/// Its parts are `Equatable` values of their own: ``Schedule`` (reminders, their order, the
/// timer, caps and late counts), ``Deliveries`` (unsettled firings, dead letters, nags, the
/// event log and the reserved seqs), ``Recipients`` (registrations, badge ledgers, the badge
/// event seq), ``ActionJobs``, the ``RequestLog`` and the ``SlotMoveLedger`` of slot moves, with the ``DurableSettings`` the fold
/// reads and the highest epoch recorded.
///
/// One interpreter: only ``apply(_:hints:)`` (the fold of one journal entry) changes it, live
/// and in recovery alike; a snapshot is this value encoded (``encodeSnapshot(takenAt:into:)``)
/// and loading one is decoding it (``init(snapshot:)``). So a state rebuilt from any snapshot
/// and the journal after it equals, with `==`, the live state at the same entry
/// (`CrashEquivalenceTests`). Every part's `==` is synthesized: what a part derives to read
/// fast (the recurrence cache, the held-ahead index, state counts, tenant usage, arrival
/// numbers) is marked ``Derived`` and left out.
public struct DurableState: Sendable, Equatable {
    /// The tunables the fold reads (recorded by each `started` entry).
    public internal(set) var settings: DurableSettings
    /// The highest coordinator epoch recorded (`started` entries, snapshots): the next start's
    /// epoch is above it.
    public internal(set) var highestRecordedEpoch: UInt64 = 0
    var schedule = Schedule()
    var deliveries: Deliveries
    var recipients = Recipients()
    var actionJobs = ActionJobs()
    var requestLog: RequestLog
    /// The slot moves this shard takes part in (the fold of its `.slotMove` entries).
    public internal(set) var moves = SlotMoveLedger()
    /// The triggers beyond the clock: remaining counts, notes, backfilled ranges (issue 41).
    var triggers = TriggerState()

    /// An empty state folding with `settings`.
    public init(settings: DurableSettings) {
        self.settings = settings
        deliveries = Deliveries(eventRetention: settings.eventRetention)
        requestLog = Self.makeRequestLog(settings)
    }

    static func makeRequestLog(_ settings: DurableSettings) -> RequestLog {
        RequestLog(
            capacity: settings.rememberedRequests, byteLimit: settings.rememberedReplyBytes,
            largeReplyThreshold: settings.largeReplyThreshold, largeByteLimit: settings.rememberedLargeReplyBytes)
    }

    /// How many reminders it holds, in any state.
    public var reminderCount: Int { schedule.entries.count }

    /// How many firings are made and not settled.
    public var unsettledCount: Int { deliveries.unsettled.count }

    // MARK: Reading (shared by the fold and the decisions)

    /// The cap on `recipient`'s armed reminders: its own `maxPending`, else the default;
    /// `nil`: none.
    func pendingLimit(for recipient: RecipientID) -> Int? {
        // Most clusters register no recipients; skip hashing the id then (loading a million).
        guard !recipients.registered.isEmpty else { return settings.maxPendingPerRecipient }
        return recipients.registered[recipient]?.maxPending ?? settings.maxPendingPerRecipient
    }

    /// What is delivered of `content` to `recipient`, or why nothing is.
    func deliveryPlan(_ content: Content, for recipient: RecipientID) -> DeliveryPlan {
        // Most clusters register no recipients: skip hashing the id then (every firing asks).
        let registration = recipients.registered.isEmpty ? nil : recipients.registered[recipient]
        return DeliveryPlan.make(
            for: content, settings: registration?.settings, grants: registration?.grants ?? [],
            optedOutCategories: registration?.optedOutCategories ?? [], requireRegistration: settings.requireRegistration)
    }

    /// The `timeZone` value that means "the recipient's zone".
    static let recipientZone = "recipient"

    /// `reminder` with `"recipient"` replaced by its recipient's registered zone (UTC until it
    /// registers one).
    func resolvingRecipientZone(_ reminder: Reminder) -> Reminder {
        guard case .wallClock(let local, Self.recipientZone) = reminder.trigger.start else { return reminder }
        var resolved = reminder
        resolved.trigger.start = .wallClock(local, zoneIdentifier: recipients.registered[reminder.recipient]?.zone ?? "UTC")
        return resolved
    }

    /// Validates a reminder (with its recipient's zone) and builds its occurrences.
    /// - Throws: `ValidationError` naming the first offending field.
    func validate(_ reminder: Reminder, maximumUserInfoBytes: Int) throws(ValidationError) -> Recurrence {
        let resolved = resolvingRecipientZone(reminder)
        return beyondTheClock(try resolved.validate(maximumUserInfoBytes: maximumUserInfoBytes), of: resolved)
    }

    /// The occurrence sequence of `reminder`: cached for a repeating one, rebuilt for a
    /// one-shot; `nil` when it no longer builds (its zone left tzdata).
    func recurrence(of reminder: Reminder) -> Recurrence? {
        if let cached = schedule.recurrences[reminder.key] { return cached }
        let resolved = resolvingRecipientZone(reminder)
        return (try? resolved.trigger.makeRecurrence()).map { beyondTheClock($0, of: resolved) }
    }

    /// The first event whose firing is at or after `instant`.
    func firstFiring(of reminder: Reminder, in recurrence: Recurrence, onOrAfter instant: Date) -> Occurrence? {
        reminder.trigger.firstEvent(firingOnOrAfter: instant, in: recurrence, of: reminder.key)
    }

    /// The recipient a firing id belongs to: the one it names, else (a legacy id) the one it
    /// resolves to.
    func recipient(of firingId: FiringID) -> RecipientID? {
        firingId.isLegacy ? resolve(firingId)?.recipient : firingId.recipient
    }

    /// The firing of `entry`'s occurrence due at `dueAt`, with what the recipient's settings
    /// let through (all of it when they let nothing through: the decision was `.fired`). The
    /// one place a firing is built, for the live fold and a replay alike.
    func makeFiring(of entry: ReminderEntry, reminder: Reminder, dueAt: Date, late: Bool, missed: Int) -> Firing {
        let trigger = reminder.trigger
        // The coalesced newest of several missed occurrences is not `entry.next`.
        let event = entry.next.flatMap { entry.fireInstant(of: $0) == dueAt ? $0.instant : nil }
            ?? trigger.eventInstant(fireInstant: dueAt, of: reminder.key, in: trigger.spread == nil ? nil : recurrence(of: reminder))
        return Firing(
            reminderId: reminder.id, recipient: reminder.recipient, dueAt: dueAt,
            content: deliveryPlan(reminder.content, for: reminder.recipient).deliveredContent ?? reminder.content,
            late: late, missed: late ? missed : nil, eventAt: trigger.offset == nil ? nil : event)
    }
}
