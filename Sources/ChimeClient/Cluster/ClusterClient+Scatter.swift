import ChimeCore
import ChimeWire
import Foundation

/// The replies of a request sent to every shard: each shard that answered, and each that
/// did not (with the error that says so).
public struct ShardReplies<Result: Codable & Sendable>: Sendable {
    /// One shard's answer: the decoded reply and its raw JSON.
    public struct Answer: Sendable {
        /// The shard id.
        public var shard: Int
        /// The reply (always `ok`).
        public var reply: ControlReply<Result>
        /// The raw reply JSON.
        public var bytes: Data
    }

    /// The shards that answered, in shard-id order.
    public var answers: [Answer]
    /// The shards that did not answer (`unavailable`), in shard-id order, with why.
    public var missing: [(shard: Int, error: WireError)]

    /// The results of the shards that answered, in shard-id order.
    public var results: [(shard: Int, result: Result)] {
        answers.compactMap { answer in answer.reply.result.map { (answer.shard, $0) } }
    }

    /// `partial` naming every shard that did not answer (`shards`: their ids, `shard`: the
    /// first), or `nil` when all answered.
    public var partialError: WireError? {
        guard let first = missing.first else { return nil }
        let names = missing.map { "shard \($0.shard) (\($0.error.message))" }.joined(separator: "; ")
        var error = WireError(
            .partial, "\(missing.count) of \(missing.count + answers.count) shard(s) did not answer: \(names)")
        error.shard = first.shard
        error.shards = missing.map(\.shard)
        return error
    }

    /// The warnings of every answer, in shard-id order.
    public var warnings: [String] { answers.flatMap { $0.reply.warnings ?? [] } }
}

extension ClusterClient {
    /// Sends the same bytes (one `requestId`) to every shard at once and waits for all, from
    /// the calling thread (`ScatterExchange`): each shard's deadline is its client's
    /// (`timeout` × attempts).
    /// - Returns: per shard in map order, its raw reply or the error of the exchange.
    /// - Throws: `WireError` when the map cannot be had.
    public func scatterExchange(_ body: Data) throws(WireError) -> [(shard: Int, outcome: Swift.Result<Data, WireError>)] {
        let map = try currentMap()
        return try scatterExchange(Dictionary(uniqueKeysWithValues: map.shards.map { ($0.id, body) }))
    }

    /// Sends each shard its own bytes (shards absent from `bodies` are not asked) at once and
    /// waits for all, polling every shard's socket from the calling thread.
    /// - Returns: per shard asked, in map order, its raw reply or the error of the exchange.
    /// - Throws: `WireError` when the map cannot be had.
    func scatterExchange(_ bodies: [Int: Data]) throws(WireError) -> [(shard: Int, outcome: Swift.Result<Data, WireError>)] {
        let map = try currentMap()
        var lent: [(shard: Int, client: ControlClient, body: Data)] = []
        var failures: [Int: WireError] = [:]
        var used = Set<ObjectIdentifier>()
        for shard in map.shards {
            guard let body = bodies[shard.id] else { continue }
            do throws(WireError) {
                var client = try client(forShard: shard.id)
                // One endpoint named for two shards: each exchange needs a socket of its own.
                if !used.insert(ObjectIdentifier(client)).inserted { client = try uncachedClient(at: client.endpoint) }
                lent.append((shard.id, client, body))
            } catch {
                failures[shard.id] = error
            }
        }
        if lent.count == 1, failures.isEmpty {
            let (id, client, body) = lent[0]
            return [(id, Swift.Result { () throws(WireError) in try client.exchange(body) })]
        }
        var gathered: [Int: Swift.Result<Data, WireError>] = [:]
        for (shard, outcome) in ScatterExchange(lent).run() { gathered[shard] = outcome }
        return map.shards.filter { bodies[$0.id] != nil }.map { shard in
            (shard.id, gathered[shard.id] ?? .failure(failures[shard.id] ?? WireError(.internal, "shard \(shard.id) was not asked")))
        }
    }

    /// Sends `request` to every shard (one `requestId`) and decodes each reply.
    /// - Throws: `WireError`: the first error reply other than `unavailable` (the request is
    ///   wrong everywhere, or refused: `forbidden`, `invalid_argument`); a shard that did not
    ///   answer is listed in ``ShardReplies/missing`` instead.
    public func scatter<Result: Codable & Sendable>(_ request: ControlRequest, expecting: Result.Type)
        throws(WireError) -> ShardReplies<Result>
    {
        var request = request
        if request.requestId == nil { request.requestId = UUID().uuidString }
        return try gather(scatterExchange(codec.encode(request)), expecting: Result.self)
    }

    /// Sends `request` (one `requestId`) to the shards in `shards` only, at once, and decodes
    /// each reply: the dashboard asks a shard that did not answer `status` nothing more.
    /// - Throws: `WireError` as ``scatter(_:expecting:)``.
    public func scatter<Result: Codable & Sendable>(_ request: ControlRequest, expecting: Result.Type, toShards shards: Set<Int>)
        throws(WireError) -> ShardReplies<Result>
    {
        var request = request
        if request.requestId == nil { request.requestId = UUID().uuidString }
        let body = codec.encode(request)
        return try gather(scatterExchange(Dictionary(uniqueKeysWithValues: shards.map { ($0, body) })), expecting: Result.self)
    }

    /// Decodes scattered replies: answers, and shards that did not answer.
    /// - Throws: `WireError`: the first error reply other than `unavailable`.
    func gather<Result: Codable & Sendable>(
        _ outcomes: [(shard: Int, outcome: Swift.Result<Data, WireError>)], expecting: Result.Type
    ) throws(WireError) -> ShardReplies<Result> {
        var replies = ShardReplies<Result>(answers: [], missing: [])
        for (shard, outcome) in outcomes {
            switch outcome {
            case .success(let data):
                let reply = try codec.decode(ControlReply<Result>.self, from: data)
                guard reply.ok else {
                    var error = reply.error ?? WireError(.malformed, "the reply has ok=false and no error")
                    if error.code == .unavailable {
                        replies.missing.append((shard, error))
                        continue
                    }
                    if error.shard == nil { error.shard = shard }
                    throw error
                }
                replies.answers.append(.init(shard: shard, reply: reply, bytes: data))
            case .failure(let error) where error.code == .unavailable:
                replies.missing.append((shard, error))
            case .failure(let error):
                throw error
            }
        }
        return replies
    }

    /// Cancels the reminders matching `filter` on every shard with one `requestId` (each
    /// shard journals it; a retry is applied once). Not atomic across shards: a shard that
    /// did not answer may have cancelled its part or not; send the same request again.
    /// - Returns: the ids cancelled (sorted), and `partial` naming the shards that did not
    ///   answer (`nil` when all did).
    /// - Throws: `WireError` as ``scatter(_:expecting:)``.
    public func cancel(_ filter: ReminderFilter, requestId: String? = nil) throws(WireError)
        -> (result: CancelResult, partial: WireError?)
    {
        let request = ControlRequest(requestId: requestId, command: .cancel(filter))
        if filter.recipient != nil {
            return (try send(request, expecting: CancelResult.self).reply.result ?? CancelResult(cancelled: []), nil)
        }
        let replies = try scatter(request, expecting: CancelResult.self)
        let cancelled = replies.results.flatMap(\.result.cancelled).sorted()
        return (CancelResult(cancelled: cancelled), replies.partialError)
    }
}
