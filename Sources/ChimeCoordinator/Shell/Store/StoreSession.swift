import ChimeJournal
import ChimeStore

/// How the coordinator keeps its journal: a file store, or memory only.
enum CoordinatorStorage {
    case memory(InMemoryJournal)
    case file(FileStore)
}

/// The store as the loop holds it: the storage, the helper threads that write it (journal
/// writer, snapshot writer), and whether it is still this coordinator's. What the store's
/// upkeep decides (when to snapshot, which requests wait, the store-full mode) is the state's
/// (`StoreUpkeep`).
struct StoreSession {
    var storage: CoordinatorStorage = .memory(InMemoryJournal(keepsEntries: false))
    /// The file store's journal writer thread (`nil` with the in-memory journal).
    var journalWriter: JournalWriter?
    /// The thread that writes snapshots off the loop (`nil` with the in-memory journal, or
    /// outside `run`).
    var snapshotWriter: SnapshotWriter?
    /// Entries the store holds buffered since a start on a full store (0 or 1: `started`).
    var unwrittenAtStart = 0
    /// When the loop last checked that the store's `LOCK` still names the file it locked.
    var lastOwnershipCheck: ContinuousClock.Instant?
    /// Set when `LOCK` was deleted or replaced, or the lease lapsed, or the journal changed
    /// under this coordinator: nothing more may reach the store's journal.
    var hasLostOwnership = false
    /// Set when the journal's last segment changed under this coordinator
    /// (`.journalChanged`): its state is written as a snapshot at the stop
    /// (`CoordinatorService+JournalChange.swift`).
    var isJournalChanged = false
    /// The journal sequence number of the last entry the state reflects, kept when the journal
    /// writer is abandoned (for the snapshot of a changed journal).
    var submittedSequenceAtStop: UInt64?
}
