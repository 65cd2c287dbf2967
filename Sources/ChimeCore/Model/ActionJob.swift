import Foundation

/// One user action on a delivered firing, handed to a worker to run its handler.
///
/// JSON shape: `{"jobId", "firingId", "reminderId", "recipient", "action", "text",
/// "destructive", "activationMode", "category", "snoozeSeconds", "firing": Firing}`.
public struct ActionJob: Codable, Hashable, Sendable {
    /// Unique per accepted `act` request (`<firingId>#<action>@<epoch ms>`).
    public var jobId: String
    /// The firing acted on.
    public var firingId: FiringID
    /// The reminder the firing belongs to.
    public var reminderId: ReminderID
    /// Whose it is.
    public var recipient: RecipientID
    /// The action identifier (`open`, `dismiss`, `snooze`, or a category's custom action).
    public var action: String
    /// Text the user typed (text-input actions).
    public var text: String?
    /// Whether the action is marked destructive in its category.
    public var destructive: Bool
    /// `foreground` (bring the app up: an `action.<recipient>` event) or `background`.
    public var activationMode: ActivationMode
    /// The category the action belongs to, when it is not a built-in one.
    public var category: String?
    /// For `snooze`: how long until the re-firing, in seconds.
    public var snoozeSeconds: Double?
    /// The firing as it was delivered (content included), for handlers and hooks.
    public var firing: Firing

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        jobId: String, firing: Firing, action: String, text: String?, destructive: Bool,
        activationMode: ActivationMode, category: String?, snoozeSeconds: Double?
    ) {
        self.jobId = jobId
        self.firingId = firing.firingId
        self.reminderId = firing.reminderId
        self.recipient = firing.recipient
        self.action = action
        self.text = text
        self.destructive = destructive
        self.activationMode = activationMode
        self.category = category
        self.snoozeSeconds = snoozeSeconds
        self.firing = firing
    }

    /// The recipient a job id names: a job id starts with its firing id's text
    /// (`<recipient>/<reminderId>@<dueAt>#<action>@<ms>`), so a client routes `job` requests by
    /// it; `nil` for a job id of an earlier version (no recipient) or a text that is none.
    public static func recipient(ofJobID jobId: String) -> RecipientID? {
        guard let slash = jobId.unicodeScalars.firstIndex(of: "/"), let recipient = ReminderKey.unescaped(jobId[..<slash]) else {
            return nil
        }
        return RecipientID(recipient)
    }

    private enum CodingKeys: String, CodingKey {
        case jobId, firingId, reminderId, recipient, action, text, destructive, activationMode, category, snoozeSeconds,
            firing
    }

    /// Decodes the JSON shape; a legacy firing id (written before ids were per recipient)
    /// takes the job's recipient.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        jobId = try container.decode(String.self, forKey: .jobId)
        recipient = try container.decode(RecipientID.self, forKey: .recipient)
        let firingId = try container.decode(FiringID.self, forKey: .firingId)
        self.firingId = firingId.isLegacy ? firingId.resolved(to: recipient) : firingId
        reminderId = try container.decode(ReminderID.self, forKey: .reminderId)
        action = try container.decode(String.self, forKey: .action)
        text = try container.decodeIfPresent(String.self, forKey: .text)
        destructive = try container.decode(Bool.self, forKey: .destructive)
        activationMode = try container.decode(ActivationMode.self, forKey: .activationMode)
        category = try container.decodeIfPresent(String.self, forKey: .category)
        snoozeSeconds = try container.decodeIfPresent(Double.self, forKey: .snoozeSeconds)
        firing = try container.decode(Firing.self, forKey: .firing)
    }
}

/// How an action job ended: the completion-handler contract (every job ends as completed or
/// failed, with a reason, within its time limit).
///
/// JSON shape: `{"jobId", "status": "completed"|"failed", "reason", "output", "effects": [...]}`.
public struct ActionOutcome: Codable, Hashable, Sendable {
    /// `completed` or `failed`.
    public enum Status: String, Codable, Hashable, Sendable {
        case completed, failed
    }

    /// What the coordinator must apply after the handler ran (workers never change the
    /// schedule themselves).
    public enum Effect: Codable, Hashable, Sendable {
        /// Fire the firing's content again, once, at `at` (snooze), as a new one-shot reminder.
        case refire(at: Date)
    }

    /// The job this outcome ends.
    public var jobId: String
    /// `completed` or `failed`.
    public var status: Status
    /// Why it failed, or a short note on what was done.
    public var reason: String?
    /// What a command hook printed (standard output, then standard error), at most 4 KiB.
    public var output: String?
    /// What the coordinator must apply (only for `completed`).
    public var effects: [Effect]

    /// Creates the value from its fields (see each property for meaning and units).
    public init(jobId: String, status: Status, reason: String?, output: String? = nil, effects: [Effect] = []) {
        self.jobId = jobId
        self.status = status
        self.reason = reason
        self.output = output
        self.effects = effects
    }
}
