import Synchronization

/// Warnings caused by what one peer sent, rate-limited per peer: at most ``linesPerSecond``
/// lines a second from each peer; the lines beyond are counted and reported as one line
/// (`"suppressed": N`) with that peer's next line after the second is over. One peer sending
/// garbage as fast as it can therefore writes a few lines a second, not a line per message,
/// and never hides another peer's lines.
///
/// Bounded state: at most ``maximumPeers`` peers are tracked; a new peer past that replaces
/// the one seen least recently (its pending count is reported first). Thread-safe.
public final class PeerLog: Sendable {
    private struct Window {
        var started: ContinuousClock.Instant
        var written: Int
        var suppressed: Int
        var lastSeen: ContinuousClock.Instant
    }

    /// Lines a second one peer may cause.
    public let linesPerSecond: Int
    /// Peers tracked at once.
    public let maximumPeers: Int
    private let logger: Logger
    private let windows = Mutex<[String: Window]>([:])

    /// A per-peer limit of `linesPerSecond` lines through `logger`.
    public init(logger: Logger, linesPerSecond: Int = 5, maximumPeers: Int = 1024) {
        self.logger = logger
        self.linesPerSecond = max(1, linesPerSecond)
        self.maximumPeers = max(1, maximumPeers)
    }

    /// Writes a warning caused by `peer` (an address or key; `nil` counts as one unnamed
    /// peer) unless that peer has had its lines this second. The line carries `"peer"`.
    public func warning(_ peer: String?, _ message: String, _ metadata: [String: LogValue], at now: ContinuousClock.Instant = .now) {
        guard logger.minimumLevel <= .warning else { return }
        let key = peer ?? ""
        let (isWritten, suppressedBefore, evicted): (Bool, Int, (String, Int)?) = windows.withLock { windows in
            var evicted: (String, Int)?
            if windows[key] == nil, windows.count >= maximumPeers,
                let oldest = windows.min(by: { $0.value.lastSeen < $1.value.lastSeen })
            {
                windows[oldest.key] = nil
                if oldest.value.suppressed > 0 { evicted = (oldest.key, oldest.value.suppressed) }
            }
            var window = windows[key] ?? Window(started: now, written: 0, suppressed: 0, lastSeen: now)
            var suppressedBefore = 0
            if now - window.started >= .seconds(1) {
                suppressedBefore = window.suppressed
                window = Window(started: now, written: 0, suppressed: 0, lastSeen: now)
            }
            window.lastSeen = now
            let isWritten = window.written < linesPerSecond
            if isWritten { window.written += 1 } else { window.suppressed += 1 }
            windows[key] = window
            return (isWritten, suppressedBefore, evicted)
        }
        if let (peer, count) = evicted {
            logger.log(.warning, "lines suppressed", ["peer": .string(peer), "suppressed": .int(count)])
        }
        guard isWritten else { return }
        var fields = metadata
        fields["peer"] = .string(key)
        if suppressedBefore > 0 { fields["suppressed"] = .int(suppressedBefore) }
        logger.log(.warning, message, fields)
    }
}
