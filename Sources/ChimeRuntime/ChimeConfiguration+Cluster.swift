import Foundation

extension ChimeConfiguration {
    /// The `cluster` section: the shard map of a cluster of several coordinators, as JSON.
    ///
    /// Shape (the `map` reply's, plus two optional keys per shard):
    /// `{"mapEpoch": 1, "slotCount": 4096, "shards": [{"id": 0, "slots": [[0, 1365]],
    /// "endpoints": {"control": "tcp://chime-coordinator-0.chime:7700", "dispatch": …,
    /// "results": …, "events": …, "eventsIngest": …}, "bind": {…the same five keys…},
    /// "http": "0.0.0.0:7705"}, …]}`.
    /// - `endpoints` are where everyone else connects to the shard;
    /// - `bind` (optional) is where the shard's coordinator binds each socket (a DNS name
    ///   cannot be bound: a Kubernetes pod binds `tcp://0.0.0.0:7700` and is reached by its
    ///   headless-Service name); without it the coordinator binds the `endpoints` addresses;
    /// - `http` (optional) is the shard coordinator's `http.listen`; without it `http.listen`
    ///   applies.
    ///
    /// No shards (the default) means no cluster: one coordinator owning every slot, on
    /// `endpoints`, exactly as before sharding. This module does not know the map's rules:
    /// `ShardMap` (ChimeWire) validates it when a coordinator or worker starts.
    public struct Cluster: Codable, Hashable, Sendable {
        /// The shard map's version.
        public var mapEpoch: UInt64 = 1
        /// Slots in the cluster (fixed when the cluster is created).
        public var slotCount = 4096
        /// The shards; empty: no cluster.
        public var shards: [Shard] = []
        /// How often a worker asks the shards for the current map (the `map` op) to follow its
        /// changes, in seconds (SIGHUP asks at once); 0.1 to 3600.
        public var mapRefreshSeconds = 5.0
        /// The cluster's map register (the map, the slot moves open on it and their outcomes,
        /// changed by compare-and-swap: `chime shards move`): a file path (relative paths are
        /// taken from the working directory), or `configmap:NAME` / `configmap:NAMESPACE/NAME`
        /// for a Kubernetes ConfigMap reached with the pod's service account (the environment
        /// variables `CHIME_KUBERNETES_API`, `CHIME_KUBERNETES_TOKEN_FILE`,
        /// `CHIME_KUBERNETES_CA_FILE` and `CHIME_KUBERNETES_NAMESPACE` override the API server,
        /// token, CA bundle and namespace). Empty (the default): no register, the map is the
        /// one above and never changes while the processes run. Created from the map above by
        /// the first coordinator that starts; from then on the register's map wins.
        public var register = ""

        /// The defaults shown on each property.
        public init() {}

        /// Whether a cluster is configured (at least one shard).
        public var isConfigured: Bool { !shards.isEmpty }
    }

    /// One shard of the `cluster` section.
    public struct Shard: Codable, Hashable, Sendable {
        /// The shard id (a Kubernetes StatefulSet ordinal).
        public var id: Int
        /// Inclusive slot ranges `[first, last]`.
        public var slots: [[Int]]
        /// Where others connect.
        public var endpoints: ShardEndpoints
        /// Where the shard's coordinator binds; `nil`: the `endpoints` addresses.
        public var bind: ShardEndpoints?
        /// The shard coordinator's HTTP address (`HOST:PORT` or `off`); `nil`: `http.listen`.
        public var http: String?

        /// Creates the value from its fields (see each property for meaning and units).
        public init(id: Int, slots: [[Int]], endpoints: ShardEndpoints, bind: ShardEndpoints? = nil, http: String? = nil) {
            self.id = id
            self.slots = slots
            self.endpoints = endpoints
            self.bind = bind
            self.http = http
        }

        private enum CodingKeys: String, CodingKey, CaseIterable { case id, slots, endpoints, bind, http }

        /// Decodes a shard, refusing keys it does not know (a typo would otherwise be ignored).
        /// - Throws: `DecodingError`.
        public init(from decoder: any Decoder) throws {
            try refuseUnknownKeys(in: decoder, known: CodingKeys.allCases.map(\.rawValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            slots = try container.decode([[Int]].self, forKey: .slots)
            endpoints = try container.decode(ShardEndpoints.self, forKey: .endpoints)
            bind = try container.decodeIfPresent(ShardEndpoints.self, forKey: .bind)
            http = try container.decodeIfPresent(String.self, forKey: .http)
        }
    }

    /// A shard's five socket addresses.
    public struct ShardEndpoints: Codable, Hashable, Sendable {
        /// Control ROUTER.
        public var control: String
        /// Dispatch ROUTER.
        public var dispatch: String
        /// Results PULL.
        public var results: String
        /// Events XPUB (subscribers).
        public var events: String
        /// Events XSUB (workers).
        public var eventsIngest: String

        /// Creates the value from its fields (see each property for meaning and units).
        public init(control: String, dispatch: String, results: String, events: String, eventsIngest: String) {
            self.control = control
            self.dispatch = dispatch
            self.results = results
            self.events = events
            self.eventsIngest = eventsIngest
        }

        private enum CodingKeys: String, CodingKey, CaseIterable { case control, dispatch, results, events, eventsIngest }

        /// Decodes the five addresses, refusing keys it does not know.
        /// - Throws: `DecodingError`.
        public init(from decoder: any Decoder) throws {
            try refuseUnknownKeys(in: decoder, known: CodingKeys.allCases.map(\.rawValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            control = try container.decode(String.self, forKey: .control)
            dispatch = try container.decode(String.self, forKey: .dispatch)
            results = try container.decode(String.self, forKey: .results)
            events = try container.decode(String.self, forKey: .events)
            eventsIngest = try container.decode(String.self, forKey: .eventsIngest)
        }
    }

    /// This configuration as shard `id`'s coordinator runs it: `endpoints` become the shard's
    /// (binding its `bind` addresses, else its `endpoints`) and `http.listen` the shard's
    /// `http` when it has one.
    /// - Throws: `ConfigurationError` when the `cluster` section has no shard `id`.
    public func selectingShard(_ id: Int) throws(ConfigurationError) -> ChimeConfiguration {
        guard let shard = cluster.shards.first(where: { $0.id == id }) else {
            let ids = cluster.shards.map { String($0.id) }.joined(separator: ", ")
            throw ConfigurationError("cluster: there is no shard \(id) (shards: \(ids.isEmpty ? "none" : ids))")
        }
        var selected = self
        let connect = shard.endpoints
        let bind = shard.bind ?? connect
        selected.endpoints.control = Endpoint(bind: bind.control, connect: connect.control)
        selected.endpoints.dispatch = Endpoint(bind: bind.dispatch, connect: connect.dispatch)
        selected.endpoints.results = Endpoint(bind: bind.results, connect: connect.results)
        selected.endpoints.events = Endpoint(bind: bind.events, connect: connect.events)
        selected.endpoints.eventsIngest = Endpoint(bind: bind.eventsIngest, connect: connect.eventsIngest)
        if let http = shard.http { selected.http.listen = http }
        return selected
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private func refuseUnknownKeys(in decoder: any Decoder, known: [String]) throws {
    let container = try decoder.container(keyedBy: AnyKey.self)
    if let unknown = container.allKeys.first(where: { !known.contains($0.stringValue) }) {
        throw DecodingError.dataCorruptedError(
            forKey: unknown, in: container, debugDescription: "unknown key \(unknown.stringValue) (known: \(known.joined(separator: ", ")))")
    }
}
