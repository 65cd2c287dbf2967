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
    ///
    /// Two selections (quickselect with random pivots, expected O(n) whatever the samples, so
    /// a worker's crafted acknowledgement times cannot make it quadratic) instead of a sort:
    /// `stats` runs on the coordinator's loop, and sorting 100,000 samples took tens of
    /// milliseconds in a debug build.
    public func summary() -> LatenessSummary? {
        guard !samples.isEmpty else { return nil }
        var work = samples
        let count = work.count
        func rankIndex(_ p: Double) -> Int { max(0, min(count - 1, Int((p * Double(count)).rounded(.up)) - 1)) }
        let p99Index = rankIndex(0.99)
        let p99 = Self.select(p99Index, in: &work, within: 0..<count)
        // After the first selection everything below `p99Index` is ≤ p99, so the median is
        // selected in that prefix alone (p50's index is never above p99's).
        let p50Index = rankIndex(0.50)
        let p50 = p50Index == p99Index ? p99 : Self.select(p50Index, in: &work, within: 0..<p99Index)
        let largest = work[p99Index...].max() ?? p99
        return LatenessSummary(count: count, p50: p50, p99: p99, max: largest)
    }

    /// The value that would be at `index` if `values[range]` were sorted ascending; moves
    /// smaller-or-equal values before it and larger-or-equal after it (Hoare's FIND).
    static func select(_ index: Int, in values: inout [Double], within range: Range<Int>) -> Double {
        var generator = SystemRandomNumberGenerator()
        var low = range.lowerBound
        var high = range.upperBound - 1
        while low < high {
            let pivot = values[Int.random(in: low...high, using: &generator)]
            var left = low
            var right = high
            while left <= right {
                while values[left] < pivot { left += 1 }
                while values[right] > pivot { right -= 1 }
                if left <= right {
                    values.swapAt(left, right)
                    left += 1
                    right -= 1
                }
            }
            // Now values[low...right] ≤ pivot ≤ values[left...high], and right < left.
            if index <= right {
                high = right
            } else if index >= left {
                low = left
            } else {
                return values[index]
            }
        }
        return values[index]
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

    /// Creates the value from its fields (see each property for meaning and units).
    public init(count: Int, p50: Double, p99: Double, max: Double) {
        self.count = count
        self.p50 = p50
        self.p99 = p99
        self.max = max
    }
}
