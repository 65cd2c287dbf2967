import ChimeWire

/// How a worker serving every shard follows the shard map: which map it serves now, and what
/// a map just read (the `map` op of any shard) changes. Pure: maps in, decisions out.
///
/// A map is taken only when it is valid (``ShardMap/validate()``, and every endpoint a worker
/// connects to names a transport and an address) and its `mapEpoch` is above
/// the one served (a shard still on an older map, or answering the same one, changes
/// nothing). A worker cares about a shard's endpoints, not its slots: a map that only moves
/// slots is taken with nothing to start or stop.
public struct MapFollower: Sendable {
    /// What a map read changes for the worker's per-shard services.
    public struct Change: Sendable, Hashable {
        /// Shards new in the map: start a service for each.
        public var started: [ShardMap.Shard] = []
        /// Shards gone from the map (ids): stop their services (handing back what they hold).
        public var stopped: [Int] = []
        /// Shards whose endpoints changed: stop the service and start it on the new endpoints.
        public var reconnected: [ShardMap.Shard] = []

        /// Creates the value from its fields (see each property for meaning).
        public init(started: [ShardMap.Shard] = [], stopped: [Int] = [], reconnected: [ShardMap.Shard] = []) {
            self.started = started
            self.stopped = stopped
            self.reconnected = reconnected
        }

        /// Whether the set of services or their endpoints change.
        public var isEmpty: Bool { started.isEmpty && stopped.isEmpty && reconnected.isEmpty }
    }

    /// What to do about a map read.
    public enum Decision: Sendable, Hashable {
        /// Served from now on; the services change as `Change` says.
        case adopt(Change)
        /// Not newer than the map served (`fetched` ≤ `current`): nothing changes.
        case stale(current: UInt64, fetched: UInt64)
        /// Refused: the map fails validation (the error names the problem); the old one stays.
        case invalid(WireError)
    }

    /// The map served now.
    public private(set) var map: ShardMap

    /// - Parameter map: the map the worker starts with (its configuration's, validated).
    public init(map: ShardMap) {
        self.map = map
    }

    /// Decides about `fetched` and, when it is adopted, serves it from now on.
    public mutating func consider(_ fetched: ShardMap) -> Decision {
        do throws(WireError) {
            try fetched.validate()
            try Self.checkEndpoints(of: fetched)
        } catch {
            return .invalid(error)
        }
        guard fetched.mapEpoch > map.mapEpoch else { return .stale(current: map.mapEpoch, fetched: fetched.mapEpoch) }
        var change = Change()
        for shard in fetched.shards {
            guard let served = map.shard(id: shard.id) else {
                change.started.append(shard)
                continue
            }
            if served.endpoints != shard.endpoints { change.reconnected.append(shard) }
        }
        change.stopped = map.shards.map(\.id).filter { fetched.shard(id: $0) == nil }
        map = fetched
        return .adopt(change)
    }

    /// The newest map of `answers` that a majority of the shards served confirm, for a worker
    /// without CURVE keys, which cannot tell a shard from a process on its port: a map is a
    /// candidate when it is newer than the one served, and confirmed when more than half of the
    /// served map's shards that answered (their control endpoints are the keys of `answers`;
    /// seeds' answers can be candidates but do not vote) answered that same map. So one peer
    /// answering a higher `mapEpoch` beside a live shard still on the served map (a rogue on
    /// the port of a configured shard that is not running) is not followed, while a map every
    /// live coordinator has read from the register (they poll it about once a second) is,
    /// whatever shards are down. `nil` when no newer map is confirmed.
    /// - Parameter answers: each endpoint asked and the map it answered.
    public func confirmed(among answers: [String: ShardMap]) -> ShardMap? {
        let voters = Set(map.shards.map(\.endpoints.control)).filter { answers[$0] != nil }
        let candidates = Set(answers.values.filter { $0.mapEpoch > map.mapEpoch })
        for candidate in candidates.sorted(by: { $0.mapEpoch > $1.mapEpoch }) {
            let votes = voters.count { answers[$0] == candidate }
            if votes * 2 > voters.count { return candidate }
        }
        return nil
    }

    /// The transports a worker connects over.
    static let transports = ["tcp://", "ipc://", "inproc://"]

    /// Checks that every endpoint a worker connects to names a transport and an address (a
    /// map served by a coordinator that validated its configuration always does; anything else
    /// would stop the worker at its first connect).
    /// - Throws: `WireError(.invalidArgument)` naming the first endpoint that does not.
    static func checkEndpoints(of map: ShardMap) throws(WireError) {
        for (index, shard) in map.shards.enumerated() {
            let endpoints = shard.endpoints
            for (name, endpoint) in [("dispatch", endpoints.dispatch), ("results", endpoints.results), ("eventsIngest", endpoints.eventsIngest)]
            where !transports.contains(where: { endpoint.hasPrefix($0) && endpoint.count > $0.count }) {
                throw WireError(
                    .invalidArgument, "shard \(shard.id)'s \(name) endpoint '\(endpoint.prefix(100))' is not tcp://, ipc:// or inproc:// with an address",
                    field: "shards[\(index)].endpoints.\(name)")
            }
        }
    }
}
