import ChimeJournal
import ChimeStore
import Foundation

/// A standby coordinator's copy of the active coordinator's state, kept current while it
/// waits for the store lock: the newest snapshot loaded once, then every journal record the
/// active coordinator appends folded in (`JournalFollower`), so that taking over costs only
/// the records of the last moments instead of a whole recovery. Records come in whole
/// groups (one loop turn's entries, so whole requests): the follower holds a group until its
/// last record is on disk, so this copy never holds half of a request, even one whose write
/// the active coordinator's crash cut short.
///
/// Reads only, without the lock: a snapshot or segment the active coordinator deletes
/// meanwhile makes `catchUp` throw, and the standby loads again from the newest snapshot.
/// Whatever this copy holds, the coordinator that takes over still opens the store with
/// `FileStore.open(heldThrough:)`, which checks the journal and cuts a torn tail as a cold
/// start does, and replays the records after `heldThrough`.
final class WarmStandby {
    /// The fold of the snapshot and every record through `heldThrough`.
    var state: CoordinatorState
    /// Reads what the active coordinator appends.
    let follower: JournalFollower
    /// The sequence number of the snapshot loaded (`nil`: none, replayed from the start).
    let snapshotSequence: UInt64?

    /// The sequence number through which `state` holds the journal.
    var heldThrough: UInt64 { follower.lastSequence }

    /// Loads the newest valid snapshot of `directory` and the journal after it.
    /// - Parameters:
    ///   - directory: the store directory (not locked).
    ///   - configuration: the tunables (the epoch is set at takeover).
    ///   - startedAt: the standby's start (UTC).
    /// - Throws: `JournalError` (`.unsupportedVersion`, `.corrupt`, `.io`, …), `WireError`
    ///   for a snapshot this version cannot read.
    init(directory: URL, configuration: CoordinatorConfiguration, startedAt: Date) throws {
        let (snapshot, _) = try SnapshotStore(directory: directory.appendingPathComponent("snapshot")).loadNewestValid()
        var state = CoordinatorState(configuration: configuration, startedAt: startedAt)
        if let snapshot { try state.load(snapshot: snapshot.payload) }
        self.state = state
        self.snapshotSequence = snapshot?.sequence
        follower = JournalFollower(directory: directory.appendingPathComponent("journal"), after: snapshot?.sequence ?? 0)
        try catchUp()
    }

    /// Folds in the records appended since the last call.
    /// - Returns: how many were folded in.
    /// - Throws: as `JournalFollower.readNew` (load a new `WarmStandby` then).
    @discardableResult
    func catchUp() throws -> Int {
        try follower.readNew { _, entry in state.apply(entry) }
    }
}

extension CoordinatorState {
    /// Makes a state recovered (ahead of time, for a warm standby) the one to serve with as
    /// `identity`: this coordinator's epoch, stamped on every dispatch, its version and pid,
    /// and its start time for `status`.
    public mutating func takeOver(as identity: CoordinatorIdentity) {
        self.identity = identity
    }
}
