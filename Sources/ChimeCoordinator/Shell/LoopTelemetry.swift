import ChimeRuntime
import Foundation

/// What the loop measures and reports of itself: the control requests answered and how long
/// they took, the turns and the slowest one, the clocks of the previous turn (for stalls and
/// wall-clock steps), the supervisor's watchdog, the rate-limited operator lines, and when
/// free heap pages go back.
struct LoopTelemetry {
    /// Control requests answered since start, by operation and code, for `/metrics`.
    var requestCounts: [CoordinatorMetrics.RequestKey: Int] = [:]
    /// From reading a control request to deciding its reply, in seconds, by operation
    /// (`undecodable` when it did not decode).
    var requestDurations: [String: Histogram] = [:]
    /// How long each loop turn took, poll wait excluded, in seconds.
    var turnDuration = Histogram(upperBounds: Histogram.durationSecondsBounds)
    /// The slowest loop turn since start, in seconds.
    var slowestTurnSeconds = 0.0
    /// When the previous loop turn began (monotonic), to notice a stalled loop.
    var previousTurnStart: ContinuousClock.Instant?
    /// The wall and monotonic readings of the previous loop turn, to notice a wall-clock step.
    var previousClocks: (wall: Date, monotonic: Double)?
    /// Paces the loop's `WATCHDOG=1` pings (at most every half of `WATCHDOG_USEC`).
    var watchdog: WatchdogPacer
    /// Rate-limited lines: redeliveries, dead letters, refused connections.
    let operatorLog: OperatorLog
    /// Whether a large refused request was freed this turn, or a snapshot finished: free heap
    /// pages go back at the end of the turn.
    var isMemoryTrimDue = false
    /// Journal records submitted since the heap was last trimmed (`isGrowthTrimDue`).
    var recordsSinceMemoryTrim = 0
}
