import Foundation
import Synchronization

/// One shard's figures at one instant, as the charts plot them.
public struct HistorySample: Codable, Hashable, Sendable {
    /// When the sample was taken (UTC).
    public var at: Date
    /// Firings dispatched per second (last minute); `nil` when the shard was down.
    public var firingsPerSecond: Double?
    /// Fire lateness p99 in milliseconds; `nil` without samples or when down.
    public var latenessP99Milliseconds: Double?
    /// Firings due and not yet dispatched; `nil` when down.
    public var dueBacklog: Int?

    /// Creates the value from its fields.
    public init(at: Date, firingsPerSecond: Double?, latenessP99Milliseconds: Double?, dueBacklog: Int?) {
        self.at = at
        self.firingsPerSecond = firingsPerSecond
        self.latenessP99Milliseconds = latenessP99Milliseconds
        self.dueBacklog = dueBacklog
    }
}

/// The last ``capacity`` samples of every shard (a ring buffer each, oldest dropped first):
/// the dashboard samples every few seconds, so the default keeps an hour at 5 s.
public final class MetricsHistory: Sendable {
    private let samples = Mutex<[Int: [HistorySample]]>([:])
    /// Samples kept per shard.
    public let capacity: Int

    /// - Parameter capacity: samples kept per shard (at least 2).
    public init(capacity: Int = 720) {
        self.capacity = max(2, capacity)
    }

    /// Records every shard of `overview` (down shards as gaps).
    public func record(_ overview: OverviewView) {
        samples.withLock { samples in
            for shard in overview.shards {
                let sample = HistorySample(
                    at: overview.takenAt, firingsPerSecond: shard.firingsPerSecond,
                    latenessP99Milliseconds: shard.fireLateness?.p99, dueBacklog: shard.dueBacklog)
                var kept = samples[shard.shard] ?? []
                kept.append(sample)
                if kept.count > capacity { kept.removeFirst(kept.count - capacity) }
                samples[shard.shard] = kept
            }
        }
    }

    /// The samples of `shard`, oldest first.
    public func samples(ofShard shard: Int) -> [HistorySample] {
        samples.withLock { $0[shard] ?? [] }
    }

    /// Every shard's samples, by shard id.
    public func all() -> [Int: [HistorySample]] {
        samples.withLock { $0 }
    }
}
