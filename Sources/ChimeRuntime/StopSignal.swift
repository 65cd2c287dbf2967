import Dispatch
import Foundation
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

/// Routes SIGINT and SIGTERM to `stop.requestStop()` through Dispatch sources (never work in
/// the signal handler itself). A second signal of either kind exits at once with status 130.
///
/// Call from any thread; the sources live for the rest of the process.
public func installTerminationHandlers(_ stop: StopSignal) {
    for signalNumber in [SIGINT, SIGTERM] {
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler { @Sendable in
            if stop.isStopRequested { exit(130) }
            stop.requestStop()
        }
        source.resume()
        SignalSources.keep(source)
    }
}

/// Keeps the signal sources alive for the process's life.
/// `@unchecked Sendable`: `sources` is only read or written while holding `lock`.
final class SignalSources: @unchecked Sendable {
    private let lock = NSLock()
    private var sources: [any DispatchSourceSignal] = []
    static let shared = SignalSources()

    static func keep(_ source: any DispatchSourceSignal) {
        shared.lock.withLock { shared.sources.append(source) }
    }
}

/// Runs `action` on a Dispatch queue each time the process receives SIGHUP (the
/// conventional "reload your configuration" signal), never inside the signal handler.
///
/// Call from any thread; the source lives for the rest of the process.
public func installReloadHandler(_ action: @escaping @Sendable () -> Void) {
    signal(SIGHUP, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
    source.setEventHandler { @Sendable in action() }
    source.resume()
    SignalSources.keep(source)
}
