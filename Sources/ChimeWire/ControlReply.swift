import ChimeCore
import Foundation

/// A reply on the control socket: `{"ok": true, "requestId": "...", "result": {...}}` or
/// `{"ok": false, "requestId": "...", "error": {"code", "message", "field"}}`.
public struct ControlReply<Result: Codable & Sendable>: Codable, Sendable {
    /// Whether the request succeeded.
    public var ok: Bool
    /// The request's `requestId`, echoed.
    public var requestId: String?
    /// The result, when `ok`.
    public var result: Result?
    /// The error, when not `ok`.
    public var error: WireError?
    /// Non-fatal remarks (a one-shot in the past that fires at once, a substituted sound).
    public var warnings: [String]?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(requestId: String?, result: Result, warnings: [String]? = nil) {
        self.ok = true
        self.requestId = requestId
        self.result = result
        self.warnings = warnings
    }

    /// Creates the value from its fields (see each property for meaning and units).
    public init(requestId: String?, error: WireError) {
        self.ok = false
        self.requestId = requestId
        self.error = error
    }
}

/// A reply whose result type the receiver does not need (errors, acknowledgements).
public struct EmptyResult: Codable, Hashable, Sendable {
    /// The defaults shown on each property.
    public init() {}
}

/// The result of `schedule`: one item per reminder, in request order.
public struct ScheduleResult: Codable, Hashable, Sendable {
    /// One scheduled reminder.
    public struct Item: Codable, Hashable, Sendable {
        /// The reminder's id (generated when the request had none).
        public var id: ReminderID
        /// Whether an existing reminder with this id was replaced.
        public var replaced: Bool
        /// The reminder's state after scheduling.
        public var state: ReminderState
        /// The next occurrence (UTC), when one remains.
        public var nextFireAt: Date?

        /// Creates the value from its fields (see each property for meaning and units).
        public init(id: ReminderID, replaced: Bool, state: ReminderState, nextFireAt: Date?) {
            self.id = id
            self.replaced = replaced
            self.state = state
            self.nextFireAt = nextFireAt
        }
    }

    /// One item per reminder, in request order.
    public var scheduled: [Item]
    /// Creates the value from its fields (see each property for meaning and units).
    public init(scheduled: [Item]) { self.scheduled = scheduled }
}

/// One reminder as `list` shows it: the record plus its schedule.
public struct ReminderListing: Codable, Hashable, Sendable {
    /// The reminder as scheduled.
    public var reminder: Reminder
    /// Where the reminder is in its life.
    public var state: ReminderState
    /// The next occurrence (UTC), when one remains.
    public var nextFireAt: Date?
    /// How many occurrences have been delivered (acknowledged by a worker).
    public var deliveredCount: Int
    /// When the last occurrence was delivered (UTC).
    public var lastFiredAt: Date?
    /// For a pending reminder: whether it is armed, or waits for a slot under its recipient's
    /// `maxPending` cap.
    public var armed: Bool?
    /// Why a reminder ended without its occurrence being delivered: `"skipped: misfire"` for
    /// a one-shot missed while no coordinator ran and dropped by its misfire policy or
    /// threshold. Absent otherwise.
    public var reason: String?
    /// The occurrences it has left, when an operator set a count (`remaining`).
    public var remaining: Int?
    /// Why an operator switched it off (`disable --note`), until it is switched on again.
    public var note: String?
    /// Its firings held in the recipient's quiet hours, by due instant; absent when none.
    public var held: [HeldFiringListing]?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        reminder: Reminder, state: ReminderState, nextFireAt: Date?, deliveredCount: Int, lastFiredAt: Date?,
        armed: Bool? = nil, reason: String? = nil, remaining: Int? = nil, note: String? = nil,
        held: [HeldFiringListing]? = nil
    ) {
        self.reminder = reminder
        self.state = state
        self.nextFireAt = nextFireAt
        self.deliveredCount = deliveredCount
        self.lastFiredAt = lastFiredAt
        self.armed = armed
        self.reason = reason
        self.remaining = remaining
        self.note = note
        self.held = held
    }

    /// `reason` of a one-shot that a misfire skip finished.
    public static let skippedByMisfire = "skipped: misfire"
}

/// A firing held by its recipient's quiet hours, summary or throttle, as `list` shows it:
/// `{"firingId", "until", "reason"?}`.
public struct HeldFiringListing: Codable, Hashable, Sendable {
    /// The held firing's id (it keeps it when released).
    public var firingId: FiringID
    /// When it is released (UTC): the end of its quiet window, its summary time or its
    /// throttle slot.
    public var until: Date
    /// Why it is held, as the coordinator decided when it came due: `"quiet hours"`,
    /// `"summary"`, `"quiet hours, then summary"` or `"throttle"`; absent for a hold journaled
    /// before reasons were recorded.
    public var reason: HoldReason?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(firingId: FiringID, until: Date, reason: HoldReason? = nil) {
        self.firingId = firingId
        self.until = until
        self.reason = reason
    }
}

/// The result of `list`: one page of reminders, in reminder-id order.
public struct ListResult: Codable, Hashable, Sendable {
    /// The reminders of this page, in reminder-id order.
    public var reminders: [ReminderListing]
    /// How many matched in all: given only when this page holds every match (the request
    /// had no `cursor` and the reply has no `nextCursor`); counting past one page would cost
    /// a scan of every reminder.
    public var total: Int?
    /// Where the next page starts (pass it as `cursor`); absent on the last page.
    public var nextCursor: String?
    /// Creates the value from its fields (see each property for meaning and units).
    public init(reminders: [ReminderListing], total: Int?, nextCursor: String? = nil) {
        self.reminders = reminders
        self.total = total
        self.nextCursor = nextCursor
    }
}

/// The result of `cancel`: the ids removed, sorted.
public struct CancelResult: Codable, Hashable, Sendable {
    /// The ids removed, sorted.
    public var cancelled: [ReminderID]
    /// Creates the value from its fields (see each property for meaning and units).
    public init(cancelled: [ReminderID]) { self.cancelled = cancelled }
}

/// The result of `ping`.
public struct PongResult: Codable, Hashable, Sendable {
    /// The coordinator's clock (UTC).
    public var now: Date
    /// Creates the value from its fields (see each property for meaning and units).
    public init(now: Date) { self.now = now }
}

/// The result of `deadLetters`: one page of firings that exhausted their attempts, oldest
/// due first (by due millisecond, then firing id).
public struct DeadLettersResult: Codable, Hashable, Sendable {
    /// The firings, oldest due first.
    public var firings: [Firing]
    /// Where the next page starts (pass it as `cursor`); absent on the last page.
    public var nextCursor: String?
    /// Why the listed firings whose destinations failed were dead-lettered, by firing id
    /// (``DeliveryFailure``: the cause, and every destination's outcome and attempts); absent
    /// when no listed firing has one (those exhausted their dispatch attempts).
    public var failures: [String: DeliveryFailure]?
    /// Creates the value from its fields (see each property for meaning and units).
    public init(firings: [Firing], nextCursor: String? = nil, failures: [String: DeliveryFailure]? = nil) {
        self.firings = firings
        self.nextCursor = nextCursor
        self.failures = failures
    }
}

/// The result of `retry`: the firing now waiting for a worker again.
public struct RetryResult: Codable, Hashable, Sendable {
    /// The firing this is about.
    public var firingId: FiringID
    /// Creates the value from its fields (see each property for meaning and units).
    public init(firingId: FiringID) { self.firingId = firingId }
}

/// The result of `deleteDeadLetter`: the dead-lettered firing deleted for good.
public struct DeleteDeadLetterResult: Codable, Hashable, Sendable {
    /// The firing deleted.
    public var firingId: FiringID
    /// Whether it was deleted (always `true`: an unknown firing is `not_found`).
    public var deleted: Bool
    /// Creates the value from its fields (see each property for meaning and units).
    public init(firingId: FiringID, deleted: Bool = true) {
        self.firingId = firingId
        self.deleted = deleted
    }
}

/// The result of `events`: retained fire events after a sequence number, in `seq` order.
public struct EventsResult: Codable, Hashable, Sendable {
    /// The events with `seq > after` that are retained and acknowledged.
    public var events: [FireEvent]
    /// Every event with `seq <= through` is settled: acknowledged (and listed here, if
    /// retained and after `after`) or superseded by a redelivery with a new `seq`. Events
    /// above it may still arrive.
    public var through: UInt64
    /// The oldest retained `seq`; events before it were dropped from the retention window.
    public var oldestRetained: UInt64?
    /// Whether `limit` cut the list short (ask again after the last `seq`, or with `nextCursor`).
    public var truncated: Bool
    /// Where the next page starts (pass it as `cursor`); present exactly when `truncated`.
    public var nextCursor: String?
    /// The retained hand-over events (``HandOverEvent``, slots this shard released) with
    /// `seq > after` and at most `through`, in `seq` order; absent when there are none, and
    /// always for a request naming a recipient. They share the `seq` count of `events`.
    public var handOvers: [HandOverEvent]?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        events: [FireEvent], through: UInt64, oldestRetained: UInt64?, truncated: Bool, nextCursor: String? = nil,
        handOvers: [HandOverEvent]? = nil
    ) {
        self.events = events
        self.through = through
        self.oldestRetained = oldestRetained
        self.truncated = truncated
        self.nextCursor = nextCursor
        self.handOvers = handOvers
    }
}

/// The result of `register` and `recipient`: the recipient (token redacted) and its badge.
public struct RecipientResult: Codable, Hashable, Sendable {
    /// The recipient (token redacted).
    public var recipient: Recipient
    /// The recipient's badge number.
    public var badge: Int
    /// How many delivered, unhandled firings it has.
    public var deliveredCount: Int
    /// Creates the value from its fields (see each property for meaning and units).
    public init(recipient: Recipient, badge: Int, deliveredCount: Int) {
        self.recipient = recipient
        self.badge = badge
        self.deliveredCount = deliveredCount
    }
}

/// The result of `badge`, `ack` and `delivered --remove`: the recipient's badge afterwards.
public struct BadgeResult: Codable, Hashable, Sendable {
    /// Whose it is.
    public var recipient: RecipientID
    /// The badge number (≥ 0).
    public var badge: Int
    /// Whether the request changed anything: for `ack`, whether the firing was still in the
    /// delivered list (with or without a badge change; a repeated ack was not); for `badge`,
    /// whether the number changed.
    public var changed: Bool
    /// Creates the value from its fields (see each property for meaning and units).
    public init(recipient: RecipientID, badge: Int, changed: Bool) {
        self.recipient = recipient
        self.badge = badge
        self.changed = changed
    }
}

/// The result of `enable` and `disable`: the reminders whose switch changed, sorted.
public struct SwitchResult: Codable, Hashable, Sendable {
    /// The reminders whose switch changed, sorted.
    public var changed: [ReminderID]
    /// Creates the value from its fields (see each property for meaning and units).
    public init(changed: [ReminderID]) { self.changed = changed }
}

/// The result of `delivered`: one page of delivered, unhandled firings, newest first.
public struct DeliveredResult: Codable, Hashable, Sendable {
    /// Whose it is.
    public var recipient: RecipientID
    /// The badge number (≥ 0).
    public var badge: Int
    /// Delivered, unhandled firings, newest first: this page's.
    public var delivered: [DeliveredFiring]
    /// Passed back as `cursor` for the next page; absent on the last page.
    public var nextCursor: String?
    /// Where ``delivered`` starts in the recipient's whole delivered list (0 for the first
    /// page): what a cursor after one of its firings holds. Not sent.
    public var offset: Int = 0

    private enum CodingKeys: String, CodingKey { case recipient, badge, delivered, nextCursor }

    /// Creates the value from its fields (see each property for meaning and units).
    public init(recipient: RecipientID, badge: Int, delivered: [DeliveredFiring], nextCursor: String? = nil, offset: Int = 0) {
        self.recipient = recipient
        self.badge = badge
        self.delivered = delivered
        self.nextCursor = nextCursor
        self.offset = offset
    }

    /// The cursor after ``delivered``'s firing at `index` (``PageCursor/Kind/delivered``).
    public func cursor(after index: Int) -> PageCursor {
        let position = UInt32(clamping: offset + index)
        let positionBytes = (0..<4).map { UInt8(truncatingIfNeeded: position >> (24 - 8 * UInt32($0))) }
        return PageCursor(kind: .delivered, key: positionBytes + Array(delivered[index].firingId.description.utf8))
    }
}

extension PageCursor {
    /// A `delivered` cursor's position and firing id text, or `nil` when its key is not
    /// 4 bytes and UTF-8 text.
    public var deliveredKey: (position: Int, firingId: String)? {
        guard kind == .delivered, key.count > 4, let text = String(validating: key.dropFirst(4), as: UTF8.self) else { return nil }
        let position = key.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        return (position, text)
    }
}

/// The result of `act` and `job`: an action job and how far it got.
public struct JobResult: Codable, Hashable, Sendable {
    /// `pending` (waiting for or running on a worker), `completed` or `failed`.
    public var status: String
    /// The job as accepted.
    public var job: ActionJob
    /// How it ended, once it has.
    public var outcome: ActionOutcome?
    /// Creates the value from its fields (see each property for meaning and units).
    public init(status: String, job: ActionJob, outcome: ActionOutcome?) {
        self.status = status
        self.job = job
        self.outcome = outcome
    }
}
