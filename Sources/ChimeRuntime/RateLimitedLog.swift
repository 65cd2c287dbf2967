import Synchronization

/// Counts events of one kind (redeliveries, dead letters, refused connections) so that at most
/// one line per `interval` reports them: the first event of a quiet period at once, later ones
/// summed into the next line. Pure: time comes in as monotonic instants.
public struct LogRateWindow: Sendable {
    /// What one line reports.
    public struct Summary: Sendable, Hashable {
        /// Events since the previous line.
        public var count: Int
        /// From the first of those events to this line, in seconds.
        public var seconds: Double
        /// The first few events' names (firing ids, addresses), at most `maximumExamples`.
        public var examples: [String]
    }

    /// Examples kept per line at most.
    public static let maximumExamples = 3
    /// The shortest time between two lines.
    public let interval: Duration
    private var pending = 0
    private var examples: [String] = []
    private var firstPending: ContinuousClock.Instant?
    private var lastLine: ContinuousClock.Instant?

    /// A window letting one line out per `interval` (1 s by default).
    public init(interval: Duration = .seconds(1)) { self.interval = interval }

    /// Counts `count` events at `now`.
    /// - Returns: the line to write now, or `nil` when one was written less than `interval` ago.
    public mutating func add(_ count: Int = 1, examples names: [String] = [], at now: ContinuousClock.Instant) -> Summary? {
        guard count > 0 else { return takeDue(at: now) }
        pending = pending.addingReportingOverflow(count).overflow ? Int.max : pending + count
        examples += names.prefix(Self.maximumExamples - examples.count)
        if firstPending == nil { firstPending = now }
        return takeDue(at: now)
    }

    /// The line for the events counted so far when `interval` has passed since the last one
    /// (call once per loop turn, so the end of a burst is reported too); else `nil`.
    public mutating func takeDue(at now: ContinuousClock.Instant) -> Summary? {
        guard pending > 0, let first = firstPending else { return nil }
        if let lastLine, now - lastLine < interval { return nil }
        let elapsed = now - first
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let summary = Summary(count: pending, seconds: seconds, examples: examples)
        pending = 0
        examples = []
        firstPending = nil
        lastLine = now
        return summary
    }
}

/// A `LogRateWindow` that writes its lines: `message` with `count`, `windowSeconds` and the
/// examples under `examplesKey`. Thread-safe (a ZAP handler thread may count, the loop flushes).
public final class RateLimitedLog: Sendable {
    private let logger: Logger
    private let level: Logger.Level
    private let message: String
    private let examplesKey: String
    private let window: Mutex<LogRateWindow>

    /// A rate-limited line `message` at `level`, at most one per `interval`.
    public init(logger: Logger, level: Logger.Level, message: String, examplesKey: String, interval: Duration = .seconds(1)) {
        self.logger = logger
        self.level = level
        self.message = message
        self.examplesKey = examplesKey
        self.window = Mutex(LogRateWindow(interval: interval))
    }

    /// Counts `count` events named `examples`, writing a line when one is due; `metadata`
    /// (the latest event's details) goes on that line.
    public func record(
        _ count: Int = 1, examples: [String] = [], metadata: [String: LogValue] = [:],
        at now: ContinuousClock.Instant = .now
    ) {
        let summary = window.withLock { $0.add(count, examples: examples, at: now) }
        if let summary { write(summary, metadata) }
    }

    /// Writes the line for what was counted when `interval` has passed since the last one.
    public func flush(at now: ContinuousClock.Instant = .now) {
        let summary = window.withLock { $0.takeDue(at: now) }
        if let summary { write(summary, [:]) }
    }

    private func write(_ summary: LogRateWindow.Summary, _ metadata: [String: LogValue]) {
        var fields = metadata
        fields["count"] = .int(summary.count)
        fields["windowSeconds"] = .rounded(summary.seconds, digits: 1)
        if !summary.examples.isEmpty { fields[examplesKey] = .string(summary.examples.joined(separator: ",")) }
        logger.log(level, message, fields)
    }
}
