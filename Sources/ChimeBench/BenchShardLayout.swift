import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation

/// The shape of a sharded bench cluster, pure: the shard map on loopback port blocks, the
/// children's configuration carrying it, which shard each plan id goes to, and a warm-up
/// recipient on each shard.
///
/// The port blocks are `chime up --shards N`'s: shard k uses `base + 10k … base + 10k + 4`
/// for control, dispatch, results, events and events-ingest, and `base + 10k + 5` for HTTP.
public enum BenchShardLayout {
    /// Ports between one shard's block and the next (as `chime up --shards`).
    public static let portsPerShard = 10

    /// The map of `shards` shards splitting the default slot count evenly
    /// (`ShardMap.evenlySplit`), shard k's endpoints on `tcp://127.0.0.1:<base + 10k + i>`.
    public static func map(shards: Int, base: Int) -> ShardMap {
        ShardMap.evenlySplit(shards: shards) { id in
            let port = base + portsPerShard * id
            return ShardMap.Endpoints(
                control: "tcp://127.0.0.1:\(port)", dispatch: "tcp://127.0.0.1:\(port + 1)",
                results: "tcp://127.0.0.1:\(port + 2)", events: "tcp://127.0.0.1:\(port + 3)",
                eventsIngest: "tcp://127.0.0.1:\(port + 4)")
        }
    }

    /// `configuration` (a JSON object) with a `cluster` section holding `map`; each shard's
    /// coordinator serves HTTP on the sixth port of its block (`base + 10k + 5`), or none
    /// when `http.listen` is `off`. A `cluster` section already there is replaced.
    /// - Throws: `BenchError` when `configuration` is not a JSON object.
    public static func configuration(_ configuration: Data, map: ShardMap) throws -> Data {
        guard let object = try? JSONSerialization.jsonObject(with: configuration), var root = object as? [String: Any] else {
            throw BenchError("the cluster configuration must be a JSON object")
        }
        let httpOff = ((root["http"] as? [String: Any])?["listen"] as? String) == "off"
        var cluster = ChimeConfiguration.Cluster()
        cluster.mapEpoch = map.mapEpoch
        cluster.slotCount = map.slotCount
        cluster.shards = map.shards.map { shard in
            let endpoints = shard.endpoints
            let http = httpOff ? "off" : "127.0.0.1:\(port(of: endpoints.control).map { $0 + 5 } ?? 0)"
            return ChimeConfiguration.Shard(
                id: shard.id, slots: shard.slots.map { [$0.first, $0.last] },
                endpoints: ChimeConfiguration.ShardEndpoints(
                    control: endpoints.control, dispatch: endpoints.dispatch, results: endpoints.results,
                    events: endpoints.events, eventsIngest: endpoints.eventsIngest),
                http: http)
        }
        root["cluster"] = try JSONSerialization.jsonObject(with: JSONEncoder().encode(cluster))
        return try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys])
    }

    /// A free block of `count` loopback ports (``LoopbackPorts/freeBase(count:)``) outside the
    /// kernel's ephemeral range when one is found in 50 tries: a restarted coordinator rebinds
    /// its ports while workers keep reconnecting to them, and a reconnect from an ephemeral
    /// port equal to the listening one connects to itself and holds the port (seen at 8 shards:
    /// `zmq_bind: Address already in use`).
    static func freeBase(count: Int) -> Int? {
        let ephemeral = ephemeralPortRange()
        var fallback: Int?
        for _ in 0..<50 {
            guard let base = LoopbackPorts.freeBase(count: count) else { continue }
            guard let ephemeral, ephemeral.overlaps(base..<(base + count)) else { return base }
            fallback = fallback ?? base
        }
        return fallback
    }

    /// `/proc/sys/net/ipv4/ip_local_port_range` as a range; `nil` when unreadable.
    static func ephemeralPortRange() -> Range<Int>? {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) else { return nil }
        return ephemeralPortRange(parsing: text)
    }

    /// The range of a `ip_local_port_range` text (`"32768\t60999\n"`); `nil` for anything else.
    static func ephemeralPortRange(parsing text: String) -> Range<Int>? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        guard fields.count == 2, let low = Int(fields[0]), let high = Int(fields[1]), low <= high, high < Int.max else { return nil }
        return low..<(high + 1)
    }

    /// The port of a `tcp://HOST:PORT` address.
    static func port(of endpoint: String) -> Int? {
        endpoint.split(separator: ":").last.flatMap { Int($0) }
    }

    /// The plan's ids per shard, in the order of `map.shards`, each list ascending: id `i`
    /// goes to the shard owning the slot of `recipients[i % recipients.count]`.
    /// - Throws: `BenchError` when a recipient's slot has no owner (an invalid map) or there
    ///   are no recipients.
    public static func partition(count: Int, recipients: [String], map: ShardMap) throws -> [[Int]] {
        guard !recipients.isEmpty else { throw BenchError("a plan needs at least one recipient") }
        var indexOfShard: [Int: Int] = [:]
        for (index, shard) in map.shards.enumerated() { indexOfShard[shard.id] = index }
        let laneOfRecipient = try recipients.map { name in
            guard let owner = map.shard(of: RecipientID(rawValue: name)), let lane = indexOfShard[owner.id] else {
                throw BenchError("no shard owns the slot of recipient \(name)")
            }
            return lane
        }
        var lanes = [[Int]](repeating: [], count: map.shards.count)
        for id in 0..<max(0, count) { lanes[laneOfRecipient[id % recipients.count]].append(id) }
        return lanes
    }

    /// For each shard of `map` (in its order), the first recipient `<prefix>-0`, `<prefix>-1`,
    /// … whose slot it owns: warm-up probes then travel every shard's path.
    /// - Throws: `BenchError` when a shard owns none of the first 100,000 names (a shard with
    ///   almost no slots).
    public static func recipients(onEachShardOf map: ShardMap, prefix: String) throws -> [String] {
        var found: [Int: String] = [:]
        for index in 0..<100_000 where found.count < map.shards.count {
            let name = "\(prefix)-\(index)"
            if let owner = map.shard(of: RecipientID(rawValue: name)), found[owner.id] == nil { found[owner.id] = name }
        }
        return try map.shards.map { shard in
            guard let name = found[shard.id] else { throw BenchError("no recipient \(prefix)-N lands on shard \(shard.id)") }
            return name
        }
    }
}
