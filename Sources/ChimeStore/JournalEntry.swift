import ChimeCore
import Foundation

/// One fact in the coordinator's journal, in past tense. Replaying the entries in order
/// rebuilds the schedule.
public enum JournalEntry: Codable, Hashable, Sendable {
    /// A reminder was scheduled (or replaced, same id) at the given instant (UTC).
    case scheduled(Reminder, at: Date)
    /// These reminders were cancelled.
    case cancelled([ReminderID], at: Date)
    /// A firing was handed to the dispatch socket (attempt ≥ 1).
    case dispatched(FiringID, attempt: Int, at: Date)
    /// A worker acknowledged delivery of a firing at `firedAt` (the worker's clock, UTC).
    case acknowledged(FiringID, firedAt: Date)
}

/// An append-only log of `JournalEntry` values.
///
/// `append` may buffer; `sync` makes everything appended so far durable under the
/// journal's fsync policy. The coordinator appends all entries of one loop turn, syncs
/// once (group commit), then replies and dispatches.
public protocol Journal {
    /// Appends entries in order.
    /// - Throws: an I/O error when the entries cannot be written.
    mutating func append(_ entries: [JournalEntry]) throws
    /// Makes every appended entry durable.
    /// - Throws: an I/O error when the journal cannot be flushed.
    mutating func sync() throws
}

/// A journal that keeps entries in memory: for tests and for `--store none`.
public struct InMemoryJournal: Journal, Sendable {
    /// Every entry appended, in order.
    public private(set) var entries: [JournalEntry] = []
    /// How many times `sync` was called.
    public private(set) var syncCount = 0
    /// Whether to keep entries (false: count them only, so memory does not grow).
    public var keepsEntries: Bool
    /// How many entries were appended.
    public private(set) var appendedCount = 0

    /// An empty journal; `keepsEntries: false` only counts what is appended.
    public init(keepsEntries: Bool = true) { self.keepsEntries = keepsEntries }

    /// Appends entries in order (or only counts them).
    public mutating func append(_ entries: [JournalEntry]) {
        appendedCount += entries.count
        if keepsEntries { self.entries.append(contentsOf: entries) }
    }

    /// Counts the call; memory needs no flushing.
    public mutating func sync() { syncCount += 1 }
}
