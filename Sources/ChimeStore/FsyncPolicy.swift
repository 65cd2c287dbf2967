/// When `FileJournal.sync()` forces written records to stable storage.
///
/// Under every policy `sync()` hands the buffered records to the kernel with one write, so
/// they survive a crash of the process (`kill -9`); the policy decides what survives a
/// crash of the machine (power loss, kernel panic).
public enum FsyncPolicy: Hashable, Sendable, CustomStringConvertible {
    /// `fdatasync` on every `sync()` that wrote something: a synced entry is durable.
    /// Group commit is the caller's part: append a whole loop turn, then sync once.
    case always
    /// `fdatasync` from a `sync()` call when at least `milliseconds` have passed since the
    /// last one: a power loss may lose up to that long of synced entries. Call `sync()` on
    /// idle ticks too, so the last writes of a burst do not wait for the next burst.
    case interval(milliseconds: Int)
    /// Never `fdatasync` (the kernel writes back when it likes, typically within 30 s).
    case never

    /// `always`, `never` or `interval(N ms)`.
    public var description: String {
        switch self {
        case .always: "always"
        case .never: "never"
        case .interval(let milliseconds): "interval(\(milliseconds) ms)"
        }
    }
}
