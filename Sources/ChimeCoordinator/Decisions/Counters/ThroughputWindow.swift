import ChimeCore

/// The dispatched and acknowledged counters once a second over the last minute, for the
/// per-second rates of `stats`: one comparison a tick, one sample a second.
struct ThroughputWindow: Sendable {
    struct Sample: Sendable {
        /// On the monotonic timeline, in seconds.
        var elapsed: Double
        var dispatched: Int
        var acknowledged: Int
    }

    /// The rates in firings per second and the seconds they cover.
    struct Rates: Equatable, Sendable {
        var dispatchedPerSecond: Double
        var acknowledgedPerSecond: Double
        var windowSeconds: Double
    }

    /// The longest window the rates cover, in seconds.
    static let windowSeconds = 60.0
    private var samples = RingQueue<Sample>()

    /// Takes a sample when a second has passed since the last one; drops those older than
    /// the window.
    mutating func sampleIfDue(elapsed: Double, dispatched: Int, acknowledged: Int) {
        if let last = samples.last, elapsed - last.elapsed < 1 { return }
        samples.append(Sample(elapsed: elapsed, dispatched: dispatched, acknowledged: acknowledged))
        while let first = samples.first, elapsed - first.elapsed > Self.windowSeconds { _ = samples.popFirst() }
    }

    /// The rates from the oldest sample to the counters now; `nil` before a second has passed.
    func rates(elapsed: Double, dispatched: Int, acknowledged: Int) -> Rates? {
        guard let first = samples.first, elapsed - first.elapsed >= 1 else { return nil }
        let window = elapsed - first.elapsed
        return Rates(
            dispatchedPerSecond: Double(dispatched - first.dispatched) / window,
            acknowledgedPerSecond: Double(acknowledged - first.acknowledged) / window, windowSeconds: window)
    }
}
