import ChimeCommandLine
import ChimeRuntime
import Foundation

/// The progress line of a listing that follows short pages (`chime list --recipient R` among
/// many reminders): on a terminal only, once the listing has taken a second, redrawn at most
/// 10 times a second in place (`listing: 14 requests, 3 found`), cleared at the end.
final class ListingProgress {
    let isTerminal = isatty(STDERR_FILENO) == 1
    let started = Date()
    var lastDrawn = Date.distantPast
    var hasDrawn = false

    /// Reports the requests made and the matches found so far.
    func update(requests: Int, found: Int) {
        let now = Date()
        guard isTerminal, now.timeIntervalSince(started) >= 1, now.timeIntervalSince(lastDrawn) >= 0.1 else { return }
        lastDrawn = now
        StandardStreams.writeError("\rlisting: \(requests) requests, \(found) found\u{1B}[K")
        hasDrawn = true
    }

    /// Clears the line before the listing is printed.
    func finish() {
        guard hasDrawn else { return }
        StandardStreams.writeError("\r\u{1B}[K")
        hasDrawn = false
    }
}
