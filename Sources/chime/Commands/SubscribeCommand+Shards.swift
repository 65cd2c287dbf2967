import ChimeClient
import ChimeCommandLine
import ChimeCore
import ChimeRuntime
import ChimeSecurity
import ChimeWire
import Foundation
import Synchronization
import ZeroMQ

extension SubscribeCommand {
    /// The cluster's current map (the map register's when `cluster.register` names one, else
    /// the configuration's `cluster` map: a moved slot's events then follow the hand-overs from
    /// the map that holds now), else the coordinator's answer to `map`; `nil` when no
    /// coordinator answers, one refuses `map` (an older version) or `stop` is signalled while
    /// it is asked (one coordinator is assumed: the subscriber waits for it, as before shards).
    /// - Throws: configuration errors (a `cluster` section that does not validate, keys, a
    ///   register that cannot be read).
    static func shardMap(_ configuration: ChimeConfiguration, stop: StopSignal) throws -> ShardMap? {
        if let configured = try MapRegisterOptions.currentMap(configuration) { return configured }
        // A context the stop signal shuts down: a SIGTERM while the coordinator is asked (or
        // while nothing answers) ends the wait at once, as it does for the catch-up.
        let context = try Context()
        stop.onStop { context.shutdown() }
        let client = try ClusterClient(
            seeds: [configuration.endpoints.control.connect],
            timeout: .milliseconds(configuration.client.requestTimeoutMilliseconds), retries: 0,
            curve: try CommonOptions.clientKeys(configuration, role: .subscriber), context: context)
        do {
            return try client.currentMap()
        } catch {
            // No coordinator answered (or the subscriber is stopping): subscribe as to one
            // coordinator, as before shards; its events still arrive when it starts. Said once
            // on standard error, so a wrong endpoint does not look like a quiet cluster.
            if !stop.isStopRequested {
                printError(
                    "waiting for events at \(configuration.endpoints.events.connect), but no coordinator answers: "
                        + CommandFailure(error).message)
            }
            return nil
        }
    }

    /// How often a subscription across shards reads the map again, for shards that join.
    static let mapFollowingInterval = Duration.seconds(2)

    /// Reads the map again for a running subscription: the register's (or the configured
    /// `cluster` map), else the coordinators' answer to `map`, through one client kept for the
    /// subscription (its context shut down by `stop`); `nil` when none answers.
    static func mapFollowing(_ configuration: ChimeConfiguration, map: ShardMap, stop: StopSignal) throws -> ClusterSubscriber.MapFollowing {
        let context = try Context()
        stop.onStop { context.shutdown() }
        let reader = MapReader(
            configuration: configuration,
            client: try ClusterClient(
                seeds: map.shards.map(\.endpoints.control),
                timeout: .milliseconds(configuration.client.requestTimeoutMilliseconds), retries: 0,
                curve: try CommonOptions.clientKeys(configuration, role: .subscriber), context: context))
        return ClusterSubscriber.MapFollowing(interval: mapFollowingInterval) { reader.read() }
    }

    /// The map source of ``mapFollowing(_:map:stop:)``; called by one thread at a time (the
    /// subscription's), so its client is never shared.
    final class MapReader: @unchecked Sendable {
        let configuration: ChimeConfiguration
        let client: ClusterClient

        init(configuration: ChimeConfiguration, client: ClusterClient) {
            self.configuration = configuration
            self.client = client
        }

        func read() -> ShardMap? {
            if let registered = try? MapRegisterOptions.currentMap(configuration) { return registered }
            return try? client.currentMap()
        }
    }

    /// `subscribe` on a cluster of several shards: every shard's events (the recipient's
    /// shard alone with `--recipient`), fire events gap-free per shard; shards that join later
    /// are subscribed as the map names them (read again every 2 s).
    static func runAcrossShards(
        _ arguments: Arguments, map: ShardMap, topic: String, count: Int?, stop: StopSignal, timedOut: Bool
    ) throws -> Int32 {
        let configuration = try CommonOptions.configuration(arguments)
        let recipient = arguments.value("recipient").map { RecipientID($0) }
        let curve = try CommonOptions.clientKeys(configuration, role: .subscriber)
        let json = arguments.has("json")
        let received = Atomic<Int>(0)
        /// Prints one event unless --count was reached; stops at --count.
        let deliver: @Sendable (String) -> Void = { line in
            guard count.map({ received.load(ordering: .acquiring) < $0 }) ?? true else { return }
            output(line)
            let total = received.add(1, ordering: .acquiringAndReleasing).newValue
            if let count, total >= count { stop.requestStop() }
        }
        if topic != "fire" {
            if arguments.value("since") != nil { throw UsageError("--since applies to fire events only") }
            try runTopicAcrossShards(map: map, topic: topic, recipient: recipient, configuration: configuration, curve: curve, stop: stop) { name, raw in
                deliver(json ? String(decoding: raw, as: UTF8.self) : "\(name) \(String(decoding: raw, as: UTF8.self))")
            }
            return try finish(received: received.load(ordering: .acquiring), count: count, timedOut: timedOut)
        }
        var catchUp: ClusterSubscriber.CatchUp?
        if !arguments.has("no-gap-fill") {
            let catchUpContext = try Context()
            stop.onStop { catchUpContext.shutdown() }
            catchUp = ClusterSubscriber.CatchUp(
                timeout: .milliseconds(configuration.client.requestTimeoutMilliseconds), retries: configuration.client.retries,
                context: catchUpContext, since: try since(arguments.value("since"), shards: map.shards.map(\.id)))
        } else if arguments.value("since") != nil {
            throw UsageError("--since needs the catch-up that --no-gap-fill turns off")
        }
        let subscriber = ClusterSubscriber(
            map: map, recipient: recipient, stop: stop, highWaterMark: configuration.eventHighWaterMark, curve: curve)
        let printHandOver: @Sendable (HandOverEvent, Data) -> Void = { event, raw in
            // Not counted by --count (fire events are); printed while the subscription lasts.
            guard !stop.isStopRequested else { return }
            output(json ? String(decoding: raw, as: UTF8.self) : describe(event))
        }
        try subscriber.run(
            catchUp: catchUp, following: try mapFollowing(configuration, map: map, stop: stop),
            onEvent: { event, raw in deliver(json ? String(decoding: raw, as: UTF8.self) : describe(event)) },
            onHandOver: printHandOver,
            onRecipientHandOver: { handOver in
                // As the shards' hand-over lines: not counted by --count.
                guard !stop.isStopRequested else { return }
                output(json ? String(decoding: WireCodec().encode(handOver), as: UTF8.self) : handOver.line)
            })
        return try finish(received: received.load(ordering: .acquiring), count: count, timedOut: timedOut)
    }

    /// `--since`: `SEQ` for every shard, or `SHARD:SEQ,SHARD:SEQ` (shards not named start now).
    /// - Throws: `UsageError` for anything else, or a shard not in the map.
    static func since(_ text: String?, shards: [Int]) throws -> [Int: UInt64] {
        guard let text else { return [:] }
        if let seq = UInt64(text) { return Dictionary(uniqueKeysWithValues: shards.map { ($0, seq) }) }
        var result: [Int: UInt64] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            guard pieces.count == 2, let shard = Int(pieces[0]), let seq = UInt64(pieces[1]) else {
                throw UsageError("--since must be SEQ or SHARD:SEQ,SHARD:SEQ, not '\(text)'")
            }
            guard shards.contains(shard) else {
                throw UsageError("--since names shard \(shard); the map's shards are \(shards.map(String.init).joined(separator: ", "))")
            }
            result[shard] = seq
        }
        return result
    }

    /// Badge or action events (live only) from each shard, every shard's socket polled by
    /// the calling thread.
    static func runTopicAcrossShards(
        map: ShardMap, topic: String, recipient: RecipientID?, configuration: ChimeConfiguration, curve: CurveClientKeys?,
        stop: StopSignal, onMessage: @escaping @Sendable (String, Data) -> Void
    ) throws {
        let shards = recipient.flatMap { map.shard(of: $0) }.map { [$0] } ?? map.shards
        let subscriber = TopicSubscriber(
            endpoints: shards.map(\.endpoints.events), prefix: topic + ".", recipient: recipient, stop: stop,
            highWaterMark: configuration.eventHighWaterMark, curve: curve)
        do {
            try subscriber.run(onMessage: onMessage)
        } catch {
            if !stop.isStopRequested { throw error }
        }
    }
}
