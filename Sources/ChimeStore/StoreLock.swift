import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Exclusive ownership of a store directory: an `flock(LOCK_EX)` on `<directory>/LOCK`,
/// held by the active coordinator while a standby waits for it.
///
/// `flock` locks belong to an open file description, so two locks on one directory
/// conflict even within one process, and the kernel drops the lock when the holder dies
/// (`kill -9` included). The holder writes its pid into `LOCK` (ASCII decimal and a
/// newline) for operators; the file's content never decides anything. The lock is
/// released by `release()` or when the value is deinitialized.
///
/// A lock on a file that `LOCK` no longer names (deleted or replaced) excludes nobody: the
/// next coordinator creates a new `LOCK` and locks that. So a lock is taken only once
/// `LOCK` names the very file locked (device and inode, `fstat` against `stat`), and its
/// holder calls `verifyOwnership()` regularly and stops writing when it throws.
///
/// Every lock taken also holds the store's lease (`StoreLease`, renewed on a thread of its
/// own), so a standby can take the store from a holder that stopped without dying; the
/// lease ends with the lock.
public final class StoreLock: Sendable {
    /// The store directory.
    public let directory: URL
    /// Whether taking the lock created the `LOCK` file (a new store, or a deleted `LOCK`).
    public let createdLockFile: Bool
    /// The `LOCK` file's descriptor, or -1 once released.
    private let descriptor: Mutex<Int32>
    /// The device and inode of the locked file.
    private let identity: FileIdentity
    /// The store's lease, renewed while the lock is held.
    private let lease = Mutex<StoreLease?>(nil)
    /// Whether this lock was taken by replacing `LOCK` under a holder whose lease expired
    /// (`replace(directory:leaseDuration:)`).
    public let replacedLockFile: Bool

    init(directory: URL, descriptor: Int32, identity: FileIdentity, createdLockFile: Bool, replacedLockFile: Bool = false) {
        self.directory = directory
        self.descriptor = Mutex(descriptor)
        self.identity = identity
        self.createdLockFile = createdLockFile
        self.replacedLockFile = replacedLockFile
    }

    /// What one attempt to take the lock found.
    private enum Attempt {
        case acquired(StoreLock)
        /// Another open file description holds it.
        case held
        /// `LOCK` was deleted or replaced between the `open` and the `flock`.
        case replaced
    }

    deinit { release() }

    /// Takes the lock if nobody holds it, and starts its lease; does not wait. Creates the
    /// directory and `LOCK` when missing.
    /// - Parameter leaseDuration: the lease duration (`StoreLease`).
    /// - Throws: `JournalError` `.locked` when another open file description holds the
    ///   lock (the message names the holder's pid when `LOCK` has one); `.io`.
    public static func tryAcquire(directory: URL, leaseDuration: Duration = StoreLease.defaultDuration) throws -> StoreLock {
        // A `LOCK` replaced under an attempt is tried again, a few times.
        for _ in 0..<3 {
            switch try attempt(directory: directory) {
            case .acquired(let lock): return try lock.startingLease(duration: leaseDuration)
            case .held: throw lockedError(directory: directory)
            case .replaced: continue
            }
        }
        throw lockedError(directory: directory)
    }

    /// Takes the lock, polling every `pollInterval` seconds while another holder has it.
    ///
    /// A standby coordinator waits here; to stay responsive to its own shutdown it can wait
    /// in slices (`until: Date() + 1`) and check its stop signal between them.
    /// - Parameters:
    ///   - deadline: when to give up (UTC); `nil` waits as long as it takes.
    ///   - pollInterval: the time between attempts, in seconds.
    ///   - leaseDuration: the lease duration (`StoreLease`).
    /// - Throws: `JournalError` `.locked` when the deadline passes first; `.io`.
    public static func acquire(
        directory: URL, until deadline: Date?, pollInterval: Double = 0.05, leaseDuration: Duration = StoreLease.defaultDuration
    ) throws -> StoreLock {
        precondition(pollInterval > 0, "poll interval must be positive")
        // Measured on the monotonic clock from here: a wall-clock step must not stretch the wait.
        let end = deadline.map { ContinuousClock.now + .nanoseconds(Int64((max(0, min($0.timeIntervalSinceNow, 1e9)) * 1e9).rounded(.up))) }
        while true {
            if case .acquired(let lock) = try attempt(directory: directory) { return try lock.startingLease(duration: leaseDuration) }
            let remaining = end.map { StoreLease.seconds($0 - ContinuousClock.now) } ?? pollInterval
            if remaining <= 0 { throw lockedError(directory: directory) }
            sleep(seconds: min(pollInterval, remaining))
        }
    }

    /// The pid written into `<directory>/LOCK` by its last holder, if any; informational
    /// only (the holder may have died since).
    public static func recordedHolder(of directory: URL) -> Int32? {
        guard let bytes = try? FileCalls.readFile(lockPath(directory)) else { return nil }
        return Int32(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Whether a process holds the lock of the store in `directory` now, asked without taking
    /// it or creating anything: a shared `flock` on `LOCK`, tried and given back at once.
    /// `false` when there is no `LOCK`. What `chime store verify` and `chime up` ask before
    /// they read or start (the answer may change the moment after).
    /// - Throws: `JournalError` `.io` when `LOCK` exists but cannot be opened or locked.
    public static func isHeld(directory: URL) throws -> Bool {
        let path = lockPath(directory)
        guard try FileCalls.identity(atPath: path) != nil else { return false }
        let descriptor = try FileCalls.openFile(path, O_RDONLY)
        defer { FileCalls.closeFile(descriptor) }
        return !(try FileCalls.tryLockShared(descriptor, path: path))
    }

    /// Whether this value still holds the lock.
    public var isHeld: Bool { descriptor.withLock { $0 >= 0 } }

    /// Checks that the lock is held and that `<directory>/LOCK` still names the file it is
    /// held on (one `stat`, compared by device and inode).
    ///
    /// When `LOCK` was deleted or replaced, another coordinator can lock the new file while
    /// this one runs; the holder must then stop writing to the store at once.
    /// - Throws: `JournalError` `.lockLost` when `LOCK` is missing or names another file, or
    ///   the lock was released; `.io` when `stat` fails otherwise.
    /// - Throws: also `.lockLost` when the lease lapsed (`StoreLease.check`).
    public func verifyOwnership() throws {
        let path = Self.lockPath(directory)
        guard isHeld else { throw JournalError(.lockLost, path: path, message: "the store lock was released") }
        try verifyLease()
        guard let current = try FileCalls.identity(atPath: path) else {
            throw JournalError(
                .lockLost, path: path,
                message: "LOCK was deleted while this process held it: another coordinator may lock a new LOCK, so this one stops writing")
        }
        guard current == identity else {
            throw JournalError(
                .lockLost, path: path,
                message: "LOCK names another file than the one this process locked (inode \(current.inode), locked \(identity.inode)): another coordinator may hold it, so this one stops writing")
        }
    }

    /// Checks only the lease (one clock reading, no system call): for the places a stale
    /// write or send could leave from, between the regular ownership checks.
    /// - Throws: `JournalError` `.lockLost` when the lease lapsed.
    public func verifyLease(at now: ContinuousClock.Instant = .now) throws {
        try lease.withLock { $0 }?.check(at: now)
    }

    /// The lease, while the lock is held.
    public var currentLease: StoreLease? { lease.withLock { $0 } }

    /// Starts the lease of a lock just taken.
    ///
    /// A new store on a disk too full for `LEASE`'s first block is held without a lease: no
    /// `LEASE` file exists then, and a standby that finds none waits for the lock alone, as
    /// before leases (an existing `LEASE` is rewritten in place, which needs no new space).
    /// - Throws: `JournalError` `.io` when `LEASE` cannot be written (the lock is released then).
    func startingLease(duration: Duration) throws -> StoreLock {
        do {
            let started = try StoreLease(directory: directory, duration: duration)
            lease.withLock { $0 = started }
        } catch let error as JournalError where error.code == .noSpace {
            let path = directory.appendingPathComponent("LEASE").path
            // Best effort: an empty LEASE left by the failed write reads as "no lease" anyway.
            if (try? FileCalls.fileSize(atPath: path)) == 0 { try? FileCalls.removeFile(path) }
        } catch {
            release()
            throw error
        }
        return self
    }

    /// Gives the lock up (closing the descriptor; the lease stops first); calling it again
    /// does nothing.
    public func release() {
        lease.withLock { current in
            current?.stop()
            current = nil
        }
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            FileCalls.closeFile(descriptor)
            descriptor = -1
        }
    }

    static func lockPath(_ directory: URL) -> String { directory.appendingPathComponent("LOCK").path }

    private static func attempt(directory: URL) throws -> Attempt {
        try FileCalls.makeDirectory(directory.path)
        let path = lockPath(directory)
        let (descriptor, created) = try FileCalls.openOrCreate(path)
        let identity: FileIdentity
        do {
            guard try FileCalls.tryLockExclusive(descriptor, path: path) else {
                FileCalls.closeFile(descriptor)
                return .held
            }
            identity = try FileCalls.identity(descriptor, path: path)
            // Locked, but only a lock on the file `LOCK` names now excludes anyone.
            guard try FileCalls.identity(atPath: path) == identity else {
                FileCalls.closeFile(descriptor)
                return .replaced
            }
            // Written over the old pid, then cut to length, so a full disk (which has no block
            // for a new file's first byte) only leaves the pid unrecorded: it is informational.
            let pid = Array("\(getpid())\n".utf8)
            do {
                try pid.withUnsafeBytes { bytes in
                    try FileCalls.retrying("pwrite", path) {
                        pwrite(descriptor, bytes.baseAddress, bytes.count, 0) < 0 ? -1 : 0
                    }
                }
                try FileCalls.truncateFile(descriptor, to: pid.count, path: path)
            } catch let error as JournalError where error.code == .noSpace {
                // Deliberately dropped: the lock is the flock, not the pid in the file.
            }
        } catch {
            FileCalls.closeFile(descriptor)
            throw error
        }
        return .acquired(StoreLock(directory: directory, descriptor: descriptor, identity: identity, createdLockFile: created))
    }

    private static func lockedError(directory: URL) -> JournalError {
        let holder = recordedHolder(of: directory).map { " (by pid \($0))" } ?? ""
        return JournalError(.locked, path: lockPath(directory), message: "the store is locked\(holder)")
    }

    private static func sleep(seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
