import ChimeCore

/// The volatile side of action jobs: the unfinished jobs waiting for a worker and the
/// deadlines of those a worker holds (a job's lease: its time limit and 5 s). The jobs
/// themselves, their attempts and outcomes are durable (`ActionJobs`); a recovery puts every
/// unfinished job back in line (``init(unfinished:)``).
struct ActionJobLine: Sendable {
    /// Unfinished jobs waiting for a worker, oldest first.
    var waiting: [String] = []
    /// When each job handed to a worker must have finished (its lease).
    var leases = TimerQueue<String>()

    /// A line of the unfinished jobs, in id order (a snapshot's).
    init(unfinished: [String] = []) { waiting = unfinished }

    /// A job was accepted (`acted`): it waits for a worker.
    mutating func accept(_ jobId: String) { waiting.append(jobId) }

    /// A job finished: it no longer waits or runs.
    mutating func finish(_ jobId: String) {
        leases.remove(jobId)
        waiting.removeAll { $0 == jobId }
    }

    /// A job could not be handed to its worker: it goes first in line again.
    mutating func handBack(_ jobId: String) {
        leases.remove(jobId)
        waiting.insert(jobId, at: 0)
    }
}
