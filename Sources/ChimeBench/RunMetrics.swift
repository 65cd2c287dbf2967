/// The firing metrics of WORKLOADS.md computed from a plan's due instants and the records
/// the handler wrote. Pure: no clock, no I/O.
///
/// Lateness is `actual − due` of the *first* firing of each id; `early` counts every
/// firing (duplicates included) with `actual < due − 1 ms`; T→last fire, drain rate and
/// fire span use every record's `actual`.
public struct RunMetrics: Hashable, Sendable, Codable {
    /// Nearest-rank percentiles of a sample, in milliseconds.
    public struct Percentiles: Hashable, Sendable, Codable {
        /// The median, in milliseconds.
        public var p50: Double
        /// The 99th percentile (nearest rank), in milliseconds.
        public var p99: Double
        /// The largest, in milliseconds.
        public var max: Double

        /// Creates the value from its fields (see each property for meaning and units).
        public init(p50: Double, p99: Double, max: Double) {
            self.p50 = p50
            self.p99 = p99
            self.max = max
        }
    }

    /// Records read (every firing, duplicates included).
    public var records: Int
    /// Distinct plan ids recorded at least once.
    public var firedDistinct: Int
    /// Plan ids never recorded.
    public var lost: Int
    /// Records beyond the first for the same id.
    public var duplicates: Int
    /// Firings with `actual < due − 1 ms`.
    public var early: Int
    /// Records whose id is not in the plan (warm-up probes are filtered before; this should be 0).
    public var unknownIds: Int
    /// Lateness of first firings in milliseconds; `nil` when nothing fired.
    public var latenessMilliseconds: Percentiles?
    /// `max(actual) − T`, seconds.
    public var fireAtToLastFireSeconds: Double?
    /// `firedDistinct / (max(actual) − T)`, firings per second.
    public var drainRate: Double?
    /// `max(actual) − min(actual)`, seconds.
    public var fireSpanSeconds: Double?
    /// Records with `actual` before the kill instant (W3); `nil` when there was no kill.
    public var recordsBeforeKill: Int?
    /// The latest `actual`, epoch seconds.
    public var lastActual: Double?

    /// Computes the metrics.
    /// - Parameters:
    ///   - dues: `dues[id]`, epoch seconds, for ids `0..<N`.
    ///   - records: `(id, actual)` of every firing, in any order.
    ///   - fireAt: T, epoch seconds.
    ///   - killedAt: the SIGKILL instant of W3, epoch seconds.
    public init(dues: [Double], records: [(id: Int, actual: Double)], fireAt: Double, killedAt: Double? = nil) {
        var firstActual = [Double?](repeating: nil, count: dues.count)
        var duplicates = 0
        var early = 0
        var unknownIds = 0
        var minActual = Double.infinity
        var maxActual = -Double.infinity
        var beforeKill = 0
        for record in records {
            guard dues.indices.contains(record.id) else {
                unknownIds += 1
                continue
            }
            minActual = Swift.min(minActual, record.actual)
            maxActual = Swift.max(maxActual, record.actual)
            if record.actual < dues[record.id] - 0.001 { early += 1 }
            if let killedAt, record.actual < killedAt { beforeKill += 1 }
            if let first = firstActual[record.id] {
                duplicates += 1
                // Records may arrive out of order (two workers); the first firing is the earliest.
                if record.actual < first { firstActual[record.id] = record.actual }
            } else {
                firstActual[record.id] = record.actual
            }
        }
        var lateness: [Double] = []
        lateness.reserveCapacity(dues.count)
        for (id, actual) in firstActual.enumerated() {
            if let actual { lateness.append((actual - dues[id]) * 1000) }
        }
        self.records = records.count - unknownIds
        firedDistinct = lateness.count
        lost = dues.count - lateness.count
        self.duplicates = duplicates
        self.early = early
        self.unknownIds = unknownIds
        latenessMilliseconds = Self.percentiles(lateness)
        recordsBeforeKill = killedAt == nil ? nil : beforeKill
        if firedDistinct > 0 {
            lastActual = maxActual
            fireAtToLastFireSeconds = maxActual - fireAt
            drainRate = maxActual > fireAt ? Double(firedDistinct) / (maxActual - fireAt) : nil
            fireSpanSeconds = maxActual - minActual
        }
    }

    /// p50, p99 and max by nearest rank; `nil` for an empty sample.
    public static func percentiles(_ values: [Double]) -> Percentiles? {
        let sorted = values.sorted()
        guard let p50 = nearestRank(sorted, percent: 50), let p99 = nearestRank(sorted, percent: 99),
            let max = sorted.last
        else { return nil }
        return Percentiles(p50: p50, p99: p99, max: max)
    }

    /// The nearest-rank percentile of an ascending sample: the value at rank
    /// `⌈percent / 100 × n⌉` (1-based); `nil` when the sample is empty.
    public static func nearestRank(_ sorted: [Double], percent: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        precondition(percent > 0 && percent <= 100, "a percentile is in (0, 100]")
        // Integer arithmetic for whole percents, so 99 % of 100 is rank 99, not 99.000000001 → 100.
        let rank: Int
        if percent == percent.rounded() {
            let scaled = Int(percent) * sorted.count
            rank = (scaled + 99) / 100
        } else {
            rank = Int((percent / 100 * Double(sorted.count)).rounded(.up))
        }
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }
}
