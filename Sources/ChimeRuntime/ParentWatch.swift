import Foundation
import HelperThreads

/// Stops a child process whose starter is gone: a process started by `ChildSupervisor` (a
/// test's cluster, `chime up`, `chime bench`) carries its starter's pid in
/// `CHIME_PARENT_PID`, and when that process has exited the child sends itself SIGTERM, so
/// its usual clean shutdown runs (and SIGKILL 30 s later if that shutdown hangs).
///
/// Without it a starter that dies without stopping its children (a crashed test binary, a
/// `chime up` killed with SIGKILL) leaves coordinators and workers running, holding ports and
/// store locks. `PR_SET_PDEATHSIG` is not used: Foundation's `Process` gives no hook in the
/// child before `exec`, and the kernel sends that signal when the parent *thread* exits,
/// which a pool thread that spawned the child may do while the process lives on.
///
/// The starter is read from `/proc/PID/stat`: it is gone when the file is missing, its state
/// is zombie or dead (`Z`, `X`: a starter that exited but is not reaped yet), or its start
/// time (field 22, clock ticks since boot) differs from the one read at start-up (the pid
/// was reused). The watch follows the starter, not `getppid()`, so a wrapper between them
/// (`perf record`, `unshare`) does not count as the parent going away. Polled every 0.5 s.
public enum ParentWatch {
    /// The environment variable naming the starter's pid (a decimal integer above 1).
    public static let environmentKey = "CHIME_PARENT_PID"

    /// What `/proc/PID/stat` says of a process: its state letter and start time in clock
    /// ticks since boot; `nil` when the text is not such a line.
    struct Stat: Equatable {
        var state: Character
        var startTime: UInt64

        /// Whether the process has exited (a zombie waiting for its parent, or dead).
        var hasExited: Bool { state == "Z" || state == "X" }

        /// Parses a `/proc/PID/stat` line. The command name (field 2) is in parentheses and
        /// may itself hold spaces and parentheses, so the fields are read after the last `)`.
        init?(parsing text: String) {
            guard let close = text.lastIndex(of: ")") else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
            // After the name: state is field 3, start time field 22, so indices 0 and 19.
            guard fields.count > 19, let state = fields[0].first, fields[0].count == 1,
                let startTime = UInt64(fields[19])
            else { return nil }
            self.state = state
            self.startTime = startTime
        }

        /// Reads `/proc/<pid>/stat`; `nil` when the process is gone or the file is unreadable.
        static func read(pid: Int32) -> Stat? {
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat"),
                let text = String(data: data, encoding: .utf8)
            else { return nil }
            return Stat(parsing: text)
        }
    }

    /// The starter's pid from `environment`: `nil` when the variable is absent or not a
    /// decimal pid above 1 (pid 1 is init, which never goes away).
    static func parentPID(in environment: [String: String]) -> Int32? {
        guard let text = environment[environmentKey], let pid = Int32(text), pid > 1 else { return nil }
        return pid
    }

    /// Whether the starter seen at start-up as `initial` is gone now that `current` is read.
    static func isGone(initial: Stat?, current: Stat?) -> Bool {
        guard let initial, let current else { return true }
        return current.hasExited || current.startTime != initial.startTime
    }

    /// Starts the watch when `environment` names a starter; does nothing otherwise. A starter
    /// already gone at start-up stops this process at once.
    public static func startIfAsked(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let pid = parentPID(in: environment) else { return }
        let initial = Stat.read(pid: pid)
        HelperThread(name: "chime-parent-watch").start {
            while !isGone(initial: initial, current: Stat.read(pid: pid)) {
                usleep(500_000)
            }
            log("the process that started this one (pid \(pid)) is gone; stopping")
            kill(getpid(), SIGTERM)
            sleep(30)
            log("still running 30 s after SIGTERM; SIGKILL")
            kill(getpid(), SIGKILL)
        }
    }

    private static func log(_ message: String) {
        FileHandle.standardError.write(Data("chime: \(message)\n".utf8))
    }
}
