import ChimeCore
import ChimeWire

/// How `chime up` judges its worker processes from every shard's `workers` listing: a
/// running worker that some shard that answered lists (same id, same pid) as not alive, for
/// `silenceSeconds` in a row, is to be killed and restarted (SIGSTOPped, hung, or one of its
/// per-shard loops stalled: a worker serves every shard, so one shard that stopped hearing
/// from it is enough). Pure: listings and a monotonic time in, names out.
///
/// A shard that did not answer is no evidence either way; when no shard answered, nothing is
/// known and every count starts again.
public struct WorkerWatch: Sendable {
    /// How long a running worker may be reported not alive before it is killed, in seconds.
    public var silenceSeconds: Double
    /// Since when (monotonic seconds) each worker, by name, has been reported not alive.
    private var silentSince: [String: Double] = [:]

    /// - Parameter silenceSeconds: see ``silenceSeconds``.
    public init(silenceSeconds: Double = 3) {
        self.silenceSeconds = silenceSeconds
    }

    /// One round of judgement.
    /// - Parameters:
    ///   - running: the running worker processes: name (also their worker id) → pid.
    ///   - listings: per shard id, its `workers` listing, or `nil` when it did not answer.
    ///   - now: a monotonic reading, in seconds.
    /// - Returns: the workers to kill, by name (sorted), each with the shards that report it
    ///   not alive.
    public mutating func observe(running: [String: Int32], listings: [Int: [WorkerReport]?], at now: Double)
        -> [(name: String, shards: [Int])]
    {
        let answered = listings.compactMapValues { $0 }
        guard !answered.isEmpty else {
            silentSince.removeAll()
            return []
        }
        var kills: [(name: String, shards: [Int])] = []
        for (name, pid) in running.sorted(by: { $0.key < $1.key }) {
            let silentOn = answered.keys.sorted().filter { shard in
                answered[shard]?.contains { $0.id.rawValue == name && $0.pid == pid && !$0.alive } == true
            }
            guard !silentOn.isEmpty else {
                silentSince[name] = nil
                continue
            }
            let since = silentSince[name] ?? now
            silentSince[name] = since
            if now - since >= silenceSeconds {
                kills.append((name, silentOn))
                silentSince[name] = nil
            }
        }
        for name in silentSince.keys where running[name] == nil { silentSince[name] = nil }
        return kills
    }
}
