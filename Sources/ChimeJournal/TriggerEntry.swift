import ChimeCore
import Foundation

/// A durable fact about the triggers beyond the clock (issue 41), in past tense, journaled as
/// `JournalEntry.trigger` and folded by the coordinator's `DurableState.apply` like every
/// other entry (JSON in the journal, encoding byte 4).
public enum TriggerEntry: Hashable, Codable, Sendable {
    /// An operator fired the reminder once at `dueAt` (`trigger now`) without moving its
    /// schedule: the fold makes the firing `FiringID(reminder, dueAt:)`, attempt 1, unless one
    /// of that id is unsettled already.
    case firedNow(ReminderKey, dueAt: Date, at: Date)
    /// An operator backfilled `from...through` (UTC, inclusive): the fold makes a firing for
    /// each of `dueAts` (the fire instants of the range's occurrences that had not fired) and
    /// records the range as covered, so a second backfill of it fires nothing.
    case backfilled(ReminderKey, from: Date, through: Date, dueAts: [Date], at: Date)
    /// An operator set how many occurrences the reminder has left (`nil`: no limit beyond its
    /// own rule). 0 finishes it; a positive count revives a reminder that a count finished.
    case remainingSet(ReminderKey, count: Int?, at: Date)
    /// An operator noted why reminders were switched off (`nil`: the note was cleared).
    case noted([ReminderKey], note: String?, at: Date)
    /// An exclusion calendar was set (`nil`: deleted) on this shard: every reminder naming it
    /// is re-planned from `at`.
    case calendarSet(name: String, calendar: ExclusionCalendar?, at: Date)
    /// A recipient reported where it was (accepted: later than its last report): the fold
    /// keeps it as the last location, detects region crossings (firing the region reminders
    /// they concern) and re-plans the sun reminders that follow the recipient's place.
    case located(RecipientID, LocationReport, at: Date)
}

extension TriggerEntry {
    /// The reminders this entry is about.
    public var reminders: [ReminderKey] {
        switch self {
        case .firedNow(let key, _, _), .backfilled(let key, _, _, _, _), .remainingSet(let key, _, _): [key]
        case .noted(let keys, _, _): keys
        case .calendarSet, .located: []
        }
    }

    /// The firings this entry makes.
    public var firings: [FiringID] {
        switch self {
        case .firedNow(let key, let dueAt, _): [FiringID(key, dueAt: dueAt)]
        case .backfilled(let key, _, _, let dueAts, _): dueAts.map { FiringID(key, dueAt: $0) }
        case .remainingSet, .noted, .calendarSet, .located: []
        }
    }

    /// The recipients the entry is about beyond its reminders' (a location's).
    public var recipients: [RecipientID] {
        if case .located(let recipient, _, _) = self { return [recipient] }
        return []
    }
}
