import ChimeCore
import ChimeRuntime

/// What the coordinator counted since it started, for `stats`, `status` and `/metrics`:
/// volatile (a restart counts from zero), never read by a decision.
struct CoordinatorCounters: Sendable {
    /// Firings sent to workers, redeliveries included.
    var dispatched = 0
    /// Firings put back in line after a lease expired or their worker was lost.
    var redelivered = 0
    /// Firings acknowledged by a worker.
    var acknowledged = 0
    /// Firings dead-lettered (`deadLetters` holds those not yet retried).
    var deadLettered = 0
    /// Occurrences a recipient's settings let nothing of through (recovery counts the
    /// replayed ones too).
    var suppressed = 0
    /// Firings handed over ahead of their due instant and revoked before it (their reminder
    /// was cancelled, switched off or replaced).
    var revoked = 0
    /// Worker messages dropped because `maxWorkers` records were kept and none could go.
    var refusedWorkerMessages = 0
    /// Journal or snapshot records that no longer validate and were skipped.
    var skippedEntries = 0
    /// Reminders scheduled without an id, for the ids generated for them.
    var generatedIDs = 0
    /// Dispatch lateness (due, or scheduled when later, to handed over) of first attempts, in milliseconds.
    var dispatchLateness = LatenessRecorder()
    /// Fire lateness (due to delivered; for a firing already due when it was scheduled,
    /// scheduled to delivered) of acknowledged firings, in milliseconds.
    var fireLateness = LatenessRecorder()
    /// When firings already due at their scheduling were scheduled: their lateness counts from then.
    var latenessOrigins = LatenessOrigins()
    /// `fireLateness` in seconds, for `/metrics`.
    var fireLatenessSeconds = Histogram(upperBounds: Histogram.latencySecondsBounds)
    /// The dispatched and acknowledged counts once a second, for the rates of `stats`.
    var throughput = ThroughputWindow()
}
