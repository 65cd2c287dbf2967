import ChimeCore
import Foundation

/// Firings on their way to workers: due firings waiting for credit, firings in flight with
/// their leases, and the workers with their credit and liveness (credit-based flow control,
/// ZeroMQ Guide ch. 7). Volatile: a recovery puts every unsettled firing back in line
/// (`finishRecovery`), and workers announce themselves again.
///
/// Invariants: every firing in line is unsettled, current and not in flight; every in-flight
/// firing is assigned to one worker and has a lease; a worker never holds more firings than
/// the capacity it announced.
struct DispatchLine: Sendable {
    /// A firing handed to a worker and not yet acknowledged.
    struct InFlight: Sendable {
        let shared: SharedFiring
        /// The event seq of this delivery attempt.
        var seq: UInt64
        var worker: WorkerID
        /// When the lease runs out, on the monotonic timeline (`elapsed`), in seconds: the
        /// lease duration after the dispatch, or after the due instant for a firing handed
        /// over ahead of it.
        var leaseExpiresAt: Double
        /// When it was dispatched, on the monotonic timeline (`elapsed`), in seconds.
        var dispatchedAt: Double
        var firing: Firing { shared.firing }
    }

    /// Unsettled firings not yet assigned to a worker, oldest first (the boxes
    /// `durable.deliveries.unsettled` holds).
    var waiting = RingQueue<SharedFiring>()
    var inFlight: [FiringID: InFlight] = [:]
    /// Lease expiries in dispatch order. Every lease lasts `leaseDuration` from its dispatch,
    /// or from its due instant for a firing handed over ahead of it (at most `dispatchLead`
    /// later), so expiries grow but for that lead (a clock stepped back merely delays them): a
    /// FIFO instead of a heap, with no hashing per firing; an expiry behind a later one is
    /// noticed at most `dispatchLead` late. An entry is stale once its firing was acknowledged,
    /// requeued or leased again (`inFlight[id]?.leaseExpiresAt` no longer matches); `onTick`
    /// drops stale entries as soon as they reach the front, not at their expiry, so the FIFO
    /// holds about the in-flight window (one lookup per entry either way).
    var leases = RingQueue<(firingId: FiringID, expiresAt: Double)>()
    var workers: [WorkerID: WorkerRecord] = [:]
    /// Who let which lease run out, and the workers set aside for it.
    var leaseFailures = LeaseFailureBook()
    /// Batches handed out since start, so ties between workers rotate (`WorkerRecord.lastAssignment`).
    var assignmentCounter = 0
    /// Whether the last `onTick` left due reminders in the timer because the line already held
    /// what the workers' free credit can take; `nextWake` then waits for credit (a worker
    /// message) instead of the past due time.
    var isScheduleBacklogged = false
    /// The `seq` the next dispatched firing (or hand-over event) gets: a recovery resumes after
    /// the durable `eventSeqReserved`.
    var nextEventSeq: UInt64 = 1
}
