import ChimeCore

/// Volatile bookkeeping of leases that ran out (issue 24, item 4): which worker let each
/// redelivered firing go, so the redelivery goes to another live worker when there is one, and
/// which workers keep letting leases run out, so they get no firings for a while.
///
/// A worker whose leases run out ``quarantineAfter`` times in a row (no acknowledgement in
/// between) is quarantined: no dispatch for ``baseQuarantineSeconds``, doubled for each
/// quarantine in a row, at most ``maximumQuarantineSeconds``; an acknowledgement ends the
/// series. Not journaled: a recovery starts with a clean book, as with worker records
/// (ZeroMQ Guide ch. 4, "Paranoid Pirate": a worker that fails is set aside, not retried at once).
struct LeaseFailureBook: Sendable {
    struct WorkerFailures: Sendable {
        /// Leases run out since its last acknowledgement.
        var expiredInARow = 0
        /// Quarantines since its last acknowledgement (the back-off's exponent).
        var quarantinesInARow = 0
        /// No dispatch before this monotonic reading (`elapsed`), in seconds.
        var quarantinedUntil = 0.0
    }

    /// Lease expiries in a row that quarantine a worker.
    static let quarantineAfter = 3
    /// The first quarantine, in seconds.
    static let baseQuarantineSeconds = 30.0
    /// The longest quarantine, in seconds.
    static let maximumQuarantineSeconds = 600.0

    /// The worker each redelivered firing was last leased to.
    private(set) var lastHolder: [FiringID: WorkerID] = [:]
    private(set) var workers: [WorkerID: WorkerFailures] = [:]
    /// Quarantines since start.
    private(set) var quarantineCount = 0

    /// A lease of `firing` held by `worker` ran out at `elapsed`.
    /// - Returns: the quarantine's length in seconds when this expiry starts one.
    mutating func noteExpired(_ firing: FiringID, heldBy worker: WorkerID, at elapsed: Double) -> Double? {
        lastHolder[firing] = worker
        var failures = workers[worker] ?? WorkerFailures()
        failures.expiredInARow += 1
        defer { workers[worker] = failures }
        guard failures.expiredInARow >= Self.quarantineAfter, failures.quarantinedUntil <= elapsed else { return nil }
        let seconds = min(
            Self.maximumQuarantineSeconds, Self.baseQuarantineSeconds * Double(1 << min(failures.quarantinesInARow, 20)))
        failures.quarantinesInARow += 1
        failures.expiredInARow = 0
        failures.quarantinedUntil = elapsed + seconds
        quarantineCount += 1
        return seconds
    }

    /// `worker` acknowledged a firing: its series of failures ends.
    mutating func noteAcknowledged(by worker: WorkerID) {
        guard let failures = workers[worker], failures.expiredInARow > 0 || failures.quarantinesInARow > 0 else { return }
        workers[worker]?.expiredInARow = 0
        workers[worker]?.quarantinesInARow = 0
    }

    /// `firing` settled or went to another worker: nothing to avoid any more.
    mutating func forget(_ firing: FiringID) {
        if !lastHolder.isEmpty { lastHolder[firing] = nil }
    }

    /// The worker a redelivery of `firing` should avoid.
    func workerToAvoid(for firing: FiringID) -> WorkerID? {
        lastHolder.isEmpty ? nil : lastHolder[firing]
    }

    func isQuarantined(_ worker: WorkerID, at elapsed: Double) -> Bool {
        guard let failures = workers[worker] else { return false }
        return failures.quarantinedUntil > elapsed
    }

    func quarantinedCount(at elapsed: Double) -> Int {
        workers.values.filter { $0.quarantinedUntil > elapsed }.count
    }

    /// Forgets a worker whose record was dropped.
    mutating func forget(worker: WorkerID) {
        workers[worker] = nil
    }
}
