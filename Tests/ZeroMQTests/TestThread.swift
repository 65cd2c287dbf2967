import Foundation
import Synchronization

/// A thread running one throwing body, for sockets that must live on a thread of their own.
final class TestThread: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let failure = Mutex<(any Error)?>(nil)

    private init() {}

    /// Starts `body` on a new thread named `name`.
    static func start(named name: String, _ body: @escaping @Sendable () throws -> Void) -> TestThread {
        let handle = TestThread()
        let thread = Thread {
            do {
                try body()
            } catch {
                handle.failure.withLock { $0 = error }
            }
            handle.finished.signal()
        }
        thread.name = name
        thread.start()
        return handle
    }

    /// Waits at most `timeout` for the body to return; `false` if it is still running.
    func join(timeout: Duration) -> Bool {
        finished.wait(timeout: .now() + .nanoseconds(timeout.wholeNanoseconds)) == .success
    }

    /// What the body threw, if it has returned by throwing.
    var error: (any Error)? {
        failure.withLock { $0 }
    }
}
