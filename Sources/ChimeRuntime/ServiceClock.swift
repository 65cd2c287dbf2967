import Foundation

/// Where a service reads the wall-clock time it schedules by: due times, leases, liveness
/// and snapshot pacing all read `now` once per use.
///
/// Processes use `SystemClock`; in-process service tests pass a manual clock (the test
/// support's `ManualClock`) and move time by hand, so a lease expiry or a due firing needs
/// no real waiting.
public protocol ServiceClock: Sendable {
    /// The current instant (UTC).
    var now: Date { get }
}

/// The system's wall clock (`Date()`, CLOCK_REALTIME).
public struct SystemClock: ServiceClock {
    /// The system clock.
    public init() {}

    /// `Date()`.
    public var now: Date { Date() }
}
