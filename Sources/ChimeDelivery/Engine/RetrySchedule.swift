import Foundation

/// How long to wait before the next attempt at a destination: exponential back-off with
/// jitter, or the provider's `Retry-After` when it sent one.
///
/// The back-off before attempt `n + 1` is `base · 2^(n−1)` seconds, capped at `cap`, with
/// "equal jitter" (AWS Architecture Blog, "Exponential Backoff And Jitter"): half of it fixed,
/// the other half drawn uniformly, so retries of many firings spread out but never come
/// sooner than half the back-off. A `Retry-After` is honoured as it is, up to
/// `maximumRetryAfter`.
public struct RetrySchedule: Hashable, Sendable {
    /// The back-off after the first failed attempt, in seconds.
    public var base: Double
    /// The longest back-off, in seconds.
    public var cap: Double
    /// The longest `Retry-After` honoured, in seconds (a longer one is cut to this).
    public var maximumRetryAfter: Double
    /// How many attempts a destination gets at most (the first included).
    public var maximumAttempts: Int

    /// A schedule from its parts (seconds; `maximumAttempts` ≥ 1).
    public init(base: Double = 0.5, cap: Double = 30, maximumRetryAfter: Double = 60, maximumAttempts: Int = 5) {
        self.base = base
        self.cap = cap
        self.maximumRetryAfter = maximumRetryAfter
        self.maximumAttempts = max(1, maximumAttempts)
    }

    /// The back-off before attempt `failedAttempt + 1` without jitter: `base · 2^(failedAttempt−1)`,
    /// at most `cap`, in seconds.
    public func backOff(afterAttempt failedAttempt: Int) -> Double {
        let exponent = min(max(failedAttempt - 1, 0), 62)
        return min(cap, base * pow(2, Double(exponent)))
    }

    /// The wait before attempt `failedAttempt + 1`, in seconds.
    /// - Parameters:
    ///   - retryAfter: the provider's `Retry-After` in seconds, if it sent one.
    ///   - unit: a number in 0..<1 (the jitter's draw; tests pass fixed ones).
    public func delay(afterAttempt failedAttempt: Int, retryAfter: Double?, unit: Double) -> Double {
        if let retryAfter, retryAfter.isFinite, retryAfter >= 0 { return min(retryAfter, maximumRetryAfter) }
        let backOff = backOff(afterAttempt: failedAttempt)
        return backOff / 2 + backOff / 2 * min(max(unit, 0), 1)
    }
}
