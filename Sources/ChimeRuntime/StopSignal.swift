import Dispatch
import Foundation
import HelperThreads
import Synchronization

/// A one-way flag that asks a service loop to finish, settable from any thread.
public final class StopSignal: Sendable {
    private let flag = Atomic<Bool>(false)
    private let handlers = Mutex<[@Sendable () -> Void]>([])

    /// The defaults shown on each property.
    public init() {}

    /// Whether a stop was requested.
    public var isStopRequested: Bool { flag.load(ordering: .acquiring) }

    /// Requests the stop and runs the registered handlers once.
    public func requestStop() {
        let wasStopped = flag.exchange(true, ordering: .acquiringAndReleasing)
        guard !wasStopped else { return }
        for handler in handlers.withLock({ $0 }) { handler() }
    }

    /// Runs `handler` when the stop is requested (at once if it already was).
    public func onStop(_ handler: @escaping @Sendable () -> Void) {
        if isStopRequested {
            handler()
            return
        }
        handlers.withLock { $0.append(handler) }
    }
}

/// Routes SIGINT and SIGTERM to `stop.requestStop()` on the signal relay's thread (never
/// work in the signal handler itself). A second signal of either kind exits at once with
/// status 130. After the first signal the process exits within `exitDeadline` seconds: if
/// the service has not returned by then (a blocked call that ignores the stop), a line goes
/// to standard error and the process exits with status 70 (`EX_SOFTWARE`), so no second
/// signal is ever needed. The default, 25 s, leaves a coordinator time to finish a large
/// snapshot and drain a slow disk, and stays under Kubernetes' 30 s grace period (systemd
/// waits 90 s).
///
/// Call from any thread; the handlers stay for the rest of the process.
public func installTerminationHandlers(_ stop: StopSignal, exitDeadline: Double = 25) {
    for signalNumber in [SIGINT, SIGTERM] {
        SignalRelay.shared.onSignal(signalNumber) {
            if stop.isStopRequested { exit(130) }
            stop.requestStop()
            startExitGuard(seconds: exitDeadline, signalNumber: signalNumber)
        }
    }
}

/// Exits the process `seconds` after a termination signal if it is still running then.
private func startExitGuard(seconds: Double, signalNumber: Int32) {
    HelperThread(name: "chime-exit-guard").start {
        Thread.sleep(forTimeInterval: max(0, seconds))
        let message = "chime: still running \(seconds) s after signal \(signalNumber); exiting with status 70\n"
        StandardStreams.writeError(message)
        _exit(70)
    }
}

/// Runs `action` on the signal relay's thread each time the process receives SIGHUP (the
/// conventional "reload your configuration" signal), never inside the signal handler.
///
/// Call from any thread; the handler stays for the rest of the process.
public func installReloadHandler(_ action: @escaping @Sendable () -> Void) {
    SignalRelay.shared.onSignal(SIGHUP, action)
}
