import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Process-wide signal dispositions and writes to the standard streams that fail as values.
///
/// Every Chime process ignores SIGPIPE: a write to a pipe or socket whose reader is gone is
/// then `EPIPE`, an error the writer handles (a hook that never reads its input, a log
/// collector that went away), never the death of a worker or coordinator.
public enum StandardStreams {
    /// Ignores SIGPIPE for the whole process. Call first thing in `main`; children started
    /// with ``HookProcess``-style spawns reset it to the default for themselves.
    public static func ignoreBrokenPipe() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Writes all of `bytes` to file descriptor `descriptor`, retrying short writes and `EINTR`.
    /// - Returns: 0 when everything was written, else the `errno` of the failed write
    ///   (`EPIPE` when the reader is gone).
    @discardableResult
    public static func write(_ bytes: Data, to descriptor: Int32) -> Int32 {
        bytes.withUnsafeBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return 0 }
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if count > 0 {
                    offset += count
                } else if count == -1 && errno == EINTR {
                    continue
                } else {
                    return count == -1 ? errno : EIO
                }
            }
            return 0
        }
    }

    /// Writes `text` to standard error; a failure is dropped (there is nowhere left to report it).
    public static func writeError(_ text: String) {
        write(Data(text.utf8), to: STDERR_FILENO)
    }
}
