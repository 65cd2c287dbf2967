import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileJournal {
    /// Checks that the segment this journal appends to is still the file it opened and at
    /// least as long as what it wrote (one `stat`): someone truncating, replacing or deleting
    /// it under a running coordinator would otherwise go unnoticed until the next start.
    /// Safe from any thread (it reads what the writing thread last recorded).
    /// - Throws: `JournalError` `.journalChanged` naming what changed; `.io` when `stat` fails.
    public func verifyTailUnchanged() throws {
        try tailWatch.verify()
    }

    /// Creates an empty segment (its header only, fsynced, the directory too) starting at
    /// `firstSequence`, after a snapshot that covers every sequence number before it: a
    /// coordinator whose journal changed under it leaves the damaged segment behind that
    /// snapshot this way, so the next start reads neither.
    /// - Throws: `JournalError` `.io` (`EEXIST` included).
    public static func startSegment(in directory: URL, at firstSequence: UInt64) throws {
        let path = directory.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: firstSequence)).path
        let descriptor = try FileCalls.openFile(path, O_WRONLY | O_CREAT | O_EXCL)
        defer { FileCalls.closeFile(descriptor) }
        let header = RecordFraming.makeSegmentHeader(firstSequence: firstSequence)
        try header.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, path: path) }
        try FileCalls.syncData(descriptor, path: path)
        try FileCalls.syncDirectory(directory.path)
    }
}

/// The tail segment's path, identity and written size, recorded by the journal's writing
/// thread and checked against the file system by any thread.
final class TailWatch: Sendable {
    private struct Tail {
        var path: String
        var identity: FileIdentity?
        var size: Int
    }

    private let tail = Mutex<Tail?>(nil)

    /// Starts following the segment at `path`, open as `descriptor`, of `size` bytes.
    func follow(path: String, descriptor: Int32, size: Int) {
        let identity = try? FileCalls.identity(descriptor, path: path)
        tail.withLock { $0 = Tail(path: path, identity: identity, size: size) }
    }

    /// Records the segment's size after a write.
    func noteSize(_ size: Int) {
        tail.withLock { $0?.size = size }
    }

    /// Checks the open tail itself (`fstat`): it must be exactly `size` bytes long, as this
    /// journal left it, before the next append.
    /// - Throws: `JournalError` `.journalChanged`; `.io` when `fstat` fails.
    func verifyOpenFile(_ descriptor: Int32, size: Int) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw FileCalls.error(errno, "fstat", tail.withLock { $0?.path } ?? "journal")
        }
        guard Int(status.st_size) == size else {
            let path = tail.withLock { $0?.path } ?? "journal"
            throw JournalError(
                .journalChanged, path: path,
                message: "the journal segment being appended to is \(status.st_size) bytes, not the \(size) this coordinator wrote: someone changed it")
        }
    }

    func verify() throws {
        guard let expected = tail.withLock({ $0 }), let identity = expected.identity else { return }
        var status = stat()
        guard stat(expected.path, &status) == 0 else {
            let code = errno
            guard code == ENOENT else { throw FileCalls.error(code, "stat", expected.path) }
            throw JournalError(
                .journalChanged, path: expected.path,
                message: "the journal segment being appended to was deleted under this coordinator")
        }
        guard FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)) == identity else {
            throw JournalError(
                .journalChanged, path: expected.path,
                message: "the journal segment being appended to was replaced by another file under this coordinator")
        }
        guard Int(status.st_size) >= expected.size else {
            throw JournalError(
                .journalChanged, path: expected.path,
                message: "the journal segment being appended to was cut from \(expected.size) to \(status.st_size) bytes under this coordinator")
        }
    }
}
