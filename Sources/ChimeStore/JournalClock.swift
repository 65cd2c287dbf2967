/// The monotonic time, in seconds from an arbitrary origin, that decides when an
/// `FsyncPolicy.interval` is due; tests inject a manual one.
public struct JournalClock: Sendable {
    private let read: @Sendable () -> Double

    /// A clock that reads `seconds` (monotonic, in seconds).
    public init(_ seconds: @escaping @Sendable () -> Double) { read = seconds }

    /// The system's monotonic clock (`CLOCK_MONOTONIC`).
    public static let system = JournalClock { FileCalls.monotonicSeconds() }

    /// The current time, in seconds.
    public var now: Double { read() }
}
