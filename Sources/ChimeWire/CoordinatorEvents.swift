import ChimeCore
import Foundation

extension Topic {
    /// `badge.<recipient>`: the recipient's badge number changed.
    public static func badge(_ recipient: RecipientID) -> String { "badge.\(recipient.rawValue)" }
    /// `action.<recipient>`: an action ran (`open` brings the app up) or an action job ended.
    public static func action(_ recipient: RecipientID) -> String { "action.\(recipient.rawValue)" }
}

/// A recipient's new badge number, published by the coordinator on `badge.<recipient>`, one
/// event per change, in order (`seq` counts up by one per badge event of this coordinator).
///
/// JSON shape: `{"type": "badge", "seq": 3, "recipient": "alice", "badge": 2, "at": "…Z"}`,
/// plus `"shard": 2` in a cluster of several shards (absent: shard 0; `seq` counts per shard).
public struct BadgeEvent: Codable, Hashable, Sendable {
    /// Always `"badge"`.
    public var type = "badge"
    /// The coordinator's sequence number of this event.
    public var seq: UInt64
    /// Whose it is.
    public var recipient: RecipientID
    /// The badge number (≥ 0).
    public var badge: Int
    /// When the change happened (UTC).
    public var at: Date
    /// The shard that published it, in a cluster of several shards; `nil` (absent): shard 0.
    public var shard: Int?

    /// Creates the value from its fields (see each property for meaning and units).
    public init(seq: UInt64, recipient: RecipientID, badge: Int, at: Date) {
        self.seq = seq
        self.recipient = recipient
        self.badge = badge
        self.at = at
    }
}

/// An action on a delivered firing, on `action.<recipient>`.
///
/// `type` is `"action"` when a foreground action (`open`) asks the subscriber to bring the
/// app up (published by the worker that ran it), and `"actionFinished"` when an action job
/// ended (published by the coordinator, with `status` and `reason`). JSON shape:
/// `{"type", "jobId", "firingId", "reminderId", "recipient", "action", "destructive",
/// "text", "status", "reason", "at"}`, plus `"shard"` in a cluster of several shards (absent:
/// shard 0).
public struct ActionEvent: Codable, Hashable, Sendable {
    /// `"action"` or `"actionFinished"`.
    public var type: String
    /// The job this outcome ends.
    public var jobId: String
    /// The firing this is about.
    public var firingId: FiringID
    /// The reminder the firing belongs to.
    public var reminderId: ReminderID
    /// Whose it is.
    public var recipient: RecipientID
    /// The action identifier.
    public var action: String
    /// Whether the action is marked destructive.
    public var destructive: Bool
    /// Text the user typed, if any.
    public var text: String?
    /// `completed` or `failed` (`actionFinished` only).
    public var status: String?
    /// Why it failed, or what was done.
    public var reason: String?
    /// When it happened (UTC).
    public var at: Date
    /// The shard whose firing this is, in a cluster of several shards; `nil` (absent): shard 0.
    public var shard: Int?

    /// The event for `job` of `type`, with the outcome when the job ended.
    public init(type: String, job: ActionJob, outcome: ActionOutcome? = nil, at: Date) {
        self.type = type
        self.jobId = job.jobId
        self.firingId = job.firingId
        self.reminderId = job.reminderId
        self.recipient = job.recipient
        self.action = job.action
        self.destructive = job.destructive
        self.text = job.text
        self.status = outcome?.status.rawValue
        self.reason = outcome?.reason
        self.at = at
    }
}
