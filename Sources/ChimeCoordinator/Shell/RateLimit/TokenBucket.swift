/// A token bucket: at most `burst` tokens, refilled continuously at `rate` tokens per second;
/// each request takes one. It starts full, so a peer may send `burst` requests at once and
/// then `rate` per second on average (the classic shaper of RFC 2697 with one bucket).
///
/// Time is a monotonic reading in seconds (`ServiceClock.monotonic`), passed in by the
/// caller, so tests move it by hand. Pure: no clock, no I/O, O(1) per call.
public struct TokenBucket: Hashable, Sendable {
    /// Tokens added per second (> 0).
    public let rate: Double
    /// The most tokens the bucket holds (≥ 1): the largest burst after an idle spell.
    public let burst: Double
    /// Tokens in the bucket at `updatedAt`.
    public private(set) var tokens: Double
    /// The monotonic reading (seconds) of the last refill.
    public private(set) var updatedAt: Double

    /// A full bucket at `now`.
    /// - Precondition: `rate > 0` and `burst >= 1` (the configuration is checked on load).
    public init(rate: Double, burst: Double, at now: Double) {
        precondition(rate > 0 && rate.isFinite && burst >= 1 && burst.isFinite, "a token bucket needs rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.updatedAt = now
    }

    /// Takes one token if there is one.
    /// - Returns: `nil` when the request may go ahead; otherwise how long until a token is
    ///   there, in whole milliseconds, rounded up (at least 1).
    public mutating func take(at now: Double) -> Int? {
        refill(at: now)
        // A hair of slack so that 0.1 s at 10 per second counts as one token whatever the rounding.
        if tokens >= 1 - Self.slack {
            tokens = max(0, tokens - 1)
            return nil
        }
        // The same slack in milliseconds: 59.999… or 60.000…1 both mean 60.
        let waitMilliseconds = ((1 - tokens) / rate * 1000 - Self.slack * 1000).rounded(.up)
        return Int(min(max(waitMilliseconds, 1), Double(Int32.max)))
    }

    /// Whether the bucket is full again at `now`: it then carries nothing a new bucket would not.
    public func isFull(at now: Double) -> Bool {
        tokens + max(0, now - updatedAt) * rate >= burst - Self.slack
    }

    /// Seconds an emptied bucket takes to fill up again.
    public var secondsToFill: Double { burst / rate }

    private mutating func refill(at now: Double) {
        // A reading earlier than the last one (never from a monotonic clock) adds nothing.
        let elapsed = max(0, now - updatedAt)
        tokens = min(burst, tokens + elapsed * rate)
        updatedAt = max(updatedAt, now)
    }

    private static let slack = 1e-6
}
