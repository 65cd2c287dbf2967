import ChimeCore
import Foundation

/// Action jobs accepted (`act`), with their attempt numbers and, once finished, their
/// outcomes; finished ones are kept for `job` requests up to a retention bound, oldest
/// finished forgotten first. A part of `DurableState`, changed only by its fold.
///
/// Which worker holds a job and its lease are volatile: a recovery sends every unfinished job
/// again with its attempt number.
struct ActionJobs: Sendable, Equatable {
    struct Record: Sendable, Equatable, Codable {
        var job: ActionJob
        /// 1 for the first delivery attempt; one more per expired lease.
        var attempt = 1
        var outcome: ActionOutcome?
    }

    /// Every job kept, by id.
    private(set) var records: [String: Record] = [:]
    /// Finished jobs' ids, in the order they finished.
    private(set) var finishedOrder = RingQueue<String>()

    /// The job `jobId`, if kept.
    subscript(jobId: String) -> Record? { records[jobId] }

    /// The jobs not finished, in id order.
    var unfinished: [ActionJob] { records.values.filter { $0.outcome == nil }.map(\.job).sorted { $0.jobId < $1.jobId } }

    /// How many jobs are kept, finished or not.
    var count: Int { records.count }

    /// Accepts a job (its first attempt).
    mutating func accept(_ job: ActionJob) {
        records[job.jobId] = Record(job: job)
    }

    /// Counts one more attempt of an unfinished job.
    mutating func leaseExpired(_ jobId: String) {
        guard records[jobId]?.outcome == nil else { return }
        records[jobId]?.attempt.saturatingIncrement()
    }

    /// Records how a job ended, forgetting the oldest finished beyond `retention`.
    mutating func finish(_ outcome: ActionOutcome, retention: Int) {
        guard let record = records[outcome.jobId], record.outcome == nil else { return }
        records[outcome.jobId]?.outcome = outcome
        finishedOrder.append(outcome.jobId)
        trim(to: retention)
    }

    /// Forgets the oldest finished jobs beyond `retention`.
    mutating func trim(to retention: Int) {
        while finishedOrder.count > max(0, retention), let oldest = finishedOrder.popFirst() {
            records[oldest] = nil
        }
    }

    /// Restores kept jobs as a snapshot holds them: the unfinished, then the finished in the
    /// order they finished.
    init(unfinished: [Record], finished: [Record]) {
        for record in unfinished { records[record.job.jobId] = record }
        for record in finished where record.outcome != nil {
            records[record.job.jobId] = record
            finishedOrder.append(record.job.jobId)
        }
    }

    init() {}

    /// The finished jobs in the order they finished.
    var finished: [Record] { finishedOrder.compactMap { records[$0] } }

    static func == (lhs: ActionJobs, rhs: ActionJobs) -> Bool {
        lhs.records == rhs.records && Array(lhs.finishedOrder) == Array(rhs.finishedOrder)
    }
}
