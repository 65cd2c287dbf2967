/// When observation of a run ends (WORKLOADS.md): (a) every id seen and `settle` seconds
/// more, (b) no new record for `quiet` seconds after the last due time (W3: after the
/// restart), or (c) `T + limit`. Pure: the caller passes the instants it saw.
public struct ObservationRule: Hashable, Sendable {
    /// Why observation ended.
    public enum Reason: String, Hashable, Sendable, Codable {
        case allSeen, quiet, timeLimit
    }

    /// How many distinct ids the plan has.
    public var count: Int
    /// T, epoch seconds.
    public var fireAt: Double
    /// The latest due instant, epoch seconds.
    public var lastDue: Double
    /// Seconds to wait after the last id was seen, to catch late duplicates (5 s).
    public var settle: Double = 5
    /// Seconds without a new record that end the run (20 s unless overridden).
    public var quiet: Double = 20
    /// The hard limit after T, seconds (600 s).
    public var limit: Double = 600
    /// Whether the quiet period only counts after a restart (W3).
    public var waitsForRestart = false

    /// Creates the value from its fields (see each property for meaning and units).
    public init(count: Int, fireAt: Double, lastDue: Double) {
        self.count = count
        self.fireAt = fireAt
        self.lastDue = lastDue
    }

    /// The reason to stop observing at `now`, or `nil` to go on.
    /// - Parameters:
    ///   - allSeenAt: when the last distinct id was first seen.
    ///   - lastRecordAt: when the latest record arrived.
    ///   - restartedAt: when the restarted cluster was ready (W3).
    public func endReason(now: Double, allSeenAt: Double?, lastRecordAt: Double?, restartedAt: Double?) -> Reason? {
        if let allSeenAt, now >= allSeenAt + settle { return .allSeen }
        if now >= fireAt + limit { return .timeLimit }
        var quietFrom = max(lastDue, lastRecordAt ?? -Double.infinity)
        if waitsForRestart {
            guard let restartedAt else { return nil }
            quietFrom = max(quietFrom, restartedAt)
        }
        return now >= quietFrom + quiet ? .quiet : nil
    }
}
