import Foundation

/// Where a service reads the wall-clock time it schedules by: due times, leases, liveness
/// and snapshot pacing all read `now` once per use.
///
/// Processes use `SystemClock`; in-process service tests pass a manual clock (the test
/// support's `ManualClock`) and move time by hand, so a lease expiry or a due firing needs
/// no real waiting.
public protocol ServiceClock: Sendable {
    /// The current instant (UTC), for due times: it may step (NTP, an operator).
    var now: Date { get }
    /// Seconds on a clock that never steps and keeps counting while the process is stopped
    /// (CLOCK_MONOTONIC), for durations: leases, liveness, heartbeats, time limits, pacing.
    var monotonic: Double { get }
}

/// The system's wall clock (`Date()`, CLOCK_REALTIME).
public struct SystemClock: ServiceClock {
    /// The system clock.
    public init() {}

    /// `Date()`.
    public var now: Date { Date() }

    /// `clock_gettime(CLOCK_MONOTONIC)` in seconds.
    public var monotonic: Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
