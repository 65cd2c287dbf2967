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
public final class StoreLock: Sendable {
    /// The store directory.
    public let directory: URL
    /// The `LOCK` file's descriptor, or -1 once released.
    private let descriptor: Mutex<Int32>

    private init(directory: URL, descriptor: Int32) {
        self.directory = directory
        self.descriptor = Mutex(descriptor)
    }

    deinit { release() }

    /// Takes the lock if nobody holds it; does not wait. Creates the directory and `LOCK`
    /// when missing.
    /// - Throws: `JournalError` `.locked` when another open file description holds the
    ///   lock (the message names the holder's pid when `LOCK` has one); `.io`.
    public static func tryAcquire(directory: URL) throws -> StoreLock {
        guard let lock = try attempt(directory: directory) else {
            throw lockedError(directory: directory)
        }
        return lock
    }

    /// Takes the lock, polling every `pollInterval` seconds while another holder has it.
    ///
    /// A standby coordinator waits here; to stay responsive to its own shutdown it can wait
    /// in slices (`until: Date() + 1`) and check its stop signal between them.
    /// - Parameters:
    ///   - deadline: when to give up (UTC); `nil` waits as long as it takes.
    ///   - pollInterval: the time between attempts, in seconds.
    /// - Throws: `JournalError` `.locked` when the deadline passes first; `.io`.
    public static func acquire(directory: URL, until deadline: Date?, pollInterval: Double = 0.05) throws -> StoreLock {
        precondition(pollInterval > 0, "poll interval must be positive")
        while true {
            if let lock = try attempt(directory: directory) { return lock }
            let remaining = deadline.map { $0.timeIntervalSinceNow } ?? pollInterval
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

    /// Whether this value still holds the lock.
    public var isHeld: Bool { descriptor.withLock { $0 >= 0 } }

    /// Gives the lock up (closing the descriptor); calling it again does nothing.
    public func release() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            FileCalls.closeFile(descriptor)
            descriptor = -1
        }
    }

    static func lockPath(_ directory: URL) -> String { directory.appendingPathComponent("LOCK").path }

    private static func attempt(directory: URL) throws -> StoreLock? {
        try FileCalls.makeDirectory(directory.path)
        let path = lockPath(directory)
        let descriptor = try FileCalls.openFile(path, O_RDWR | O_CREAT)
        do {
            guard try FileCalls.tryLockExclusive(descriptor, path: path) else {
                FileCalls.closeFile(descriptor)
                return nil
            }
            let pid = Array("\(getpid())\n".utf8)
            try FileCalls.truncateFile(descriptor, to: 0, path: path)
            try pid.withUnsafeBytes { bytes in
                try FileCalls.retrying("pwrite", path) {
                    pwrite(descriptor, bytes.baseAddress, bytes.count, 0) < 0 ? -1 : 0
                }
            }
        } catch {
            FileCalls.closeFile(descriptor)
            throw error
        }
        return StoreLock(directory: directory, descriptor: descriptor)
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
