import Foundation
import HelperThreads
import Synchronization
import Testing

@Suite struct HelperThreadTests {
    struct SetUpFailed: Error, Equatable { var reason: String }

    /// The kernel's name of the calling thread (what `top -H` shows), at most 15 bytes.
    static func currentThreadName() -> String? {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }

    @Test func runsTheBodyOnANamedThreadAndJoinsIt() {
        let seen = Mutex<(name: String?, isMain: Bool)>((nil, true))
        let thread = HelperThread(name: "helper-test")
        thread.start { seen.withLock { $0 = (Self.currentThreadName(), Thread.isMainThread) } }
        thread.join()
        #expect(seen.withLock { $0.name } == "helper-test")
        #expect(seen.withLock { $0.isMain } == false)
        // A second join returns at once.
        #expect(thread.join(timeout: .zero))
    }

    @Test func joinWithADeadlineReportsAThreadStillRunning() {
        let release = DispatchSemaphore(value: 0)
        let thread = HelperThread(name: "helper-blocked")
        thread.start { release.wait() }
        #expect(thread.join(timeout: .milliseconds(50)) == false)
        release.signal()
        #expect(thread.join(timeout: .seconds(10)))
    }

    @Test func setUpRunsOnTheThreadAndIsDoneWhenStartReturns() throws {
        let order = Mutex<[String]>([])
        let setUpThread = Mutex<String?>(nil)
        let thread = HelperThread(name: "helper-setup")
        try thread.start { () throws(SetUpFailed) -> Int in
            order.withLock { $0.append("setUp") }
            setUpThread.withLock { $0 = Self.currentThreadName() }
            return 42
        } run: { value in
            order.withLock { $0.append("run \(value)") }
        }
        // `setUp` has returned by now; `run` may still be under way.
        #expect(order.withLock { $0.first } == "setUp")
        #expect(setUpThread.withLock { $0 } == "helper-setup")
        thread.join()
        #expect(order.withLock { $0 } == ["setUp", "run 42"])
    }

    @Test func aFailedSetUpIsThrownByStartAndRunIsNeverCalled() {
        let ran = Atomic<Bool>(false)
        let thread = HelperThread(name: "helper-failing")
        var thrown: SetUpFailed?
        do {
            try thread.start { () throws(SetUpFailed) -> Int in
                throw SetUpFailed(reason: "address in use")
            } run: { _ in
                ran.store(true, ordering: .relaxed)
            }
        } catch {
            thrown = error
        }
        #expect(thrown == SetUpFailed(reason: "address in use"))
        #expect(thread.join(timeout: .seconds(10)), "the thread ended")
        #expect(ran.load(ordering: .relaxed) == false)
    }

    @Test func aLoweredThreadRunsAtNiceTen() {
        let nice = Mutex<Int32?>(nil)
        let thread = HelperThread(name: "helper-nice", priority: .lowered)
        thread.start {
            errno = 0
            let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            nice.withLock { $0 = errno == 0 ? value : nil }
        }
        thread.join()
        let processNice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #expect(nice.withLock { $0 } == min(19, processNice + 10))
    }
}
