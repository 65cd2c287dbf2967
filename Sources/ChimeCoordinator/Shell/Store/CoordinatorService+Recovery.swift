import ChimeCore
import ChimeRuntime
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// Opening the store: the lock (waited for as a standby, with a warm copy of the state),
/// recovery from the newest snapshot and the journal after it, the epoch, the `started` entry.
extension CoordinatorService {
    /// Parses `store.fsync` (+ `fsyncIntervalMilliseconds`).
    /// - Throws: `ConfigurationError` for an unknown policy.
    static func fsyncPolicy(_ store: ChimeConfiguration.Store) throws(ConfigurationError) -> FsyncPolicy {
        switch store.fsync {
        case "always": return .always
        case "never": return .never
        case "interval": return .interval(milliseconds: max(1, store.fsyncIntervalMilliseconds))
        default:
            throw ConfigurationError("store.fsync must be always, interval or never, not '\(store.fsync)'")
        }
    }

    /// Takes the store lock (waiting for it as a standby) once `LOCK` names the locked file,
    /// recovers the schedule, sets the epoch to one above the `EPOCH` file, the snapshot and
    /// every `started` entry (rebuilding a missing `EPOCH`), journals `started` with it and
    /// returns the state to serve with.
    ///
    /// - Parameter onLocked: called once this coordinator holds the store (before recovery),
    ///   to bind what may only be bound by the active coordinator.
    /// - Returns: `nil` when the stop signal arrived while waiting as a standby.
    /// - Throws: `JournalError` (`.locked` without `standby`, `.lockLost`, `.corrupt`,
    ///   `.unsupportedVersion`, `.io`), `ConfigurationError`, `WireError` for a snapshot this version cannot read, and
    ///   what `onLocked` throws.
    func openStorage(tunables: CoordinatorConfiguration, onLocked: () throws -> Void = {}) throws
        -> (CoordinatorStorage, CoordinatorState)?
    {
        let started = Date()
        guard configuration.store.directory != "none" else {
            try onLocked()
            var state = CoordinatorState(configuration: tunables, startedAt: clock.now)
            state.takeOver(as: identity(epoch: 1))
            state.finishRecovery(at: clock.now)
            state.onStoreOpened(isFileStore: false, entriesSinceSnapshot: 0)
            logger.warning("no store (store.directory is none): nothing survives a restart")
            return (.memory(InMemoryJournal(keepsEntries: false)), state)
        }
        let directory = URL(fileURLWithPath: configuration.store.directory).standardizedFileURL
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lock: StoreLock
        var warm: WarmStandby?
        probe.enter(setup.isStandby ? .standby : .recovering)
        if setup.isStandby {
            guard let (acquired, warmed) = try waitForLock(directory: directory, tunables: tunables) else { return nil }
            lock = acquired
            warm = warmed
            probe.enter(.recovering)
            logger.info("standby: took over the store", ["store": "\(directory.path)", "warm": .bool(warmed != nil)])
            notifier?.notifyStatus("taking over: \(warmed == nil ? "recovering the store" : "replaying the last records")")
        } else {
            lock = try StoreLock.tryAcquire(directory: directory, leaseDuration: storeLeaseDuration)
        }
        let lockedAt = ContinuousClock.now
        if lock.createdLockFile && FileManager.default.fileExists(atPath: directory.appendingPathComponent("journal").path) {
            // A store with a journal but no LOCK: someone deleted it, maybe under a running
            // coordinator, which notices within its ownership check interval and stops.
            logger.warning(
                "LOCK was missing from an existing store: created a new one; waiting for a coordinator that may still hold the deleted one to stop",
                ["store": "\(directory.path)", "waitMilliseconds": .int(Int(Self.lostLockGrace * 1000))])
            Thread.sleep(forTimeInterval: Self.lostLockGrace)
        }
        try lock.verifyOwnership()
        try onLocked()
        var options = FileStore.Options()
        options.segmentSize = configuration.store.segmentBytes
        let fsyncPolicy = try Self.fsyncPolicy(configuration.store)
        var state: CoordinatorState
        let store: FileStore
        let recovery: Recovery<JournalEntry>
        var warmReplayed: Int?
        if let warm, let opened = try openWarm(warm, directory: directory, fsync: fsyncPolicy, options: options, lock: lock) {
            (store, recovery) = opened
            warmReplayed = Int(warm.heldThrough - (warm.snapshotSequence ?? 0))
            state = warm.state
            for entry in recovery.entries { state.apply(entry) }
        } else {
            (store, recovery) = try FileStore.open(directory: directory, fsync: fsyncPolicy, options: options, lock: lock)
            state = CoordinatorState(configuration: tunables, startedAt: clock.now)
            if let snapshot = recovery.snapshot { try state.load(snapshot: snapshot.payload) }
            for entry in recovery.entries { state.apply(entry) }
        }
        // The epoch only grows: above the EPOCH file, the snapshot's and every `started` entry's
        // (the fold keeps the highest of those).
        let epochFile = try StoreLock.recordedEpoch(of: directory)
        let recordedEpoch = state.highestRecordedEpoch
        let epoch = try store.lock.advanceEpoch(above: recordedEpoch)
        state.takeOver(as: identity(epoch: epoch))
        if epochFile == nil && (warm != nil || recovery.snapshot != nil || !recovery.entries.isEmpty) {
            logger.warning(
                "EPOCH file missing: rebuilt from the journal and snapshot",
                ["recordedEpoch": .integer(recordedEpoch), "epoch": .integer(epoch), "store": "\(directory.path)"])
        }
        // Journaled before anything is served, so a lost EPOCH file is rebuilt from it.
        let startedEntry = JournalEntry.started(epoch: epoch, at: clock.now, settings: tunables.durableSettings)
        try store.append([startedEntry])
        do {
            try store.sync()
        } catch let error as JournalError where error.code == .noSpace {
            // A start on a full store: the entry stays buffered and the journal writer starts
            // in the store-full mode, retrying it before anything else (the epoch itself is
            // durable in EPOCH, rewritten in place when no new file fits).
            logger.warning("the store is full at start: serving reads and firing, refusing changes until space returns",
                           ["error": "\(error)"])
            self.store.unwrittenAtStart = 1
        }
        state.apply(startedEntry)
        state.finishRecovery(at: clock.now)
        let report = recovery.report
        var details: [String: LogValue] = [
            "reminders": .int(state.reminderCount), "redeliveries": .int(state.waitingCount),
            "journalEntries": .int(report.entriesReplayed), "epoch": .integer(epoch),
            "milliseconds": .rounded(Date().timeIntervalSince(started) * 1000, digits: 1),
        ]
        if let sequence = report.snapshotSequence { details["snapshotSequence"] = .integer(sequence) }
        if setup.isStandby {
            let elapsed = ContinuousClock.now - lockedAt
            details["takeoverMilliseconds"] = .rounded(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000, digits: 1)
            details["warm"] = .bool(warmReplayed != nil)
        }
        if let truncation = report.truncation {
            logger.warning("journal tail truncated", ["detail": truncation.description])
            details["truncatedBytes"] = .integer(truncation.bytesDiscarded)
            if truncation.incompleteGroupRecords > 0 { details["incompleteGroupRecords"] = .int(truncation.incompleteGroupRecords) }
        }
        for skipped in report.skippedSnapshots {
            logger.warning("skipped a damaged snapshot", ["detail": "\(skipped)"])
        }
        if state.skippedEntries > 0 { details["skippedEntries"] = .int(state.skippedEntries) }
        logger.info("recovered", details)
        // Count the replayed entries toward the next snapshot, so a coordinator that keeps
        // restarting still snapshots and its journal stays bounded.
        state.onStoreOpened(isFileStore: true, entriesSinceSnapshot: report.entriesReplayed + (warmReplayed ?? 0))
        // Decoding the snapshot and replaying the journal freed their buffers (W4 1M: a peak
        // of 968 MiB, 636 MiB after): the first idle turn gives the free pages back.
        telemetry.recordsSinceMemoryTrim = Self.memoryTrimRecords
        return (.file(store), state)
    }

    /// The store lease's duration (`store.leaseMilliseconds`): how long the `LOCK` holder's
    /// renewals may stop before a standby takes the store (not a firing's lease).
    var storeLeaseDuration: Duration { .milliseconds(configuration.store.leaseMilliseconds) }

    /// This coordinator as it serves with `epoch`: its process id, Chime's version, started now.
    func identity(epoch: UInt64) -> CoordinatorIdentity {
        CoordinatorIdentity(epoch: epoch, version: ChimeVersion.current, pid: getpid(), startedAt: clock.now)
    }

    /// A standby's wait for the store lock: while another coordinator holds it, keeps a
    /// `WarmStandby` current (the newest snapshot, then the journal as it grows), pings the
    /// supervisor's watchdog, and watches the holder's lease (`LeaseObserver`).
    ///
    /// When the lease expires — no renewal for `store.leaseMilliseconds`: the holder is
    /// stopped, hung or cut off from the store — the standby takes the store without any
    /// outside help: it kills a holder on its own host (`StoreLock.killExpiredHolder`), whose
    /// lock and ports the kernel then frees, else (another host, or the kill did not free the
    /// lock within `killGrace`) it replaces `LOCK` (`StoreLock.replace`).
    /// - Returns: the lock and the warm state (`nil` when it could not be built: the takeover
    ///   then recovers cold); `nil` when the stop signal came first.
    /// - Throws: `JournalError` `.io` when the lock cannot be tried.
    func waitForLock(directory: URL, tunables: CoordinatorConfiguration) throws -> (StoreLock, WarmStandby?)? {
        let holder = StoreLock.recordedHolder(of: directory).map { "pid \($0)" } ?? "another coordinator"
        logger.info("standby: waiting for the store lock", ["store": directory.path, "holder": holder])
        notifier?.notifyReady(status: "standby: waiting for the store lock (\(holder))")
        var warm: WarmStandby?
        var nextWarmAttempt = ContinuousClock.now
        var lease = LeaseObserver(directory: directory, duration: storeLeaseDuration)
        var killedAt: ContinuousClock.Instant?
        while true {
            if stop.isStopRequested { return nil }
            let now = ContinuousClock.now
            telemetry.watchdog.pingIfDue(at: now)
            do {
                // A free lock (a new store, or the active one gone) is taken at once.
                return (
                    try StoreLock.acquire(
                        directory: directory, until: Date().addingTimeInterval(0.05), pollInterval: 0.01, leaseDuration: storeLeaseDuration),
                    warm)
            } catch let error as JournalError where error.code == .locked {
                // Another coordinator is active: keep up with it.
            }
            if lease.observe() {
                if let killedAt, ContinuousClock.now - killedAt < Self.killGrace { continue }
                if killedAt == nil, let record = lease.record, StoreLock.killExpiredHolder(record) {
                    killedAt = ContinuousClock.now
                    logger.warning(
                        "standby: the active coordinator's lease expired; killed it (same host) and taking over",
                        ["pid": .integer(Int64(record.holder.pid)), "silentMilliseconds": .integer(StoreLease.milliseconds(lease.silence()))])
                    continue
                }
                let record = lease.record
                logger.warning(
                    "standby: the active coordinator's lease expired; replacing LOCK to take over (the holder cannot be killed from here)",
                    ["pid": record.map { .integer(Int64($0.holder.pid)) } ?? "unknown", "host": record.map { "\($0.holder.host)" } ?? "unknown",
                     "silentMilliseconds": .integer(StoreLease.milliseconds(lease.silence()))])
                return (try StoreLock.replace(directory: directory, leaseDuration: storeLeaseDuration), warm)
            }
            if let current = warm {
                do {
                    try current.catchUp()
                } catch {
                    logger.info("standby: reloading the warm state", ["reason": "\(error)"])
                    warm = nil
                }
            } else if setup.isWarmStandby && ContinuousClock.now >= nextWarmAttempt {
                let started = ContinuousClock.now
                do {
                    let loaded = try WarmStandby(directory: directory, configuration: tunables, startedAt: clock.now)
                    warm = loaded
                    // Loading decoded the whole snapshot: its buffers are free now.
                    Allocator.releaseFreePages()
                    let elapsed = ContinuousClock.now - started
                    logger.info("standby: warm state loaded; following the journal", [
                        "reminders": .int(loaded.state.reminderCount), "heldThrough": .integer(loaded.heldThrough),
                        "snapshotSequence": loaded.snapshotSequence.map { .integer($0) } ?? "none",
                        "milliseconds": .integer(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)])
                    notifier?.notifyStatus("standby (warm through \(loaded.heldThrough)): waiting for the store lock (\(holder))")
                } catch {
                    logger.warning("standby: no warm state yet; a takeover would recover cold", ["reason": "\(error)"])
                    nextWarmAttempt = ContinuousClock.now + .seconds(1)
                }
            }
        }
    }

    /// How long a standby waits for the lock after killing an expired holder before it
    /// replaces `LOCK` instead (a process in uninterruptible sleep dies only when its system
    /// call returns).
    static let killGrace = Duration.seconds(2)

    /// Opens the store for a warm takeover: only the journal after the warm state is read.
    /// - Returns: `nil` when the journal no longer reaches back to the warm state (a
    ///   snapshot deleted its segments at the last moment): recover cold then.
    /// - Throws: as `FileStore.open`.
    func openWarm(
        _ warm: WarmStandby, directory: URL, fsync: FsyncPolicy, options: FileStore.Options, lock: StoreLock
    ) throws -> (FileStore, Recovery<JournalEntry>)? {
        do {
            try warm.catchUp()
            return try FileStore.open(directory: directory, fsync: fsync, options: options, lock: lock, heldThrough: warm.heldThrough)
        } catch let error as JournalError where error.code == .corrupt {
            logger.warning("standby: the warm state does not meet the journal; recovering cold", ["reason": "\(error)"])
            return nil
        }
    }
}
