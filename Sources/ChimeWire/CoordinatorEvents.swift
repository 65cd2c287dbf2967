import ChimeCore
import Foundation

extension Topic {
    /// `badge.<recipient>`: the recipient's badge number changed.
    public static func badge(_ recipient: RecipientID) -> String { "badge.\(recipient.rawValue)" }
    /// `action.<recipient>`: an action ran (`open` brings the app up) or an action job ended.
    public static func action(_ recipient: RecipientID) -> String { "action.\(recipient.rawValue)" }
    /// `summary.<recipient>`: a scheduled summary went out.
    public static func summary(_ recipient: RecipientID) -> String { "summary.\(recipient.rawValue)" }
}

/// A recipient's scheduled summary, published by the coordinator on `summary.<recipient>` when
/// the firings held for it are released: the list a summary shows, most relevant first.
///
/// JSON shape: `{"type": "summary", "recipient": "alice", "at": "…Z", "firings": [{"firingId",
/// "reminderId", "title"?, "category"?, "relevanceScore"?}], "categories"?: [{"category",
/// "count", "text"?}]}`, firings ordered by `relevanceScore` (absent counts as 0) descending,
/// then firing id; `categories` counts the firings of each category in the summary, in
/// category order, with the line the recipient's category's `summaryFormat` makes of the count
/// (absent when no firing has a category). Each listed firing is also delivered with
/// its own fire event, which carries the seq and badge; this event has no seq and is not kept
/// for catch-up (a subscriber that missed it rebuilds the list from those fire events).
public struct SummaryEvent: Codable, Hashable, Sendable {
    /// One firing of a summary.
    public struct Item: Codable, Hashable, Sendable {
        /// The firing's id.
        public var firingId: FiringID
        /// Its reminder.
        public var reminderId: ReminderID
        /// Its alert title, if any.
        public var title: String?
        /// Its category, if any.
        public var category: String?
        /// Its relevance score, 0 to 1, if any.
        public var relevanceScore: Double?

        /// The summary item of `firing`.
        public init(_ firing: Firing) {
            firingId = firing.firingId
            reminderId = firing.reminderId
            title = firing.content.title
            category = firing.content.category
            relevanceScore = firing.content.relevanceScore
        }
    }

    /// One category's line of a summary.
    public struct CategoryLine: Codable, Hashable, Sendable {
        /// The category's identifier.
        public var category: String
        /// How many of the summary's firings are of it.
        public var count: Int
        /// Its `summaryFormat` with the count filled in (``SummaryFormat``); absent when the
        /// recipient's category has none (or is not registered).
        public var text: String?

        /// Creates the value from its fields (see each property for meaning).
        public init(category: String, count: Int, text: String? = nil) {
            self.category = category
            self.count = count
            self.text = text
        }
    }

    /// Always `"summary"`.
    public var type = "summary"
    /// Whose it is.
    public var recipient: RecipientID
    /// When it went out (UTC).
    public var at: Date
    /// The firings, most relevant first.
    public var firings: [Item]
    /// The count of each category's firings, in category order, with its summary line;
    /// `nil` when no firing has a category.
    public var categories: [CategoryLine]?

    /// A summary of `firings`, ordered by relevance score (absent: 0) descending, then firing
    /// id, with a line per category whose text `categories` (the recipient's) format.
    public init(recipient: RecipientID, at: Date, firings: [Firing], categories: [NotificationCategory] = []) {
        self.recipient = recipient
        self.at = at
        self.firings = firings.map(Item.init).sorted {
            ($0.relevanceScore ?? 0, $1.firingId) > ($1.relevanceScore ?? 0, $0.firingId)
        }
        var counts: [String: Int] = [:]
        for firing in firings {
            if let category = firing.content.category { counts[category, default: 0] += 1 }
        }
        // One look-up table, not a scan of the categories per line.
        var formats: [String: String] = [:]
        if !counts.isEmpty {
            for category in categories where formats[category.identifier] == nil { formats[category.identifier] = category.summaryFormat }
        }
        let lines = counts.sorted { $0.key < $1.key }.map { category, count in
            CategoryLine(category: category, count: count, text: formats[category].map { SummaryFormat.text($0, count: count) })
        }
        self.categories = lines.isEmpty ? nil : lines
    }
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
