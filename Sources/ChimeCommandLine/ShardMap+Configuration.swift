import ChimeRuntime
import ChimeWire
import Foundation

extension ShardMap {
    /// The shard map of a configuration's `cluster` section, validated (every slot owned by
    /// exactly one shard, ``ShardMap/validate()``); `nil` when the section names no shard
    /// (one coordinator, today's Chime).
    /// - Throws: `ConfigurationError` naming the problem: `cluster.shards[i].slots[j]` that is
    ///   not a pair, or the first slot left unowned or owned twice.
    public static func configured(_ cluster: ChimeConfiguration.Cluster) throws(ConfigurationError) -> ShardMap? {
        guard cluster.isConfigured else { return nil }
        var shards: [Shard] = []
        for (index, shard) in cluster.shards.enumerated() {
            var ranges: [SlotRange] = []
            for (rangeIndex, pair) in shard.slots.enumerated() {
                guard pair.count == 2 else {
                    throw ConfigurationError("cluster.shards[\(index)].slots[\(rangeIndex)]: a slot range is [first, last]")
                }
                ranges.append(SlotRange(pair[0], pair[1]))
            }
            let endpoints = shard.endpoints
            shards.append(Shard(
                id: shard.id, slots: ranges,
                endpoints: Endpoints(
                    control: endpoints.control, dispatch: endpoints.dispatch, results: endpoints.results,
                    events: endpoints.events, eventsIngest: endpoints.eventsIngest)))
        }
        let map = ShardMap(mapEpoch: cluster.mapEpoch, slotCount: cluster.slotCount, shards: shards)
        do throws(WireError) {
            try map.validate()
        } catch {
            throw ConfigurationError("cluster\(error.field.map { ".\($0)" } ?? ""): \(error.message)")
        }
        return map
    }
}

extension ChimeConfiguration.Cluster {
    /// The `cluster` section holding `map`, each shard's coordinator serving HTTP at
    /// `http(id)` (`nil`: `http.listen`); no `bind` addresses (each shard binds its endpoints).
    public init(_ map: ShardMap, http: (Int) -> String? = { _ in nil }) {
        self.init()
        mapEpoch = map.mapEpoch
        slotCount = map.slotCount
        shards = map.shards.map { shard in
            let endpoints = shard.endpoints
            return ChimeConfiguration.Shard(
                id: shard.id, slots: shard.slots.map { [$0.first, $0.last] },
                endpoints: ChimeConfiguration.ShardEndpoints(
                    control: endpoints.control, dispatch: endpoints.dispatch, results: endpoints.results,
                    events: endpoints.events, eventsIngest: endpoints.eventsIngest),
                http: http(shard.id))
        }
    }
}
