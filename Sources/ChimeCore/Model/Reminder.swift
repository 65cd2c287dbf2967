import Foundation

/// A reminder as a client schedules it: who, what, when, and whether it is switched on.
///
/// JSON shape: `{"id": "...", "recipient": "alice", "content": {…}, "trigger": {…},
/// "enabled": true, "nag": {"count": 3, "interval": 600}}`. `id` is optional on input (the
/// coordinator generates one); `nag` is optional and omitted when absent.
public struct Reminder: Codable, Hashable, Sendable {
    /// The reminder's id; scheduling an existing id replaces that reminder.
    public var id: ReminderID
    /// Who the reminder is for.
    public var recipient: RecipientID
    /// What the firing shows.
    public var content: Content
    /// When it fires.
    public var trigger: Trigger
    /// The on/off switch: a disabled reminder keeps its record but does not fire.
    public var enabled: Bool
    /// Re-alerts of an unhandled firing; `nil` for none.
    public var nag: NagPolicy?

    /// Creates a reminder without checking it; see ``validate(maximumUserInfoBytes:)``.
    public init(
        id: ReminderID, recipient: RecipientID, content: Content, trigger: Trigger,
        enabled: Bool = true, nag: NagPolicy? = nil
    ) {
        self.id = id
        self.recipient = recipient
        self.content = content
        self.trigger = trigger
        self.enabled = enabled
        self.nag = nag
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case id, recipient, content, trigger, enabled, nag
    }

    /// Where a field given on the reminder itself belongs, for the `unknown_field` hint.
    private static let misplacedFields: [String: String] = Dictionary(
        uniqueKeysWithValues:
            ["at", "timeZone", "repeat", "rrule", "rdates", "exdates", "monthEnd", "before", "misfire", "misfireThreshold", "spread"]
            .map { ($0, "trigger.\($0)") }
            + Content.jsonKeys
            .map { ($0, "content.\($0)") })

    /// Decodes the JSON shape above; `id`, `content`, `enabled` and `nag` are optional.
    /// - Throws: `DecodingError` for a missing recipient or trigger, a malformed field, or
    ///   an unknown key (its `underlyingError` an ``UnknownFieldError``; a trigger or content
    ///   field given here suggests `trigger.<key>` or `content.<key>`).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, elsewhere: Self.misplacedFields)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(ReminderID.self, forKey: .id) ?? ReminderID("")
        recipient = try container.decode(RecipientID.self, forKey: .recipient)
        content = try container.decodeIfPresent(Content.self, forKey: .content) ?? Content()
        trigger = try container.decode(Trigger.self, forKey: .trigger)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? true
        nag = try container.decodeIfPresent(NagPolicy.self, forKey: .nag)
    }

    /// Checks every field and returns the reminder's occurrence sequence.
    /// - Parameter maximumUserInfoBytes: the `userInfo` JSON size limit, in bytes.
    /// - Throws: `ValidationError` naming the first offending field.
    public func validate(maximumUserInfoBytes: Int = 4096) throws(ValidationError) -> Recurrence {
        try id.validate()
        try recipient.validate()
        try content.validate(maximumUserInfoBytes: maximumUserInfoBytes)
        try nag?.validate()
        return try trigger.makeRecurrence()
    }

    /// Whether `userInfo[key]` exists and its text equals `value` (see
    /// `PropertyListValue.matchText`).
    public func userInfoMatches(key: String, value: String) -> Bool {
        content.userInfo?[key]?.matchText == value
    }
}

/// Where a reminder is in its life.
public enum ReminderState: String, Codable, Sendable, CaseIterable {
    /// Switched on with an occurrence still to fire.
    case pending
    /// A one-shot that has fired; kept (switch off) until cancelled, as a reminder list shows it.
    case delivered
    /// Switched off by its owner; kept, not firing.
    case disabled
    /// A repeating reminder whose occurrences have run out.
    case finished
    /// A one-shot whose firing was not delivered: its recipient's settings allow none of it.
    case suppressed
    /// A one-shot whose firing exhausted its delivery attempts and was dead-lettered (or its
    /// dead letter deleted): it never reached its recipient. Retrying the dead letter makes it
    /// `delivered` again. Last, so the snapshot's state indexes of the others stay.
    case undelivered
}
