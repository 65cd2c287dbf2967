import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One function per POSIX call the store makes, and the only place that reads `errno`.
///
/// Every wrapper retries on `EINTR` and throws `JournalError(.io)` naming the call, the
/// path and the `errno` otherwise. `EBADF` and `EFAULT` mean a closed or foreign
/// descriptor or buffer reached the call, which only a bug in this module can cause, so
/// they trap.
enum FileCalls {
    ///
    /// A store file that is not a regular file (a FIFO, a device or a socket put where `LEASE`,
    /// `EPOCH`, `LOCK` or a segment belongs) is refused at once with `.io` ("not a regular
    /// file"): it is opened with `O_NONBLOCK`, so a FIFO without a writer cannot block the
    /// start, then checked with `fstat`, then set back to blocking. A directory is opened as
    /// asked when `flags` has `O_DIRECTORY`.
    static func openFile(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        let isDirectory = flags & O_DIRECTORY != 0
        var descriptor: Int32 = -1
        while true {
            descriptor = open(path, flags | O_CLOEXEC | (isDirectory ? 0 : O_NONBLOCK), mode)
            if descriptor >= 0 { break }
            let code = errno
            // A FIFO without a reader refuses O_WRONLY | O_NONBLOCK with ENXIO: say what it is.
            var status = stat()
            if code == ENXIO, stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFIFO {
                throw JournalError(.io, path: path, message: "open refused: a FIFO, not a regular file (remove it; the store makes its own)")
            }
            if code != EINTR { throw error(code, "open", path) }
        }
        guard !isDirectory else { return descriptor }
        try requireRegularFile(descriptor, path: path)
        setBlocking(descriptor)
        return descriptor
    }

    /// Clears `O_NONBLOCK` (the store's files are read and written blocking).
    static func setBlocking(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
    }

    /// Checks that an open store file is a regular file; otherwise closes it and throws
    /// `.io` naming what it is (a FIFO, a device, a socket, a directory).
    static func requireRegularFile(_ descriptor: Int32, path: String) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            closeFile(descriptor)
            throw error(code, "fstat", path)
        }
        guard status.st_mode & S_IFMT != S_IFREG else { return }
        closeFile(descriptor)
        let kind =
            switch status.st_mode & S_IFMT {
            case S_IFIFO: "a FIFO"
            case S_IFCHR, S_IFBLK: "a device"
            case S_IFSOCK: "a socket"
            case S_IFDIR: "a directory"
            default: "something else"
            }
        throw JournalError(.io, path: path, message: "open refused: \(kind), not a regular file (remove it; the store makes its own)")
    }

    /// Closes without retrying: on Linux the descriptor is released even when `close`
    /// reports `EINTR`, so a retry could close a descriptor another thread just opened.
    static func closeFile(_ descriptor: Int32) {
        _ = close(descriptor)
    }

    /// Writes all of `buffer`, continuing after partial writes.
    static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        var written = 0
        while written < buffer.count {
            let result = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
            if result >= 0 {
                written += result
                continue
            }
            let code = errno
            if code != EINTR { throw error(code, "write", path) }
        }
    }

    /// Writes all of `buffer` at `offset` (`pwrite`), continuing after partial writes; the
    /// file offset does not move.
    static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int, path: String) throws {
        var written = 0
        while written < buffer.count {
            let result = pwrite(descriptor, buffer.baseAddress! + written, buffer.count - written, off_t(offset + written))
            if result >= 0 {
                written += result
                continue
            }
            let code = errno
            if code != EINTR { throw error(code, "pwrite", path) }
        }
    }

    /// Writes all of `buffers` in order with as few `writev` calls as the kernel allows
    /// (one, unless it accepts a partial write).
    static func writeAll(_ descriptor: Int32, _ buffers: [UnsafeRawBufferPointer], path: String) throws {
        var vectors = buffers.filter { $0.count > 0 }.map {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count)
        }
        var first = 0
        while first < vectors.count {
            // 1024 is Linux's UIO_MAXIOV (IOV_MAX is a macro Swift does not import).
            let count = Int32(min(vectors.count - first, 1024))
            let result = vectors.withUnsafeBufferPointer { writev(descriptor, $0.baseAddress! + first, count) }
            if result < 0 {
                let code = errno
                if code == EINTR { continue }
                throw error(code, "writev", path)
            }
            var remaining = result
            while remaining > 0, remaining >= vectors[first].iov_len {
                remaining -= vectors[first].iov_len
                first += 1
            }
            if remaining > 0 {
                vectors[first].iov_base = vectors[first].iov_base! + remaining
                vectors[first].iov_len -= remaining
            }
        }
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    static func readAll(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String
    ) throws -> Int {
        var total = 0
        while total < buffer.count {
            let result = pread(descriptor, buffer.baseAddress! + total, buffer.count - total, off_t(offset + total))
            if result == 0 { break }
            if result > 0 {
                total += result
                continue
            }
            let code = errno
            if code != EINTR { throw error(code, "pread", path) }
        }
        return total
    }

    /// The whole content of the file at `path`.
    static func readFile(_ path: String) throws -> [UInt8] {
        let descriptor = try openFile(path, O_RDONLY)
        defer { closeFile(descriptor) }
        let size = try fileSize(descriptor, path: path)
        var bytesRead = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            bytesRead = try readAll(descriptor, into: UnsafeMutableRawBufferPointer(buffer), at: 0, path: path)
            initialized = bytesRead
        }
        return bytes
    }

    static func fileSize(_ descriptor: Int32, path: String) throws -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw error(errno, "fstat", path) }
        return Int(status.st_size)
    }

    /// The size of the file at `path` in bytes, or `nil` when it does not exist.
    static func fileSize(atPath path: String) throws -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw error(code, "stat", path)
        }
        return Int(status.st_size)
    }

    static func syncData(_ descriptor: Int32, path: String) throws {
        #if os(Linux)
            try retrying("fdatasync", path) { fdatasync(descriptor) }
        #else
            try retrying("fsync", path) { fsync(descriptor) }
        #endif
    }

    static func syncFile(_ descriptor: Int32, path: String) throws {
        try retrying("fsync", path) { fsync(descriptor) }
    }

    static func truncateFile(_ descriptor: Int32, to length: Int, path: String) throws {
        try retrying("ftruncate", path) { ftruncate(descriptor, off_t(length)) }
    }

    static func renameFile(_ source: String, to destination: String) throws {
        try retrying("rename", source) { rename(source, destination) }
    }

    static func removeFile(_ path: String) throws {
        try retrying("unlink", path) { unlink(path) }
    }

    /// Creates a directory; an existing one is fine.
    static func makeDirectory(_ path: String) throws {
        while mkdir(path, 0o755) != 0 {
            let code = errno
            if code == EEXIST { return }
            if code != EINTR { throw error(code, "mkdir", path) }
        }
    }

    /// Makes a directory's entries (creations, renames, removals) durable.
    static func syncDirectory(_ path: String) throws {
        let descriptor = try openFile(path, O_RDONLY | O_DIRECTORY)
        defer { closeFile(descriptor) }
        try syncFile(descriptor, path: path)
    }

    /// Whether `path` names an existing directory.
    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The names in a directory (without `.` and `..`), or `[]` when it does not exist.
    static func listDirectory(_ path: String) throws -> [String] {
        guard let directory = opendir(path) else {
            let code = errno
            if code == ENOENT { return [] }
            throw error(code, "opendir", path)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Opens `path` read-write, creating it when missing; `created` tells whether this call
    /// created it.
    static func openOrCreate(_ path: String) throws -> (descriptor: Int32, created: Bool) {
        while true {
            let created = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if created >= 0 { return (created, true) }
            var code = errno
            if code == EINTR { continue }
            guard code == EEXIST else { throw error(code, "open", path) }
            // O_NONBLOCK and the check: a FIFO where the file belongs is refused, not waited on.
            let existing = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK)
            if existing >= 0 {
                try requireRegularFile(existing, path: path)
                setBlocking(existing)
                return (existing, false)
            }
            code = errno
            // Deleted between the two calls, or interrupted: try again.
            if code != ENOENT && code != EINTR { throw error(code, "open", path) }
        }
    }

    /// The device and inode of an open file.
    static func identity(_ descriptor: Int32, path: String) throws -> FileIdentity {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw error(errno, "fstat", path) }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// The device and inode `path` names now, or `nil` when nothing does.
    static func identity(atPath path: String) throws -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw error(code, "stat", path)
        }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// Takes an exclusive `flock`; `false` when another open file description holds it.
    static func tryLockExclusive(_ descriptor: Int32, path: String) throws -> Bool {
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EWOULDBLOCK { return false }
            if code != EINTR { throw error(code, "flock", path) }
        }
        return true
    }

    /// Takes a shared `flock`; `false` when another open file description holds it exclusively.
    static func tryLockShared(_ descriptor: Int32, path: String) throws -> Bool {
        while flock(descriptor, LOCK_SH | LOCK_NB) != 0 {
            let code = errno
            if code == EWOULDBLOCK { return false }
            if code != EINTR { throw error(code, "flock", path) }
        }
        return true
    }

    static func retrying(_ call: String, _ path: String, _ body: () -> Int32) throws {
        while body() != 0 {
            let code = errno
            if code != EINTR { throw error(code, call, path) }
        }
    }

    static func error(_ code: Int32, _ call: String, _ path: String) -> JournalError {
        precondition(code != EBADF && code != EFAULT, "\(call) \(path): bad descriptor or buffer (errno \(code))")
        // A full disk (or quota) is a condition to wait out, not damage: callers may retry.
        let kind: JournalError.Code = code == ENOSPC || code == EDQUOT ? .noSpace : .io
        return JournalError(
            kind, path: path, message: "\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
    }

    /// Seconds on a monotonic clock, for fsync intervals and latencies.
    static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// Which file a path or descriptor refers to: `st_dev` and `st_ino`.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
}
