import Foundation

/// The two clocks of the current call and the instant recovery finished: due times run on
/// the wall clock, durations (leases, liveness, quarantines) on the monotonic one, so a
/// wall-clock step neither expires every lease at once nor freezes failure detection.
struct CoordinatorClocks: Sendable {
    /// The monotonic reading of the current call, in seconds (`observe`).
    var elapsed: Double = 0
    /// The wall-clock reading of the current call (UTC), paired with `elapsed`.
    var wall = Date(timeIntervalSinceReferenceDate: 0)
    /// When recovery finished (UTC): occurrences due before it are misfires.
    var recoveredAt: Date?

    /// Reads the clocks of the current call: `now` (wall clock, UTC) for due times and
    /// `monotonic` (seconds on a clock that never steps, CLOCK_MONOTONIC in a process) for
    /// durations. Without a monotonic reading (pure state tests), the wall clock serves for both.
    mutating func observe(_ now: Date, monotonic: Double?) {
        elapsed = monotonic ?? now.timeIntervalSinceReferenceDate
        wall = now
    }

    /// The wall-clock instant a monotonic `deadline` corresponds to, as of the current call.
    func wallClock(at deadline: Double) -> Date { wall.addingTimeInterval(deadline - elapsed) }
}
