import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Taking the store from a holder whose lease expired (`LeaseObserver`): it is alive (its
/// `flock` still stands) but has not renewed for the lease duration — stopped, hung, or cut
/// off from the store's volume.
extension StoreLock {
    /// Kills the expired holder with SIGKILL when it is a process of this host and pid
    /// namespace (`ProcessIdentity.isVisibleLocally`: same boot id, namespace, pid and start
    /// time). A killed process never writes, sends or answers again (a stopped one dies too),
    /// its `flock` is released and its ports are freed by the kernel, so the standby then
    /// takes the lock the ordinary way and binds the same endpoints.
    /// - Returns: whether the signal was sent (`false`: another host or namespace, a pid
    ///   reused, or not permitted; replace `LOCK` instead).
    public static func killExpiredHolder(_ record: LeaseRecord) -> Bool {
        let holder = record.holder
        guard holder.pid != getpid(), holder.isVisibleLocally else { return false }
        return kill(holder.pid, SIGKILL) == 0
    }

    /// Takes the store by replacing `LOCK` with a new file locked by this process (created
    /// beside it, locked, renamed over it, the directory fsynced), and starts the lease.
    ///
    /// For a holder that cannot be killed from here (another host on a shared volume): its
    /// lock now excludes nobody, and when it runs again its own checks stop it — the lease
    /// it holds has lapsed (`StoreLease.check`), `LOCK` names another file
    /// (`verifyOwnership`), and the `EPOCH` file is above its epoch.
    /// - Throws: `JournalError` `.io` when the files cannot be made or renamed; `.lockLost`
    ///   when another standby replaced `LOCK` in the same moment.
    public static func replace(directory: URL, leaseDuration: Duration = StoreLease.defaultDuration) throws -> StoreLock {
        let path = lockPath(directory)
        let temporary = "\(path).takeover-\(getpid())"
        try? FileCalls.removeFile(temporary)
        let (descriptor, _) = try FileCalls.openOrCreate(temporary)
        let identity: FileIdentity
        do {
            guard try FileCalls.tryLockExclusive(descriptor, path: temporary) else {
                throw JournalError(.locked, path: temporary, message: "a takeover file is locked by another process")
            }
            let pid = Array("\(getpid())\n".utf8)
            try pid.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, at: 0, path: temporary) }
            identity = try FileCalls.identity(descriptor, path: temporary)
            try FileCalls.renameFile(temporary, to: path)
            try FileCalls.syncDirectory(directory.path)
            guard try FileCalls.identity(atPath: path) == identity else {
                throw JournalError(.lockLost, path: path, message: "another process replaced LOCK at the same moment")
            }
        } catch {
            FileCalls.closeFile(descriptor)
            throw error
        }
        let lock = StoreLock(
            directory: directory, descriptor: descriptor, identity: identity, createdLockFile: false, replacedLockFile: true)
        return try lock.startingLease(duration: leaseDuration)
    }
}
