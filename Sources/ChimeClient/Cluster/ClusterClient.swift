import ChimeCore
import ChimeSecurity
import ChimeWire
import Foundation
import ZeroMQ

/// Sends control requests to a sharded cluster as if it were one coordinator: it asks any
/// known control endpoint for the shard map (`{"op":"map"}`), caches it, keeps one control
/// client (one DEALER) per shard, and routes a request by its routing recipient's slot
/// (`ControlRequest.routingRecipient`, `ShardMap.slot(of:)`).
///
/// A `wrong_shard` reply (the map changed: Redis Cluster's `MOVED`) refreshes the map, asking
/// the shard it names first, and sends the same bytes again — the same `requestId`, so a
/// retry is applied once — at most ``maximumRedirects`` times. Requests about no one
/// recipient scatter to every shard and gather (`ClusterClient+Scatter.swift`,
/// `+Listing.swift`); a shard that does not answer makes a `partial` outcome that names it.
///
/// A single-shard cluster (a coordinator without a `cluster` section answers a map of one
/// shard) is today's one coordinator: every request goes to the endpoint the map was asked
/// of, unchanged. A coordinator that does not know `map` is taken for one shard too. A
/// request about one recipient does not wait for the map: before it was asked for, the
/// request goes to the first seed (or its owner in a configured `routingHint`) and the map
/// is asked for only on `wrong_shard`, so a CLI call on one shard is one round trip.
/// Not `Sendable`: one thread uses a client; a scatter polls every shard from that thread.
public final class ClusterClient {
    let context: Context
    let seeds: [String]
    let timeout: Duration
    let retries: Int
    let curve: CurveClientKeys?
    let refusedGrace: Duration
    let codec = WireCodec()
    /// One control client per endpoint, made on first use.
    var clients: [String: ControlClient] = [:]
    /// The cached map; `nil` until first asked.
    public private(set) var map: ShardMap?
    /// The endpoint a single-shard map was asked of: shard 0 is reached there.
    var singleShardEndpoint: String?
    /// A map to route by before one was asked for (the configuration's `cluster` section);
    /// never used for a scatter, which asks for the map.
    let routingHint: ShardMap?

    /// How many times one request follows `wrong_shard` (each after a map refresh).
    public static let maximumRedirects = 2

    /// - Parameters:
    ///   - seeds: control endpoints to ask for the map, in order (`tcp://127.0.0.1:7700`);
    ///     at least one.
    ///   - timeout: as for each shard's ``ControlClient``.
    ///   - retries: as for each shard's ``ControlClient``.
    ///   - curve: as for each shard's ``ControlClient``.
    ///   - context: the ZeroMQ context (`nil` makes one).
    ///   - refusedGrace: as for each shard's ``ControlClient``.
    ///   - routingHint: a map to route single-recipient requests by until the map has been
    ///     asked for (the configured `cluster` section); `nil` sends them to the first seed.
    /// - Throws: `WireError(.invalidArgument)` for no seeds; `ZeroMQError` when no context
    ///   can be made.
    public init(
        seeds: [String], timeout: Duration = .seconds(3), retries: Int = 2, curve: CurveClientKeys? = nil,
        context: Context? = nil, refusedGrace: Duration = .milliseconds(500), routingHint: ShardMap? = nil
    ) throws {
        guard !seeds.isEmpty else {
            throw WireError(.invalidArgument, "a cluster client needs at least one control endpoint to ask for the map")
        }
        self.context = try context ?? Context()
        self.seeds = seeds
        self.timeout = timeout
        self.retries = retries
        self.curve = curve
        self.refusedGrace = refusedGrace
        self.routingHint = routingHint
    }

    /// The control client of `endpoint` (made on first use).
    /// - Throws: `WireError(.unavailable)` when no socket can be made.
    func client(at endpoint: String) throws(WireError) -> ControlClient {
        if let client = clients[endpoint] { return client }
        let client = try uncachedClient(at: endpoint)
        clients[endpoint] = client
        return client
    }

    /// A control client of `endpoint` that is not kept: for a scatter whose map names one
    /// endpoint for two shards (each exchange needs its own socket).
    /// - Throws: `WireError(.unavailable)` when no socket can be made.
    func uncachedClient(at endpoint: String) throws(WireError) -> ControlClient {
        do {
            return try ControlClient(
                endpoint: endpoint, timeout: timeout, retries: retries, curve: curve, context: context,
                refusedGrace: refusedGrace)
        } catch {
            throw WireError(.unavailable, "cannot make a control socket for \(endpoint): \(error)")
        }
    }

    /// The control endpoint of shard `id` under the cached map.
    func endpoint(ofShard id: Int) throws(WireError) -> String {
        let map = try currentMap()
        if map.shards.count == 1, let singleShardEndpoint { return singleShardEndpoint }
        guard let shard = map.shard(id: id) else {
            throw WireError(.unavailable, "shard \(id) is not in the shard map (epoch \(map.mapEpoch))")
        }
        return shard.endpoints.control
    }

    /// The control client of shard `id`.
    /// - Throws: `WireError(.unavailable)` when the map has no such shard.
    public func client(forShard id: Int) throws(WireError) -> ControlClient {
        try client(at: endpoint(ofShard: id))
    }

    /// A pipelined client (many requests in flight on one connection) to shard `id`'s control
    /// endpoint, with this client's retries, CURVE keys and context, and this client's timeout
    /// times `timeoutFactor` (requests in flight share the coordinator's time). The caller owns
    /// it (and closes it); it does not follow `wrong_shard` by itself.
    /// - Throws: `WireError(.unavailable)` when the map has no such shard or no socket can be made.
    public func pipelinedClient(forShard id: Int, window: Int, timeoutFactor: Int = 1) throws(WireError) -> PipelinedClient {
        try PipelinedClient(
            endpoint: endpoint(ofShard: id), window: window, timeout: timeout * max(1, timeoutFactor), retries: retries,
            curve: curve, context: context)
    }

    /// The cached map, asked of the seeds first when there is none.
    /// - Throws: `WireError` as ``refreshMap(askingFirst:)``.
    public func currentMap() throws(WireError) -> ShardMap {
        if let map { return map }
        return try refreshMap()
    }

    /// Whether the cluster is one shard (today's one coordinator).
    /// - Throws: `WireError` as ``refreshMap(askingFirst:)``.
    public func isSingleShard() throws(WireError) -> Bool { try currentMap().shards.count == 1 }

    /// Asks for the map again: shard `askingFirst`'s endpoint first (the owner a
    /// `wrong_shard` named), then the seeds, then every other shard of the cached map. A
    /// map with a lower `mapEpoch` than the cached one is not taken.
    /// - Throws: `WireError(.unavailable)` when no endpoint answered; `.invalidArgument` when
    ///   the map that came fails `ShardMap.validate()`; the last error reply otherwise.
    @discardableResult
    public func refreshMap(askingFirst shard: Int? = nil) throws(WireError) -> ShardMap {
        var candidates: [String] = []
        if let shard, let known = map?.shard(id: shard), (map?.shards.count ?? 0) > 1 {
            candidates.append(known.endpoints.control)
        }
        candidates += seeds
        if let map, map.shards.count > 1 { candidates += map.shards.map(\.endpoints.control) }
        var seen = Set<String>()
        var lastError: WireError?
        for endpoint in candidates where seen.insert(endpoint).inserted {
            do {
                let fetched = try fetchMap(from: endpoint)
                try fetched.validate()
                if let cached = map, cached.mapEpoch > fetched.mapEpoch { return cached }
                map = fetched
                singleShardEndpoint = fetched.shards.count == 1 ? endpoint : nil
                return fetched
            } catch {
                lastError = error
            }
        }
        throw lastError ?? WireError(.unavailable, "no control endpoint to ask for the shard map")
    }

    /// One `map` exchange; a coordinator that does not know the op is one shard at `endpoint`.
    func fetchMap(from endpoint: String) throws(WireError) -> ShardMap {
        let body = codec.encode(ControlRequest(requestId: UUID().uuidString, command: .map))
        let data = try client(at: endpoint).exchange(body)
        let reply = try codec.decode(ControlReply<ShardMap>.self, from: data)
        if reply.ok, let map = reply.result { return map }
        let error = reply.error ?? WireError(.malformed, "the map reply has ok=false and no error")
        guard error.code == .unknownOperation else { throw error }
        return .single(ShardMap.Endpoints(control: endpoint, dispatch: "", results: "", events: "", eventsIngest: ""))
    }

    /// The shard `recipient` routes to under the cached map (shard 0's when `nil` or unowned).
    /// - Throws: `WireError` as ``currentMap()``.
    public func shard(of recipient: RecipientID?) throws(WireError) -> Int {
        let map = try currentMap()
        guard let recipient, let owner = map.shard(of: recipient) else { return map.shards[0].id }
        return owner.id
    }

    /// Sends `request` to its routing recipient's shard and decodes the reply's result. A
    /// request that names no recipient goes to the first shard (use the scatter calls for
    /// cluster-wide ones).
    /// - Throws: `WireError`: the shard's error reply, `.unavailable` when it did not answer.
    public func send<Result: Codable & Sendable>(_ request: ControlRequest, expecting: Result.Type)
        throws(WireError) -> (reply: ControlReply<Result>, bytes: Data)
    {
        var request = request
        if request.requestId == nil { request.requestId = UUID().uuidString }
        let data = try exchange(codec.encode(request), routing: request.routingRecipient)
        let reply = try codec.decode(ControlReply<Result>.self, from: data)
        if !reply.ok { throw reply.error ?? WireError(.malformed, "the reply has ok=false and no error") }
        return (reply, data)
    }

    /// Sends raw request bytes to `recipient`'s shard, following `wrong_shard` (map refresh,
    /// the same bytes again) at most ``maximumRedirects`` times; returns the raw reply.
    ///
    /// Before the map has been asked for, the request goes straight to the first seed (or to
    /// the owner in `routingHint`): a one-shard cluster answers it in one round trip, and
    /// the map is asked for only when a shard answers `wrong_shard`.
    /// - Throws: `WireError(.unavailable)` when the shard did not answer; the last
    ///   `wrong_shard` when redirects ran out.
    public func exchange(_ body: Data, routing recipient: RecipientID?) throws(WireError) -> Data {
        var redirects = 0
        var target: Int
        if map == nil {
            let first = endpointBeforeMap(for: recipient)
            let reply = try client(at: first).exchange(body)
            guard let wrong = Self.wrongShard(in: reply) else { return reply }
            redirects = 1
            let refreshed = try refreshMap()
            target = try shard(of: recipient)
            if try endpoint(ofShard: target) == first, let named = wrong.shard, refreshed.shard(id: named) != nil { target = named }
        } else {
            target = try shard(of: recipient)
        }
        while true {
            let reply = try client(forShard: target).exchange(body)
            guard let wrong = Self.wrongShard(in: reply) else { return reply }
            redirects += 1
            guard redirects <= Self.maximumRedirects else { throw wrong }
            let refreshed = try refreshMap(askingFirst: wrong.shard)
            let routed = try shard(of: recipient)
            // A map no newer than the refusing shard's still routes back to it: follow the
            // owner it named, as Redis Cluster's MOVED is followed.
            if routed == target, let named = wrong.shard, refreshed.shard(id: named) != nil {
                target = named
            } else {
                target = routed
            }
        }
    }

    /// The `wrong_shard` error of a reply, or `nil` for any other reply (only short replies
    /// are decoded: a refusal is about 200 bytes; a listing may be megabytes).
    static func wrongShard(in reply: Data) -> WireError? {
        // A reply that does not decode here is not a refusal; the caller decodes it again
        // and reports what is wrong with it.
        guard reply.count < 2048, reply.range(of: Data(#""wrong_shard""#.utf8)) != nil,
            let error = WirePeek.error(in: reply), error.code == .wrongShard
        else { return nil }
        return error
    }
}
