import Foundation
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// Encodes long replies (pages of `list`, dead letters and events) on a thread of its own, so
/// the coordinator's loop spends no time on their JSON: the loop decides the page (the state
/// is the one truth), hands the outcome over with `submit` and keeps firing; the encoder
/// turns it into the reply's bytes (`ControlOutcome.encodedReply(requestId:)`, pure) and wakes
/// the loop through `signalEndpoint` (inproc PUSH → the loop's PULL, as `JournalWriter` does),
/// which takes the bytes with `take` and sends them in order.
///
/// The thread runs at a lower scheduling priority (nice +10) than the loop: on a busy machine
/// the loop's turns win the core and a page waits, not a firing.
///
/// Thread safety: the queue and the finished replies are guarded by one condition lock; the
/// signal socket is used by the encoder thread only (moved to it at start).
final class ReplyEncoder: @unchecked Sendable {
    /// Outcomes with at least this many items are encoded here; smaller ones cost the loop
    /// less than the hand-over.
    static let minimumItems = 32

    private let condition = NSCondition()
    private var queue: [(job: UInt64, outcome: ControlOutcome, requestId: String?)] = []
    private var finished: [UInt64: Data] = [:]
    private var submitted: UInt64 = 0
    /// How many jobs were encoded (taken back or not).
    private var encoded: UInt64 = 0
    private var isStopping = false
    private let stopped = DispatchSemaphore(value: 0)

    /// Starts the encoder thread.
    /// - Parameters:
    ///   - context: the ZeroMQ context the loop's PULL socket lives in.
    ///   - signalEndpoint: the inproc endpoint the loop has bound a PULL socket to.
    /// - Throws: `ZeroMQError` when the signal socket cannot be made or connected.
    init(context: Context, signalEndpoint: String) throws {
        try SignalingThread.start(
            name: "chime-replies", context: context, signalEndpoint: signalEndpoint, lowerPriority: true, finished: stopped
        ) { [self] signal in run(signal: signal) }
    }

    /// Whether `outcome` is long enough to be encoded here.
    static func isLong(_ outcome: ControlOutcome) -> Bool {
        switch outcome {
        case .listed(let page): page.count >= minimumItems
        case .deadLetters(let result): result.firings.count >= minimumItems
        case .events(let result): result.events.count >= minimumItems
        default: false
        }
    }

    /// Queues an outcome for encoding; returns the job number `take` hands its bytes back by.
    func submit(_ outcome: ControlOutcome, requestId: String?) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        submitted += 1
        queue.append((submitted, outcome, requestId))
        condition.signal()
        return submitted
    }

    /// The reply's bytes once encoded (removed from the encoder), else `nil`.
    func take(_ job: UInt64) -> Data? {
        condition.lock()
        defer { condition.unlock() }
        return finished.removeValue(forKey: job)
    }

    /// Waits until every submitted outcome is encoded (for the replies sent at shutdown).
    func drain() {
        condition.lock()
        defer { condition.unlock() }
        while encoded < submitted { condition.wait() }
    }

    /// Encodes what is queued, then stops the thread and waits for it.
    func stop() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        condition.unlock()
        stopped.wait()
    }

    private func run(signal: Socket) {
        while true {
            condition.lock()
            while queue.isEmpty && !isStopping { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            let (job, outcome, requestId) = queue.removeFirst()
            condition.unlock()
            let body = outcome.encodedReply(requestId: requestId)
            condition.lock()
            finished[job] = body
            encoded += 1
            condition.broadcast()
            condition.unlock()
            // A full signal queue already holds a wake-up for the loop.
            _ = try? signal.send(Data(), dontWait: true)
        }
    }
}
