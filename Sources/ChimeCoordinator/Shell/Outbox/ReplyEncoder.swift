import Foundation
import HelperThreads
import ZeroMQ

/// Encodes long replies (pages of `list`, dead letters and events) on a thread of its own, so
/// the coordinator's loop spends no time on their JSON: the loop decides the page (the state
/// is the one truth), hands the outcome over with `submit` and keeps firing; the encoder
/// turns it into the reply's bytes (`ControlOutcome.encodedReply(requestId:maxPageBytes:)`, pure) and wakes
/// the loop through `signalEndpoint` (inproc PUSH → the loop's PULL, as `JournalWriter` does),
/// which takes the bytes with `take` and sends them in order.
///
/// The thread runs at a lower scheduling priority (nice +10) than the loop: on a busy machine
/// the loop's turns win the core and a page waits, not a firing.
///
/// Thread safety: a `BackgroundQueue`.
final class ReplyEncoder: @unchecked Sendable {
    /// Outcomes with at least this many items are encoded here; smaller ones cost the loop
    /// less than the hand-over.
    static let minimumItems = 32

    /// The most outcomes handed over and not taken back as bytes; past it the loop encodes
    /// long replies itself (``Outbox/appendReply(_:requestId:to:after:)``), inside its turn's
    /// budget for serving requests. A flood of page requests then costs the loop's time, which
    /// is bounded, instead of piling up outcomes (each holds its page's items, up to 10,000
    /// reminders) faster than the thread encodes them: ten connections asking for 300 pages each
    /// left 1,600 outcomes waiting, +80 to +116 MiB (debug build, issue 37).
    static let maximumBacklog = 16

    /// Outcomes handed over and not taken back yet.
    var backlog: Int { jobs.backlog }

    private let jobs: BackgroundQueue<(outcome: ControlOutcome, requestId: String?), Data>

    /// Starts the encoder thread.
    /// - Parameters:
    ///   - context: the ZeroMQ context the loop's PULL socket lives in.
    ///   - signalEndpoint: the inproc endpoint the loop has bound a PULL socket to.
    ///   - maxReplyBytes: the bound of one page's reply, in bytes (`limits.maxReplyBytes`).
    /// - Throws: `ZeroMQError` when the signal socket cannot be made or connected.
    init(context: Context, signalEndpoint: String, maxReplyBytes: Int) throws {
        jobs = try BackgroundQueue(name: "chime-replies", context: context, signalEndpoint: signalEndpoint, priority: .lowered) {
            $0.outcome.encodedReply(requestId: $0.requestId, maxPageBytes: maxReplyBytes)
        }
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
    func submit(_ outcome: ControlOutcome, requestId: String?) -> UInt64 { jobs.submit((outcome, requestId)) }

    /// The reply's bytes once encoded (removed from the encoder), else `nil`.
    func take(_ job: UInt64) -> Data? { jobs.take(job) }

    /// Waits until every submitted outcome is encoded (for the replies sent at shutdown).
    func drain() { jobs.drain() }

    /// Encodes what is queued, then stops the thread and waits for it.
    func stop() { jobs.stop() }
}
