import ChimeCore
import ChimeWire
import Foundation

/// A snapshot payload of format 3, as versions before the durable state was one value wrote
/// it: read into a `DurableState` by `DurableState.decodeSnapshot(_:seed:)` so their stores
/// still open (and written here only by tests and fuzz seeds). Today's snapshots are
/// `DurableState` encoded (format 4).
///
/// Payload: the byte 2, a u32 little-endian byte count, that many bytes of JSON with every
/// field but `reminders` and `answered` (`{"formatVersion": 3, "unsettled": [Firing],
/// "deadLetters": [Firing], "nextEventSeq": 42, "events": [FireEvent], "recipients", "ledgers",
/// "pendingJobs", "pendingNags", "lateFirings", "takenAt", "epoch"}`), then the reminders and the
/// remembered answers in binary (see ``encodedPayload()``), so a million reminders load
/// without decoding a single one.
///
/// `unsettled` holds every firing made but not acknowledged (waiting, in flight or
/// recovered) with its attempt number; recovery redelivers them with the same firing id.
public struct CoordinatorSnapshot: Codable, Sendable {
    /// One reminder with its schedule position.
    public struct ReminderRecord: Sendable {
        /// The reminder as scheduled, as `Reminder.binaryEncoded()` bytes.
        public var reminderBytes: [UInt8]
        /// The reminder's id.
        public var id: ReminderID
        /// The next occurrence's index in its `Recurrence`.
        public var nextIndex: Int?
        /// The next occurrence (UTC): the event instant.
        public var nextFireAt: Date?
        /// When the next occurrence fires (UTC): `nextFireAt` moved by the trigger's offset;
        /// `nil` when it is not armed.
        public var armedAt: Date?
        /// Where the reminder is in its life.
        public var state: ReminderState
        /// How many occurrences were delivered.
        public var deliveredCount: Int
        /// When the last one was delivered (UTC).
        public var lastFiredAt: Date?

        /// Makes a record; `reminderBytes` must be `Reminder.binaryEncoded()` of a reminder
        /// with this `id`.
        public init(
            reminderBytes: [UInt8], id: ReminderID, nextIndex: Int?, nextFireAt: Date?, armedAt: Date?,
            state: ReminderState, deliveredCount: Int, lastFiredAt: Date?
        ) {
            self.reminderBytes = reminderBytes
            self.id = id
            self.nextIndex = nextIndex
            self.nextFireAt = nextFireAt
            self.armedAt = armedAt
            self.state = state
            self.deliveredCount = deliveredCount
            self.lastFiredAt = lastFiredAt
        }
    }

    /// The newest format this code writes and reads (3: the fold's state; 2 held firings
    /// dispatched before a crash as `dispatched` journal entries).
    public static let currentFormatVersion = 3

    /// The format this snapshot was written in.
    public var formatVersion = CoordinatorSnapshot.currentFormatVersion
    /// Every reminder with its schedule position (binary part of the payload).
    public var reminders: [ReminderRecord] = []
    /// Firings made and not acknowledged, with their attempt numbers (`seq` is `nil`).
    public var unsettled: [Firing]
    /// Firings that exhausted their attempts.
    public var deadLetters: [Firing]
    /// One past the highest event `seq` reserved: a recovery's first dispatch gets it.
    public var nextEventSeq: UInt64
    /// Retained acknowledged events, in acknowledgement order.
    public var events: [FireEvent]
    /// Registered recipients (tokens included: the store is as secret as the configuration).
    public var recipients: [Recipient] = []
    /// Badge numbers and delivered lists by recipient.
    public var ledgers: [String: BadgeLedger] = [:]
    /// Action jobs accepted and not finished.
    public var pendingJobs: [ActionJob] = []
    /// Nag re-alerts armed and not yet due.
    public var pendingNags: [Firing] = []
    /// Late firings per reminder id since it last fired on time (for `fireAllCap`).
    public var lateFirings: [String: Int] = [:]
    /// Answers to recent mutating requests, oldest first (binary part of the payload).
    public var answered: [AnsweredRequest] = []
    /// When the snapshot was taken (UTC): the coordinator was running then.
    public var takenAt: Date?
    /// The highest coordinator epoch recorded when the snapshot was taken (`.started`
    /// entries); `nil` in snapshots written before epochs were recorded (still format 3: an
    /// optional JSON field older readers ignore).
    public var epoch: UInt64?

    /// A format-3 snapshot with no reminders, recipients, jobs, nags or answers.
    public init(unsettled: [Firing], deadLetters: [Firing], nextEventSeq: UInt64, events: [FireEvent]) {
        self.unsettled = unsettled
        self.deadLetters = deadLetters
        self.nextEventSeq = nextEventSeq
        self.events = events
    }

    private enum CodingKeys: String, CodingKey {
        case formatVersion, unsettled, deadLetters, nextEventSeq, events, recipients, ledgers, pendingJobs,
            pendingNags, lateFirings, takenAt, epoch
    }
}

/// One remembered answer, for idempotent retries across restarts.
public struct AnsweredRequest: Sendable, Equatable {
    /// The client's request id.
    public var requestId: String
    /// The reply sent, as encoded (`ControlOutcome.encodedReply(requestId:)`).
    public var reply: Data

    /// Makes a remembered answer.
    public init(requestId: String, reply: Data) {
        self.requestId = requestId
        self.reply = reply
    }
}
