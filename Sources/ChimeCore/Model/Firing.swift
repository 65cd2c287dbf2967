import Foundation

/// One due occurrence of a reminder, as the coordinator hands it to a worker.
///
/// JSON shape: `{"firingId", "reminderId", "recipient", "dueAt", "content", "attempt",
/// "late", "missed", "seq", "eventAt"}`, instants in RFC 3339 UTC with milliseconds;
/// `eventAt` only for a remind-before trigger, `missed` only for a late firing.
public struct Firing: Codable, Hashable, Sendable {
    /// The idempotency key, stable across redeliveries.
    public var firingId: FiringID
    /// The reminder this occurrence belongs to.
    public var reminderId: ReminderID
    /// Who it is for.
    public var recipient: RecipientID
    /// The instant the occurrence was due (UTC).
    public var dueAt: Date
    /// What to show, as scheduled.
    public var content: Content
    /// 1 for the first dispatch, incremented on each redelivery.
    public var attempt: Int
    /// Whether the occurrence fires after its time because no coordinator was running (a misfire).
    public var late: Bool
    /// For a late firing, how many missed occurrences it stands for: 1, or more when the
    /// `fireOnce` misfire policy coalesced several into this one (the newest; `dueAt` is
    /// its instant). `nil` for a firing on time.
    public var missed: Int?
    /// The event sequence number the coordinator gave this delivery attempt (a new one per
    /// attempt); its fire event carries it as `seq`. `nil` before dispatch.
    public var seq: UInt64?
    /// The event this firing reminds of (UTC) when the trigger has a remind-before offset;
    /// `dueAt` is then `eventAt` minus the offset. `nil` when the firing is the event.
    public var eventAt: Date?

    /// Creates the firing of `recipient`'s reminder `reminderId`'s occurrence due at `dueAt`,
    /// with the id `<recipient>/<reminderId>@<dueAt>`.
    public init(
        reminderId: ReminderID, recipient: RecipientID, dueAt: Date, content: Content,
        attempt: Int = 1, late: Bool = false, missed: Int? = nil, eventAt: Date? = nil
    ) {
        self.firingId = FiringID(ReminderKey(reminderId, of: recipient), dueAt: dueAt)
        self.reminderId = reminderId
        self.recipient = recipient
        self.dueAt = dueAt
        self.content = content
        self.attempt = attempt
        self.late = late
        self.missed = missed
        self.eventAt = eventAt
    }

    private enum CodingKeys: String, CodingKey {
        case firingId, reminderId, recipient, dueAt, content, attempt, late, missed, seq, eventAt
    }

    /// Decodes the JSON shape; a legacy firing id (written before ids were per recipient)
    /// takes the firing's recipient.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        recipient = try container.decode(RecipientID.self, forKey: .recipient)
        let firingId = try container.decode(FiringID.self, forKey: .firingId)
        self.firingId = firingId.isLegacy ? firingId.resolved(to: recipient) : firingId
        reminderId = try container.decode(ReminderID.self, forKey: .reminderId)
        dueAt = try container.decode(Date.self, forKey: .dueAt)
        content = try container.decode(Content.self, forKey: .content)
        attempt = try container.decode(Int.self, forKey: .attempt)
        late = try container.decode(Bool.self, forKey: .late)
        missed = try container.decodeIfPresent(Int.self, forKey: .missed)
        seq = try container.decodeIfPresent(UInt64.self, forKey: .seq)
        eventAt = try container.decodeIfPresent(Date.self, forKey: .eventAt)
    }
}
