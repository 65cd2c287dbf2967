import ChimeCore
import Foundation

/// A durable fact about what a recipient lets through, and when (issue 40), in past tense,
/// journaled as `JournalEntry.attention` and folded by the coordinator's `DurableState.apply`
/// like every other entry (JSON in the journal, encoding byte 4).
public enum AttentionEntry: Hashable, Codable, Sendable {
    /// `reminder`'s occurrence due at `dueAt` (UTC) fell in its recipient's quiet hours: the
    /// fold makes its firing (`FiringID(reminder, dueAt:)`, attempt 1, as `.fired` would, `late`
    /// and `missed` likewise) and holds it until `until` (UTC, the quiet window's end) instead of
    /// putting it in line for a worker; the reminder moved on to `next` as after `.fired`.
    /// `reason` is the rule that gave `until` (absent in journals written before it was
    /// recorded, which decode with `nil`: the hold is the same, its reason unknown).
    case held(ReminderKey, dueAt: Date, next: Occurrence?, late: Bool, missed: Int, until: Date, reason: HoldReason? = nil, at: Date)
    /// A held firing's quiet window ended: the fold makes it unsettled, waiting for a worker,
    /// with the same firing id.
    case released(FiringID, at: Date)
}

extension AttentionEntry {
    /// The reminders this entry is about.
    public var reminders: [ReminderKey] {
        switch self {
        case .held(let key, _, _, _, _, _, _, _): [key]
        case .released(let id, _): [id.key]
        }
    }

    /// The firings this entry holds or releases.
    public var firings: [FiringID] {
        switch self {
        case .held(let key, let dueAt, _, _, _, _, _, _): [FiringID(key, dueAt: dueAt)]
        case .released(let id, _): [id]
        }
    }
}
