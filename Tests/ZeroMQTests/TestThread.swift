import Foundation
import HelperThreads
import Synchronization

/// A ``HelperThread`` running one throwing body, for sockets that must live on a thread of
/// their own; what the body throws is kept for the test to check.
final class TestThread: Sendable {
    private let thread: HelperThread
    private let failure = Mutex<(any Error)?>(nil)

    private init(name: String) { thread = HelperThread(name: name) }

    /// Starts `body` on a new thread named `name`.
    static func start(named name: String, _ body: @escaping @Sendable () throws -> Void) -> TestThread {
        let handle = TestThread(name: name)
        handle.thread.start {
            do {
                try body()
            } catch {
                handle.failure.withLock { $0 = error }
            }
        }
        return handle
    }

    /// Waits at most `timeout` for the body to return; `false` if it is still running.
    func join(timeout: Duration) -> Bool { thread.join(timeout: timeout) }

    /// What the body threw, if it has returned by throwing.
    var error: (any Error)? {
        failure.withLock { $0 }
    }
}
