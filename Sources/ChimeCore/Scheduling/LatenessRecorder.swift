import Foundation

/// Keeps the most recent lateness samples and reports nearest-rank percentiles.
///
/// Lateness is `fired − due` in milliseconds (negative when early). A ring of at most
/// `capacity` samples bounds memory to 8 bytes a sample.
public struct LatenessRecorder: Sendable {
    private var samples: [Double] = []
    private var nextSlot = 0
    /// How many samples are kept at most.
    public let capacity: Int
    /// How many samples were ever recorded.
    public private(set) var totalCount = 0

    /// Creates the value from its fields (see each property for meaning and units).
    public init(capacity: Int = 100_000) {
        precondition(capacity > 0, "LatenessRecorder needs a positive capacity")
        self.capacity = capacity
        samples.reserveCapacity(min(capacity, 4096))
    }

    /// Records one sample, in milliseconds; a non-finite one (a worker's bad clock) is
    /// dropped, since the summary must stay JSON.
    public mutating func record(milliseconds: Double) {
        guard milliseconds.isFinite else { return }
        totalCount += 1
        if samples.count < capacity {
            samples.append(milliseconds)
        } else {
            samples[nextSlot] = milliseconds
            nextSlot = (nextSlot + 1) % capacity
        }
    }

    /// The p50, p99 and max of the kept samples (nearest rank), in milliseconds; `nil` when empty.
    public func summary() -> LatenessSummary? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        func rank(_ p: Double) -> Double {
            let index = Int((p * Double(sorted.count)).rounded(.up)) - 1
            return sorted[max(0, min(sorted.count - 1, index))]
        }
        return LatenessSummary(
            count: sorted.count, p50: rank(0.50), p99: rank(0.99), max: sorted[sorted.count - 1])
    }
}

/// Lateness percentiles over a window of samples, in milliseconds.
public struct LatenessSummary: Codable, Hashable, Sendable {
    /// How many samples the figures cover.
    public var count: Int
    /// The median, in milliseconds.
    public var p50: Double
    /// The 99th percentile (nearest rank), in milliseconds.
    public var p99: Double
    /// The largest sample, in milliseconds.
    public var max: Double
}
