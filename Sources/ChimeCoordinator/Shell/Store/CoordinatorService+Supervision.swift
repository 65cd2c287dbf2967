import ChimeStore
import Foundation

extension CoordinatorService {
    /// How often the loop checks that `LOCK` still names the file it locked, in seconds.
    static let ownershipCheckInterval = 0.1
    /// How long a coordinator that had to create `LOCK` in an existing store waits before
    /// recovery, in seconds: several ownership check intervals of a coordinator that may
    /// still hold the deleted file.
    static let lostLockGrace = 0.5
    /// A loop turn that begins this long after the previous one began is a **stall**: the
    /// loop polls for at most 100 ms, so only a stopped (SIGSTOP) or starved process, a
    /// suspended machine or an unusually long turn (a large snapshot) gets here.
    static let stallThreshold = Duration.seconds(1)

    /// Runs once at the start of every loop turn, before anything of the turn reaches the
    /// journal, a worker or a client, on one monotonic reading (`ContinuousClock`, which
    /// keeps counting while the process is stopped by SIGSTOP, as `CLOCK_MONOTONIC` does):
    /// sends `WATCHDOG=1` when half the supervisor's interval has passed, and checks that
    /// the store is still this coordinator's — every turn the lease (`StoreLease.check`, no
    /// system call), every `ownershipCheckInterval` the `LOCK` inode
    /// (`StoreLock.verifyOwnership`, one `stat`), and after a stall also the `EPOCH` file,
    /// which a coordinator that took over has raised past this one's epoch.
    ///
    /// A turn that checks nothing costs two comparisons of instants.
    /// - Throws: `JournalError` `.lockLost` when the store is no longer this coordinator's
    ///   (`hasLostOwnership` is then set: nothing more is written or sent); `.io` when the
    ///   checks cannot read the files.
    func superviseTurn(at now: ContinuousClock.Instant) throws {
        telemetry.watchdog.pingIfDue(at: now)
        let previous = telemetry.previousTurnStart
        telemetry.previousTurnStart = now
        guard case .file(let fileStore) = store.storage else { return }
        // Every turn, before anything of it goes out: one clock reading against the lease.
        try fencing { try fileStore.lock.verifyLease(at: now) }
        if let previous, now - previous >= Self.stallThreshold {
            store.lastOwnershipCheck = now
            try recheckOwnership(of: fileStore, afterStall: now - previous)
            return
        }
        if let last = store.lastOwnershipCheck, now - last < .seconds(Self.ownershipCheckInterval) { return }
        store.lastOwnershipCheck = now
        try fencing {
            try fileStore.lock.verifyOwnership()
            // At the same cadence: the segment being appended to is the file it was, no shorter.
            try fileStore.journal.verifyTailUnchanged()
        }
    }

    /// After a stall: the `LOCK` inode, then the `EPOCH` file against this coordinator's epoch.
    /// - Throws: as `superviseTurn(at:)`.
    func recheckOwnership(of store: FileStore, afterStall stall: Duration) throws {
        let seconds = Double(stall.components.seconds) + Double(stall.components.attoseconds) / 1e18
        logger.warning(
            "the loop stalled; checking that the store is still ours before sending anything",
            ["stallSeconds": .rounded(seconds, digits: 3), "epoch": .integer(state.identity.epoch)])
        try fencing {
            try store.lock.verifyOwnership()
            let recorded = try StoreLock.recordedEpoch(of: store.directory) ?? 0
            guard recorded <= state.identity.epoch else {
                throw JournalError(
                    .lockLost, path: store.directory.appendingPathComponent("EPOCH").path,
                    message: "after a stall of \(String(format: "%.1f", seconds)) s the store's epoch is \(recorded), above this coordinator's \(state.identity.epoch): another coordinator took over, so this one stops without sending")
            }
        }
    }

    /// Checks the store's lease right before something leaves for a worker or a client (one
    /// clock reading): a turn that began before a pause must not send after it.
    /// - Throws: `JournalError` `.lockLost` when the lease lapsed.
    func checkLeaseBeforeSending() throws {
        guard case .file(let fileStore) = store.storage else { return }
        try fencing { try fileStore.lock.verifyLease() }
    }

    /// Runs a check; a `.lockLost` it throws marks the store lost (nothing more is written),
    /// a `.journalChanged` too, and marks the state to be kept in a snapshot at the stop.
    func fencing<Value>(_ check: () throws -> Value) throws -> Value {
        do {
            return try check()
        } catch let error as JournalError where error.code == .lockLost || error.code == .journalChanged {
            store.hasLostOwnership = true
            if error.code == .journalChanged { store.isJournalChanged = true }
            throw error
        }
    }

    /// The `STATUS=` line of an active coordinator.
    func activeStatusLine() -> String {
        let mode = state.isStoreFull ? "store full, refusing changes" : "serving"
        return "active (epoch \(state.identity.epoch)): \(mode), \(state.reminderCount) reminders"
    }
}
