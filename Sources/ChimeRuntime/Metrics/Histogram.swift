/// Counts observations into fixed buckets, as a Prometheus histogram exposes them
/// (`_bucket{le=…}` cumulative, `_sum`, `_count`). A value type with no allocation per
/// observation: one scan of the (dozen or so) bounds and three additions.
public struct Histogram: Hashable, Sendable {
    /// The buckets' upper bounds (inclusive), ascending, in the observed unit; a last
    /// `+Inf` bucket is implied.
    public let upperBounds: [Double]
    /// Observations per bucket, not cumulative; one more than `upperBounds` (the `+Inf` bucket).
    public private(set) var bucketCounts: [UInt64]
    /// The sum of every observation.
    public private(set) var sum: Double = 0
    /// How many observations were made.
    public private(set) var count: UInt64 = 0

    /// Makes an empty histogram with these upper bounds (ascending, finite).
    public init(upperBounds: [Double]) {
        precondition(zip(upperBounds, upperBounds.dropFirst()).allSatisfy { $0 < $1 }, "histogram bounds must ascend")
        precondition(upperBounds.allSatisfy(\.isFinite), "histogram bounds must be finite")
        self.upperBounds = upperBounds
        bucketCounts = Array(repeating: 0, count: upperBounds.count + 1)
    }

    /// Counts one observation; a NaN (a clock gone wrong) is dropped, since the sum must stay a number.
    public mutating func observe(_ value: Double) {
        guard !value.isNaN else { return }
        var index = 0
        while index < upperBounds.count && value > upperBounds[index] { index += 1 }
        bucketCounts[index] &+= 1
        count &+= 1
        if value.isFinite { sum += value }
    }

    /// Counts `count` observations of `value` at once (a batch whose members were not timed one by one).
    public mutating func observe(_ value: Double, times: Int) {
        for _ in 0..<max(0, times) { observe(value) }
    }

    /// Fire lateness and other delays of a scheduler, in seconds: 1 ms to 5 min.
    public static let latencySecondsBounds: [Double] = [
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
    ]

    /// Short operations (a request's handling, an fsync), in seconds: 50 µs to 10 s.
    public static let durationSecondsBounds: [Double] = [
        0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
    ]
}
