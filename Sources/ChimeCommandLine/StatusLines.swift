import ChimeCore
import ChimeWire
import Foundation

/// Lines of `ctl status` that are decided from a report alone.
public enum StatusLines {
    /// `STALLED: 3 firings due, no live worker (the oldest waiting 42s)` when firings are due
    /// and no worker is alive to take them (``StatusReport/dueWithoutWorker``), else `nil`.
    /// - Parameters:
    ///   - due: the firings due without a worker (`nil` or 0: not stalled).
    ///   - oldestAgeSeconds: how long the oldest has waited, in seconds.
    public static func stalled(due: Int?, oldestAgeSeconds: Double?) -> String? {
        guard let due, due > 0 else { return nil }
        let noun = due == 1 ? "firing" : "firings"
        let waited = oldestAgeSeconds.map { " (the oldest waiting \(HumanTime.duration(seconds: max(0, $0))))" } ?? ""
        return "STALLED: \(due) \(noun) due, no live worker\(waited)"
    }
}
