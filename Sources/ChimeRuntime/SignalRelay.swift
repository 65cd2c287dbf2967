import Foundation
import HelperThreads
import Synchronization

/// Turns SIGINT, SIGTERM and SIGHUP into calls on one dedicated thread (the self-pipe
/// pattern: the `sigaction` handler only writes the signal number to a pipe).
///
/// Not Dispatch signal sources: on Linux those read a `signalfd`, which sees a signal only
/// while every thread blocks it; libdispatch's fallback handler re-sends a signal caught by
/// an unblocking thread (such as the main thread) to the thread that first registered the
/// source, and a worker whose signal took that path did not stop on its first SIGTERM.
/// A handler on every thread and a pipe loses no signal, whichever thread takes it.
final class SignalRelay: Sendable {
    static let shared = SignalRelay()

    private let actions = Mutex<[Int32: [@Sendable () -> Void]]>([:])
    private let installed = Mutex<Set<Int32>>([])

    private init() {
        var descriptors: [Int32] = [0, 0]
        // The process cannot handle signals without it; an fd table that is full at start-up
        // is an environment no service command can run in.
        guard pipe(&descriptors) == 0 else { preconditionFailure("pipe() for the signal relay failed: errno \(errno)") }
        signalPipeWriteEnd.store(descriptors[1], ordering: .releasing)
        let flags = fcntl(descriptors[1], F_GETFL)
        _ = fcntl(descriptors[1], F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(descriptors[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(descriptors[1], F_SETFD, FD_CLOEXEC)
        let readEnd = descriptors[0]
        HelperThread(name: "chime-signals").start { [self] in relay(from: readEnd) }
    }

    /// Runs `action` on the relay thread each time `signalNumber` arrives.
    func onSignal(_ signalNumber: Int32, _ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0[signalNumber, default: []].append(action) }
        let isNew = installed.withLock { $0.insert(signalNumber).inserted }
        guard isNew else { return }
        // A parent may start us with the signal blocked (Foundation's `Process` launched from
        // a Dispatch thread passes its all-blocked mask on): blocked everywhere, it would stay
        // pending forever. Unblocked here and on the relay thread, some thread takes it.
        Self.unblock(signalNumber)
        var handler = sigaction()
        handler.__sigaction_handler.sa_handler = relaySignalNumber
        handler.sa_flags = SA_RESTART
        sigemptyset(&handler.sa_mask)
        sigaction(signalNumber, &handler, nil)
    }

    private static func unblock(_ signalNumber: Int32) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signalNumber)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    private func relay(from readEnd: Int32) {
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] { Self.unblock(signalNumber) }
        var signalNumber: Int32 = 0
        while true {
            let count = read(readEnd, &signalNumber, MemoryLayout<Int32>.size)
            if count < 0 && errno == EINTR { continue }
            guard count == MemoryLayout<Int32>.size else { return }
            for action in actions.withLock({ $0[signalNumber] ?? [] }) { action() }
        }
    }
}

/// The relay pipe's write end, read by the signal handler (an atomic load is signal safe).
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The `sigaction` handler: writes the signal number to the relay pipe and nothing else.
private func relaySignalNumber(_ signalNumber: Int32) {
    let savedErrno = errno
    var number = signalNumber
    _ = write(signalPipeWriteEnd.load(ordering: .acquiring), &number, MemoryLayout<Int32>.size)
    errno = savedErrno
}
