import ChimeRuntime
import ChimeCommandLine
import Foundation

/// Progress of a bulk operation on standard error, and its one-line summary.
///
/// On a terminal (isatty(2)) a bar redrawn at most 10 times a second: done items, items/s
/// and, when the share done is known, the ETA. Otherwise a plain line every 5 s. Nothing
/// with `quiet`.
final class BulkProgress {
    let verb: String
    let isQuiet: Bool
    let isTerminal: Bool
    let started = Date()
    var lastDrawn = Date.distantPast
    var hasDrawn = false

    /// - Parameters:
    ///   - verb: the past tense of the work (`scheduled`, `retried`).
    ///   - quiet: draw nothing.
    init(verb: String, quiet: Bool) {
        self.verb = verb
        self.isQuiet = quiet
        self.isTerminal = isatty(STDERR_FILENO) == 1
    }

    /// Seconds since the start.
    var elapsed: Double { Date().timeIntervalSince(started) }

    /// Reports `done` items so far; `fraction` (0…1) is the share of all items settled (done
    /// or failed), when known (``bulkSettledShare(settled:read:readFraction:)``).
    func update(done: Int, failed: Int, fraction: Double?) {
        guard !isQuiet else { return }
        let now = Date()
        let interval = isTerminal ? 0.1 : 5
        guard now.timeIntervalSince(lastDrawn) >= interval else { return }
        lastDrawn = now
        let seconds = max(elapsed, 0.001)
        let rate = Double(done + failed) / seconds
        var line = "\(done) \(verb)" + (failed > 0 ? ", \(failed) failed" : "") + ", \(Int(rate.rounded()))/s"
        if let fraction, fraction > 0.001, fraction <= 1 {
            let remaining = seconds * (1 - fraction) / fraction
            line += ", ETA \(Self.seconds(remaining))"
            if isTerminal {
                let width = 24
                let filled = min(width, Int(fraction * Double(width)))
                line = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                    + "\(Int((fraction * 100).rounded(.down)))% " + line
            }
        }
        if isTerminal {
            // \r and erase-to-end-of-line redraw the bar in place.
            StandardStreams.writeError("\r\(line)\u{1B}[K")
            hasDrawn = true
        } else {
            StandardStreams.writeError("chime: \(line)\n")
        }
    }

    /// Clears the bar before other output goes to standard error.
    func clear() {
        guard hasDrawn else { return }
        StandardStreams.writeError("\r\u{1B}[K")
        hasDrawn = false
    }

    /// `scheduled 100000, failed 0 in 8.3 s (12048/s)`.
    func summary(done: Int, failed: Int) -> String {
        let seconds = elapsed
        let rate = seconds > 0 ? Double(done + failed) / seconds : 0
        return "\(verb) \(done), failed \(failed) in \(String(format: "%.1f", seconds)) s (\(Int(rate.rounded()))/s)"
    }

    static func seconds(_ value: Double) -> String {
        guard value.isFinite else { return "?" }
        return value < 60 ? "\(Int(value.rounded(.up)))s" : "\(Int(value / 60))m\(Int(value.truncatingRemainder(dividingBy: 60)))s"
    }
}
