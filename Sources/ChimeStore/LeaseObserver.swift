import Foundation

/// A standby's view of the active coordinator's lease (`StoreLease`): reads `<store>/LEASE`
/// and measures, on this process's monotonic clock, how long its bytes have stayed the same.
///
/// Like client-go's leader election, the observer never compares the holder's clock with its
/// own: the silence starts when this observer first saw the current bytes, so it is never
/// shorter than the holder's own view of its lease (the holder wrote them before).
public struct LeaseObserver: Sendable {
    /// The store directory.
    public let directory: URL
    /// This standby's lease duration; the holder's own (from its record), when longer, wins.
    public let duration: Duration
    /// The last bytes read (`nil`: no `LEASE` file).
    private var lastBytes: [UInt8]?
    /// When those bytes were first seen.
    private var unchangedSince: ContinuousClock.Instant?
    /// The newest record that parsed.
    public private(set) var record: LeaseRecord?

    /// An observer that has seen nothing yet.
    public init(directory: URL, duration: Duration = StoreLease.defaultDuration) {
        self.directory = directory
        self.duration = duration
    }

    /// Reads the lease file once.
    /// - Returns: whether the lease expired: its bytes unchanged for the lease duration since
    ///   this observer first saw them. A store without a `LEASE` file (one made by a version
    ///   before leases, or on a disk too full for it) never expires: the lock alone decides.
    public mutating func observe(at now: ContinuousClock.Instant = .now) -> Bool {
        let bytes = try? FileCalls.readFile(directory.appendingPathComponent("LEASE").path)
        guard let bytes, !bytes.isEmpty else {
            reset()
            return false
        }
        if unchangedSince == nil || bytes != lastBytes {
            lastBytes = bytes
            unchangedSince = now
            if let parsed = LeaseRecord.parse(bytes) { record = parsed }
        }
        return silence(at: now) >= effectiveDuration
    }

    /// How long the lease file has stayed the same, as of `now`.
    public func silence(at now: ContinuousClock.Instant = .now) -> Duration {
        unchangedSince.map { now - $0 } ?? .zero
    }

    /// The lease duration this observer waits out: its own, or the holder's when longer.
    public var effectiveDuration: Duration {
        max(duration, record.map { .milliseconds($0.durationMilliseconds) } ?? .zero)
    }

    /// Starts over (after a takeover attempt): the next read starts a new silence.
    public mutating func reset() {
        lastBytes = nil
        unchangedSince = nil
    }
}
