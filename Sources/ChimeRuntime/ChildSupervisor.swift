import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One child process under supervision, over all its incarnations: started from a fixed
/// launch description, stopped by its own pid (SIGTERM, then SIGKILL after a grace period),
/// reaped, and restarted with exponential back-off (`RestartBackoff`).
///
/// Every place that runs child processes uses it (`chime up`, the test cluster, the
/// benchmark cluster, the benchmark's pyzmq subscriber), so each one stops its children
/// the same way and can say when a child ignored SIGTERM and had to be killed.
///
/// Reaping is Foundation's `Process` (it `waitpid`s its own children); this type never
/// calls `waitpid` itself. Not thread-safe: one thread drives a supervisor.
public final class ChildSupervisor {
    /// What to start.
    public struct Launch: Sendable {
        /// Where the child's standard output and error go.
        public enum Output: Sendable {
            /// The parent's own.
            case inherit
            /// Appended to this file (created when missing), both streams.
            case file(URL)
            /// `/dev/null`.
            case discard
        }

        /// The executable.
        public var executable: URL
        /// Its arguments (without the executable).
        public var arguments: [String]
        /// Variables added to (or replacing in) the parent's environment.
        public var environment: [String: String]
        /// The child's working directory; `nil`: the parent's.
        public var currentDirectory: URL?
        /// Where its output goes.
        public var output: Output

        /// Creates a launch description.
        public init(
            executable: URL, arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
            output: Output = .inherit
        ) {
            self.executable = executable
            self.arguments = arguments
            self.environment = environment
            self.currentDirectory = currentDirectory
            self.output = output
        }
    }

    /// How an incarnation ended.
    public struct Exit: Hashable, Sendable, CustomStringConvertible {
        /// The exit status, or the signal number when `signal` is set.
        public var status: Int32
        /// Whether a signal ended it (then `status` is the signal number).
        public var isSignal: Bool
        /// Whether `stop` had to send SIGKILL because SIGTERM did not end it in its grace period.
        public var neededKill: Bool

        /// Creates the value from its fields (see each property for meaning).
        public init(status: Int32, isSignal: Bool, neededKill: Bool = false) {
            self.status = status
            self.isSignal = isSignal
            self.neededKill = neededKill
        }

        /// Such as "exit 0", "signal 9" or "signal 9 (SIGKILL after the grace period)".
        public var description: String {
            (isSignal ? "signal \(status)" : "exit \(status)") + (neededKill ? " (SIGKILL after the grace period)" : "")
        }
    }

    /// The child's name (for logs and reports).
    public let name: String
    /// What each start runs; a change applies from the next start.
    public var launch: Launch
    /// The pauses between restarts.
    public var backoff: RestartBackoff
    /// Pipes for the child's standard output and error instead of `launch.output` (the
    /// caller reads them; every incarnation writes into the same pipes); `nil`: use `launch.output`.
    public var pipes: (output: Pipe, error: Pipe)?
    /// A pipe for the child's standard input (the caller writes it); `nil`: `/dev/null`.
    public var standardInput: Pipe?
    /// The current (or last) incarnation.
    public private(set) var process: Process?
    /// How many times the child was started.
    public private(set) var starts = 0
    /// How the last incarnation ended, once it has (and was noticed by `exit`, `stop` or `kill`).
    public private(set) var lastExit: Exit?
    /// When the current incarnation started (monotonic).
    private var startedAt: ContinuousClock.Instant?
    /// When the next restart may happen (monotonic); `nil` before the first exit.
    private var restartAt: ContinuousClock.Instant?
    /// Restarts since the child last ran long enough to reset the back-off.
    private var consecutiveRestarts = 0
    private var didKill = false

    /// Makes a supervisor; nothing starts until `start()`.
    public init(name: String, launch: Launch, backoff: RestartBackoff = RestartBackoff()) {
        self.name = name
        self.launch = launch
        self.backoff = backoff
    }

    deinit { stop(grace: 5) }

    /// The running incarnation's pid; `nil` when none runs.
    public var pid: Int32? { isRunning ? process?.processIdentifier : nil }

    /// Whether an incarnation runs (a stopped one, SIGSTOP, counts as running).
    public var isRunning: Bool { process?.isRunning ?? false }

    /// Starts a new incarnation.
    /// - Precondition: none is running.
    /// - Throws: what `Process.run` throws (no such executable, out of processes) and
    ///   file errors opening the log.
    @discardableResult
    public func start() throws -> Process {
        precondition(!isRunning, "\(name) is already running")
        let process = Process()
        process.executableURL = launch.executable
        process.arguments = launch.arguments
        // The child stops by itself if this process dies without stopping it (`ParentWatch`).
        let watch = [ParentWatch.environmentKey: String(getpid())]
        process.environment = ProcessInfo.processInfo.environment.merging(watch.merging(launch.environment) { $1 }) { $1 }
        if let directory = launch.currentDirectory { process.currentDirectoryURL = directory }
        process.standardInput = standardInput ?? FileHandle.nullDevice
        var logHandle: FileHandle?
        if let pipes {
            process.standardOutput = pipes.output
            process.standardError = pipes.error
        } else {
            switch launch.output {
            case .inherit:
                break
            case .discard:
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
            case .file(let url):
                if !FileManager.default.fileExists(atPath: url.path) {
                    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
                }
                let handle = try FileHandle(forWritingTo: url)
                try handle.seekToEnd()
                process.standardOutput = handle
                process.standardError = handle
                logHandle = handle
            }
        }
        // The child has its own copy of the log's descriptor once it runs.
        defer { try? logHandle?.close() }
        try Self.withTerminationSignalsUnblocked { try process.run() }
        self.process = process
        starts += 1
        didKill = false
        lastExit = nil
        startedAt = .now
        return process
    }

    /// Sends `signal` (SIGSTOP, SIGCONT, SIGHUP, …) to the running incarnation by its pid;
    /// does nothing when none runs.
    public func signal(_ signal: Int32) {
        guard let pid else { return }
        sendSignal(signal, to: pid)
    }

    /// How the incarnation ended, once it has; `nil` while it runs or before the first start.
    /// Noticing an exit schedules the next restart (`restartIfDue`).
    public var exit: Exit? {
        guard let process, !process.isRunning else { return nil }
        if lastExit == nil {
            lastExit = Exit(
                status: process.terminationStatus, isSignal: process.terminationReason == .uncaughtSignal,
                neededKill: didKill)
            scheduleRestart()
        }
        return lastExit
    }

    /// Stops the running incarnation: SIGTERM, then SIGKILL when it is still running after
    /// `grace` seconds; waits until it is reaped.
    /// - Returns: how it ended (`neededKill` when SIGKILL was needed); `nil` when it was never started.
    @discardableResult
    public func stop(grace: Double) -> Exit? {
        Self.stop([self], grace: grace)[0]
    }

    /// Stops several children at once: SIGTERM to all, then SIGKILL to those still running
    /// after `grace` seconds; waits until each is reaped.
    /// - Returns: each one's exit, in order (`nil` for one never started).
    @discardableResult
    public static func stop(_ children: [ChildSupervisor], grace: Double) -> [Exit?] {
        for child in children { child.signal(SIGTERM) }
        let deadline = ContinuousClock.now + seconds(grace)
        while ContinuousClock.now < deadline && children.contains(where: \.isRunning) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        for child in children where child.isRunning {
            child.didKill = true
            // A stopped (SIGSTOP) process dies on SIGKILL as well.
            child.signal(SIGKILL)
        }
        for child in children { child.process?.waitUntilExit() }
        return children.map(\.exit)
    }

    /// Kills the running incarnation with SIGKILL (a crash: no shutdown code runs) and waits
    /// until it is reaped.
    /// - Returns: how it ended; `nil` when it was never started.
    @discardableResult
    public func kill() -> Exit? {
        signal(SIGKILL)
        process?.waitUntilExit()
        return exit
    }

    /// Waits until the incarnation exits, at most `timeout` seconds.
    /// - Returns: how it ended; `nil` when it still runs (or was never started).
    public func waitForExit(timeout: Double) -> Exit? {
        let deadline = ContinuousClock.now + seconds(timeout)
        while isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return exit
    }

    /// Starts the child again when it has exited and its back-off pause has passed.
    /// - Returns: whether it was started.
    /// - Throws: as `start()`.
    @discardableResult
    public func restartIfDue(at now: ContinuousClock.Instant = .now) throws -> Bool {
        guard process != nil, exit != nil, let restartAt, now >= restartAt else { return false }
        try start()
        return true
    }

    /// How long until the next restart (zero when due); `nil` while running or never started.
    public var restartDelay: Duration? {
        guard exit != nil, let restartAt else { return nil }
        return max(.zero, restartAt - .now)
    }

    /// Runs `body` (the spawn) with SIGTERM, SIGINT and SIGHUP unblocked on this thread: a
    /// child inherits its parent thread's signal mask, and a Dispatch or test-runner thread
    /// may block them, which would leave a child (one that does not unblock them itself,
    /// such as `sleep`) deaf to the SIGTERM that `stop` sends.
    private static func withTerminationSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&unblocked, number) }
        var previous = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &unblocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }

    private func scheduleRestart() {
        let now = ContinuousClock.now
        if let startedAt, now - startedAt >= seconds(backoff.resetAfter) { consecutiveRestarts = 0 }
        restartAt = now + seconds(backoff.delay(afterRestarts: consecutiveRestarts))
        consecutiveRestarts += 1
    }
}

/// The pauses between restarts of a child that keeps exiting: `initial` seconds, doubling up
/// to `maximum`; an incarnation that ran `resetAfter` seconds starts the sequence over
/// (systemd's `RestartSec=` with `RestartSteps=`/`RestartMaxDelaySec=`, Erlang/OTP
/// supervisors' restart intensity).
public struct RestartBackoff: Hashable, Sendable {
    /// The first pause, in seconds.
    public var initial: Double
    /// The longest pause, in seconds.
    public var maximum: Double
    /// How long an incarnation must run for the next pause to be `initial` again, in seconds.
    public var resetAfter: Double

    /// A back-off of `initial` (default 0.2 s) doubling to `maximum` (default 5 s), reset
    /// after `resetAfter` (default 10 s) of running.
    public init(initial: Double = 0.2, maximum: Double = 5, resetAfter: Double = 10) {
        self.initial = initial
        self.maximum = maximum
        self.resetAfter = resetAfter
    }

    /// The pause before restart number `restarts + 1` of a run of restarts, in seconds.
    public func delay(afterRestarts restarts: Int) -> Double {
        min(maximum, initial * pow(2, Double(min(restarts, 30))))
    }
}

/// `kill(2)`, named apart from `ChildSupervisor.kill()`.
private func sendSignal(_ signal: Int32, to pid: Int32) {
    _ = kill(pid, signal)
}

/// `value` seconds as a `Duration`, clamped to 0…10⁹ s (so `.infinity` waits "forever").
private func seconds(_ value: Double) -> Duration {
    .milliseconds(Int64(min(max(0, value), 1e9) * 1000))
}
