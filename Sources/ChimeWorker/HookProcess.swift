import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One run of a command hook: `/bin/sh -c command` in a process group of its own, its
/// standard input written without blocking, its output collected (the first 4 KiB kept), and
/// the whole group killed when the time limit passes or the shell exits.
///
/// A hook that never reads its input, never exits, or starts children that outlive it costs
/// the worker at most the time limit and two pipes: writes are non-blocking (a full pipe waits
/// on `poll`, a closed one is `EPIPE`, an error value since every Chime process ignores
/// SIGPIPE), and `kill(-pgid, SIGKILL)` reaches every process the hook started in its group.
/// The shell is reaped with `waitpid`; its orphaned children are reaped by init.
struct HookProcess {
    /// How the run ended.
    enum Ending: Equatable {
        /// The shell exited with this status (0 is success).
        case exited(Int32)
        /// The shell was ended by this signal (not ours).
        case signaled(Int32)
        /// The time limit passed; the group was killed.
        case timedOut
        /// The shell could not be started (errno text).
        case notStarted(String)
    }

    /// The output kept, in bytes (the rest is read and dropped so the hook never blocks on it).
    static let keptOutputBytes = 4096

    var ending: Ending
    var output: Data

    /// Runs `command` with `environment` (`NAME=value` entries), writing `input` to its
    /// standard input, for at most `timeLimit` seconds (monotonic clock).
    static func run(_ command: String, environment: [String], input: Data, timeLimit: Double) -> HookProcess {
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        guard pipe(&inputPipe) == 0 else { return failed("pipe") }
        guard pipe(&outputPipe) == 0 else {
            close(inputPipe[0]); close(inputPipe[1])
            return failed("pipe")
        }
        // Not inherited by anything else this process starts (the spawn's dup2 clears the flag
        // on the child's own 0, 1 and 2).
        for descriptor in inputPipe + outputPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A group of its own (pgid = the shell's pid), so the limit reaches the hook's children;
        // SIGPIPE back to its default, since an ignored signal stays ignored across exec.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let arguments = ["/bin/sh", "-c", command]
        var pid: pid_t = 0
        let spawned = withCStrings(arguments) { argv in
            withCStrings(environment) { envp in
                posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
            }
        }
        close(inputPipe[0])
        close(outputPipe[1])
        guard spawned == 0 else {
            close(inputPipe[1]); close(outputPipe[0])
            return HookProcess(ending: .notStarted(String(cString: strerror(spawned))), output: Data())
        }
        var run = Exchange(input: input, inputFD: inputPipe[1], outputFD: outputPipe[0])
        _ = fcntl(run.inputFD, F_SETFL, fcntl(run.inputFD, F_GETFL) | O_NONBLOCK)
        _ = fcntl(run.outputFD, F_SETFL, fcntl(run.outputFD, F_GETFL) | O_NONBLOCK)
        let limitMilliseconds = timeLimit.isFinite ? Int64((min(max(timeLimit, 0), 31_536_000) * 1000).rounded(.up)) : 0
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(limitMilliseconds))
        var timedOut = false
        while !hasExited(pid) {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero {
                timedOut = true
                break
            }
            // Wake at least every 10 ms to notice the exit (there is no pollable child handle).
            let milliseconds = min(10, max(1, Int32(remaining.components.seconds * 1000)))
            run.exchange(waitMilliseconds: milliseconds)
        }
        // The shell has exited or its time is up: nothing of its group may run on.
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        run.drainOutput()
        run.closeAll()
        if timedOut { return HookProcess(ending: .timedOut, output: run.output) }
        let signal = status & 0x7f
        let ending: Ending = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
        return HookProcess(ending: ending, output: run.output)
    }

    private static func failed(_ call: String) -> HookProcess {
        HookProcess(ending: .notStarted("\(call): \(String(cString: strerror(errno)))"), output: Data())
    }

    /// Whether `pid` has exited, without reaping it: its pid (and so its group id) stays
    /// reserved until `waitpid`, so the group kill cannot reach a recycled process group.
    private static func hasExited(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
        return result == 0 && info._sifields._sigchld.si_pid == pid
    }

    private static func withCStrings<Result>(
        _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result
    ) -> Result {
        let pointers = strings.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        return body(pointers + [nil])
    }
}

/// The parent's ends of the hook's two pipes: input written, output read, both non-blocking.
private struct Exchange {
    var input: Data
    var written = 0
    var inputFD: Int32
    var outputFD: Int32
    var output = Data()

    init(input: Data, inputFD: Int32, outputFD: Int32) {
        self.input = input
        self.inputFD = inputFD
        self.outputFD = outputFD
        if input.isEmpty { closeInput() }
    }

    /// Waits up to `waitMilliseconds` for either pipe, then writes and reads what it can.
    mutating func exchange(waitMilliseconds: Int32) {
        var fds = [pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0)]
        if inputFD >= 0 { fds.append(pollfd(fd: inputFD, events: Int16(POLLOUT), revents: 0)) }
        _ = poll(&fds, nfds_t(fds.count), waitMilliseconds)
        if inputFD >= 0, fds[1].revents != 0 { writeInput() }
        if fds[0].revents != 0 { readOutput() }
    }

    mutating func writeInput() {
        while inputFD >= 0 && written < input.count {
            let count = input.withUnsafeBytes { bytes -> Int in
                guard let base = bytes.baseAddress else { return 0 }
                return write(inputFD, base + written, bytes.count - written)
            }
            if count > 0 {
                written += count
            } else if count == -1 && errno == EINTR {
                continue
            } else {
                // EAGAIN: the pipe is full, wait for poll. EPIPE or anything else: the hook
                // closed its input, so the rest is not wanted.
                if count == -1 && errno == EAGAIN { return }
                closeInput()
                return
            }
        }
        if written >= input.count { closeInput() }
    }

    mutating func readOutput() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while outputFD >= 0 {
            let count = read(outputFD, &buffer, buffer.count)
            if count > 0 {
                let room = HookProcess.keptOutputBytes - output.count
                if room > 0 { output.append(contentsOf: buffer.prefix(min(room, count))) }
            } else if count == -1 && errno == EINTR {
                continue
            } else {
                if count == 0 {
                    close(outputFD)
                    outputFD = -1
                }
                return
            }
        }
    }

    /// Reads what the (now ended) hook left in the output pipe, without waiting.
    mutating func drainOutput() {
        readOutput()
    }

    mutating func closeInput() {
        if inputFD >= 0 { close(inputFD) }
        inputFD = -1
    }

    mutating func closeAll() {
        closeInput()
        if outputFD >= 0 { close(outputFD) }
        outputFD = -1
    }
}
