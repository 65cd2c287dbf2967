import ChimeCore
import Foundation

/// What the coordinator knows of one worker: where it runs, when it was last heard from, its
/// credit, and how it has done.
struct WorkerRecord: Sendable {
    var host: String
    var pid: Int32
    /// When it was last heard from (UTC), for `workers` listings.
    var lastSeenAt: Date
    /// The same moment on the monotonic timeline (`elapsed`), in seconds: liveness is
    /// measured on it.
    var lastSeenElapsed: Double
    var capacity: Int
    var outstanding = 0
    var isAlive = true
    /// Whether the dispatch socket can route to it: set by a message that came over the
    /// dispatch connection, cleared when a hand-off fails.
    var isReachable = false
    /// Whether it said it was leaving: its results (another socket, so they may arrive
    /// after the `leaving` announcement) settle what they acknowledge without bringing it
    /// back; only a message over dispatch, or another pid, does.
    var hasLeft = false
    var acknowledged = 0
    var delivered = 0
    /// When this worker last got a batch (a counter), so ties rotate between workers.
    var lastAssignment = 0
}
