import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A named thread a process starts for one job (a ZAP handler, the event forwarder's
/// proxy, the journal writer, a signal relay), with the two hand-shakes such threads need:
/// a start-up that either succeeds or hands its error back to the starter, and an end the
/// owner can wait for, with or without a deadline.
///
/// The one way Chime starts a thread. Made first and started once: an owner can keep it
/// in a `let` and start it at the end of its `init`, once the body may capture `self`.
/// The body runs once; when it returns the thread ends and ``join()`` returns.
///
/// ```swift
/// let thread = HelperThread(name: "chime-journal")
/// try thread.start(setUp: { try makeSignalSocket() }, run: { socket in serve(socket) })
/// thread.join(timeout: .seconds(2))
/// ```
public final class HelperThread: Sendable {
    /// How the thread is scheduled.
    public enum Priority: Sendable {
        /// The process's own priority.
        case normal
        /// Nice +10 for this thread only, so its work yields to the process's loop: on Linux
        /// the nice value is a per-thread attribute and `setpriority(PRIO_PROCESS, 0, …)`
        /// sets the calling thread's (setpriority(2), NOTES). Best effort: failing leaves
        /// the default priority.
        case lowered
    }

    /// The thread's name, as `top -H`, `/proc/PID/task/TID/comm` and a debugger show it.
    public let name: String
    /// How the thread is scheduled.
    public let priority: Priority
    private let isStarted = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// A thread not yet running; ``start(_:)`` runs it.
    public init(name: String, priority: Priority = .normal) {
        self.name = name
        self.priority = priority
    }

    /// Runs `body` on the new thread. Call once.
    public func start(_ body: @escaping @Sendable () -> Void) {
        let (isFirstStart, _) = isStarted.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        precondition(isFirstStart, "helper thread \(name) started twice")
        let finished = finished
        let priority = priority
        let name = name
        let thread = Thread {
            Self.nameCurrentThread(name)
            if priority == .lowered { Self.lowerPriorityOfCurrentThread() }
            body()
            finished.signal()
        }
        thread.start()
    }

    /// Runs `setUp` and then `run` with what it made on the new thread, and returns once
    /// `setUp` has returned: what the thread owns (sockets bound, files opened) is made on
    /// the thread that uses it, and ready when this returns. Call once.
    /// - Throws: what `setUp` threw; the thread has then ended without calling `run`.
    public func start<Resource, Failure: Error>(
        setUp: @escaping @Sendable () throws(Failure) -> Resource,
        run: @escaping @Sendable (Resource) -> Void
    ) throws(Failure) {
        let ready = DispatchSemaphore(value: 0)
        let failure = Mutex<Failure?>(nil)
        start {
            let resource: Resource
            do throws(Failure) {
                resource = try setUp()
            } catch {
                failure.withLock { $0 = error }
                ready.signal()
                return
            }
            ready.signal()
            run(resource)
        }
        ready.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Waits until the body has returned (at once if it already has).
    public func join() {
        finished.wait()
        // Left signalled, so a later join returns at once too.
        finished.signal()
    }

    /// Waits at most `timeout` for the body to return.
    /// - Returns: whether it returned in time.
    @discardableResult
    public func join(timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let deadline = DispatchTime.now() + Double(seconds) + Double(attoseconds) * 1e-18
        guard finished.wait(timeout: deadline) == .success else { return false }
        finished.signal()
        return true
    }

    /// Gives the calling thread its kernel name (at most 15 bytes on Linux). Set from the
    /// thread itself: on Linux a `Thread.name` given before `start()` never reaches the
    /// kernel (the thread kept its creator's, such as a Dispatch worker's `…root.default-qos`),
    /// and one set on `Thread.current` early in the body sometimes does not either. Best
    /// effort: a name that cannot be set leaves the inherited one.
    private static func nameCurrentThread(_ name: String) {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        #else
        Thread.current.name = name
        #endif
    }

    private static func lowerPriorityOfCurrentThread() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }
}
