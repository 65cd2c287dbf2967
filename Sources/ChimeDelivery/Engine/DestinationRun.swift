import ChimeCore
import ChimeWire
import Foundation

/// The attempts at one destination of one firing: what each result means for the next step.
/// Pure (time and the jitter's draw passed in), so the retry rules are tested without a clock.
///
/// A delivered, refused or removed result ends the run; a retryable one schedules the next
/// attempt after ``RetrySchedule/delay(afterAttempt:retryAfter:unit:)``, unless the attempts
/// are spent or the next attempt would come after `deadline` (past which the firing is stale
/// and its lease runs out: another worker gets it), in which case the run gives up.
public struct DestinationRun: Sendable {
    /// What to do after a result.
    public enum Step: Sendable, Equatable {
        /// The destination has its outcome.
        case finished(DestinationOutcome)
        /// Try again after this many seconds.
        case retry(after: Double)
    }

    /// Where to.
    public let destination: Destination
    /// The retry rules.
    public let schedule: RetrySchedule
    /// After this monotonic instant (seconds) nothing is sent.
    public let deadline: Double
    /// Which worker makes the attempts (recorded with each).
    public let worker: WorkerID
    /// The attempts so far, oldest first.
    public private(set) var attempts: [DeliveryAttemptRecord] = []

    /// A run that has made no attempt yet.
    public init(destination: Destination, schedule: RetrySchedule, deadline: Double, worker: WorkerID) {
        self.destination = destination
        self.schedule = schedule
        self.deadline = deadline
        self.worker = worker
    }

    /// The number the next attempt gets (1 for the first).
    public var nextNumber: Int { attempts.count + 1 }

    /// The outcome when the next attempt may not be sent at `monotonic` (past `deadline`);
    /// `nil` when it may.
    public func expiry(at monotonic: Double) -> DestinationOutcome? {
        guard monotonic >= deadline else { return nil }
        return outcome(.gaveUp, reason: "not sent: the firing is past its delivery deadline\(lastError.map { "; last: \($0)" } ?? "")")
    }

    /// Records the result of attempt ``nextNumber`` that ended at `now` (UTC) and `monotonic`
    /// (seconds), and says what comes next.
    /// - Parameter unit: the jitter's draw, in 0..<1.
    public mutating func record(_ result: DeliveryResult, at now: Date, monotonic: Double, unit: Double) -> Step {
        switch result {
        case .delivered(let status):
            attempts.append(DeliveryAttemptRecord(at: now, worker: worker, number: nextNumber, status: status, error: nil))
            return .finished(outcome(.delivered, reason: nil))
        case .refused(let status, let reason, let removesDestination):
            attempts.append(DeliveryAttemptRecord(at: now, worker: worker, number: nextNumber, status: status, error: reason))
            return .finished(outcome(removesDestination ? .removed : .refused, reason: reason))
        case .retry(let status, let reason, let retryAfter):
            attempts.append(DeliveryAttemptRecord(at: now, worker: worker, number: nextNumber, status: status, error: reason))
            guard attempts.count < schedule.maximumAttempts else {
                return .finished(outcome(.gaveUp, reason: "gave up after \(attempts.count) attempts; last: \(reason)"))
            }
            let delay = schedule.delay(afterAttempt: attempts.count, retryAfter: retryAfter, unit: unit)
            guard monotonic + delay < deadline else {
                let wait = String(format: "%.1f", delay)
                return .finished(outcome(
                    .gaveUp, reason: "gave up after \(attempts.count) attempts: the next (in \(wait) s) would pass the delivery deadline; last: \(reason)"))
            }
            return .retry(after: delay)
        }
    }

    private var lastError: String? { attempts.last?.error }

    private func outcome(_ kind: DestinationOutcome.Kind, reason: String?) -> DestinationOutcome {
        DestinationOutcome(
            destination: destination.redactedKey, channel: destination.channel, outcome: kind, reason: reason, attempts: attempts)
    }
}
