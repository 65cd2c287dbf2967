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
    /// Each finished job's place in that order, so jobs split by recipient and merged again
    /// keep it (`DurableState+Slices.swift`).
    @Derived private var finishOrdinals: [String: UInt64] = [:]
    @Derived private var nextOrdinal: UInt64 = 0

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
        appendFinished(outcome.jobId, ordinal: nextOrdinal)
        trim(to: retention)
    }

    /// Forgets the oldest finished jobs beyond `retention`.
    mutating func trim(to retention: Int) {
        while finishedOrder.count > max(0, retention), let oldest = finishedOrder.popFirst() {
            records[oldest] = nil
            finishOrdinals[oldest] = nil
        }
    }

    /// Restores kept jobs as a snapshot holds them: the unfinished, then the finished in the
    /// order they finished.
    init(unfinished: [Record], finished: [Record]) {
        for record in unfinished { records[record.job.jobId] = record }
        for record in finished where record.outcome != nil {
            records[record.job.jobId] = record
            appendFinished(record.job.jobId, ordinal: nextOrdinal)
        }
    }

    init() {}

    private mutating func appendFinished(_ jobId: String, ordinal: UInt64) {
        finishedOrder.append(jobId)
        finishOrdinals[jobId] = ordinal
        nextOrdinal = max(nextOrdinal, ordinal.saturatingAdding(1))
    }

    /// Splits the jobs: those of recipients `isSliced` accepts, and the rest, the finished ones
    /// keeping their order.
    func split(_ isSliced: (RecipientID) -> Bool) -> (slice: ActionJobs, rest: ActionJobs) {
        var slice = ActionJobs()
        var rest = ActionJobs()
        for (jobId, record) in records where record.outcome == nil {
            if isSliced(record.job.recipient) { slice.records[jobId] = record } else { rest.records[jobId] = record }
        }
        for jobId in finishedOrder {
            guard let record = records[jobId] else { continue }
            let ordinal = finishOrdinals[jobId] ?? 0
            if isSliced(record.job.recipient) {
                slice.records[jobId] = record
                slice.appendFinished(jobId, ordinal: ordinal)
            } else {
                rest.records[jobId] = record
                rest.appendFinished(jobId, ordinal: ordinal)
            }
        }
        slice.nextOrdinal = max(slice.nextOrdinal, nextOrdinal)
        rest.nextOrdinal = max(rest.nextOrdinal, nextOrdinal)
        return (slice, rest)
    }

    /// Takes in the jobs of `other`, the finished ones interleaved with these by the order they
    /// finished; the oldest finished beyond `retention` are forgotten.
    mutating func merge(_ other: ActionJobs, retention: Int) {
        var merged = ActionJobs()
        for (jobId, record) in records.merging(other.records, uniquingKeysWith: { mine, _ in mine }) where record.outcome == nil {
            merged.records[jobId] = record
        }
        var mine = Array(finishedOrder)[...]
        var theirs = Array(other.finishedOrder)[...]
        while !mine.isEmpty || !theirs.isEmpty {
            let takeMine = theirs.isEmpty
                || (!mine.isEmpty && (finishOrdinals[mine[mine.startIndex]] ?? 0) <= (other.finishOrdinals[theirs[theirs.startIndex]] ?? 0))
            let jobId = takeMine ? mine.removeFirst() : theirs.removeFirst()
            guard let record = takeMine ? records[jobId] : other.records[jobId] else { continue }
            merged.records[jobId] = record
            merged.appendFinished(jobId, ordinal: (takeMine ? finishOrdinals[jobId] : other.finishOrdinals[jobId]) ?? 0)
        }
        merged.nextOrdinal = max(merged.nextOrdinal, nextOrdinal, other.nextOrdinal)
        merged.trim(to: retention)
        self = merged
    }

    /// The finished jobs in the order they finished.
    var finished: [Record] { finishedOrder.compactMap { records[$0] } }
}
