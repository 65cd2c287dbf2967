import Foundation

/// A circuit breaker for one endpoint (Nygard, "Release It!", ch. 5): after `threshold`
/// consecutive failed attempts it opens for `openSeconds`, during which attempts at the
/// endpoint are not sent (they count as retryable failures); then one trial attempt goes
/// through (half-open), and its result closes the circuit or opens it again. Pure: the time
/// is passed in (monotonic seconds).
public struct EndpointCircuit: Hashable, Sendable {
    /// Consecutive failures that open the circuit.
    public var threshold: Int
    /// How long the circuit stays open, in seconds.
    public var openSeconds: Double
    /// Consecutive failures so far.
    public private(set) var failures = 0
    /// Until when the circuit is open (monotonic seconds); `nil` when closed.
    public private(set) var openUntil: Double?
    /// Whether a half-open trial is out.
    public private(set) var isTrialOut = false

    /// A closed circuit.
    public init(threshold: Int = 5, openSeconds: Double = 30) {
        self.threshold = max(1, threshold)
        self.openSeconds = openSeconds
    }

    /// Whether an attempt may be sent at `now`; a half-open circuit lets one trial through.
    public mutating func allows(at now: Double) -> Bool {
        guard let openUntil else { return true }
        guard now >= openUntil, !isTrialOut else { return false }
        isTrialOut = true
        return true
    }

    /// Records an attempt's result: a success closes the circuit, a failure counts and, at
    /// `threshold` (or a failed trial), opens it for `openSeconds` from `now`.
    public mutating func record(success: Bool, at now: Double) {
        if success {
            failures = 0
            openUntil = nil
            isTrialOut = false
            return
        }
        failures += 1
        if isTrialOut || failures >= threshold {
            openUntil = now + openSeconds
            isTrialOut = false
        }
    }

    /// Whether the circuit is open at `now` (a trial may be due).
    public func isOpen(at now: Double) -> Bool { openUntil.map { now < $0 } ?? false }
}
