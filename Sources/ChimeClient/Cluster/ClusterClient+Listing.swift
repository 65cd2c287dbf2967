import ChimeCore
import ChimeWire
import Foundation

/// A page of a listing gathered from the shards.
public struct ClusterPage<Result: Codable & Sendable>: Sendable {
    /// The page (its `nextCursor` a ``ClusterCursor`` when it was merged across shards).
    public var result: Result
    /// The raw reply when one shard answered it alone (printed as the coordinator wrote it).
    public var bytes: Data?
    /// `partial` naming the shards that did not answer; `nil` when every shard did.
    public var partial: WireError?
}

/// Dead letters' order across shards: due millisecond, then firing id (the coordinator's).
struct DeadLetterOrder: Comparable {
    var firingId: FiringID
    static func < (lhs: DeadLetterOrder, rhs: DeadLetterOrder) -> Bool {
        (lhs.firingId.dueAtMilliseconds, lhs.firingId) < (rhs.firingId.dueAtMilliseconds, rhs.firingId)
    }
}

extension ClusterClient {
    /// One page of `list`: from the filter's recipient's shard alone (its own cursor), or
    /// merged in key order (id, then recipient) from every shard with a ``ClusterCursor``.
    /// - Parameters:
    ///   - filter: which reminders (ids, recipient, `userInfo` matches).
    ///   - all: every state, not only `pending`.
    ///   - limit: the page size (1…10,000; `nil`: the coordinator's 250).
    ///   - cursor: the `nextCursor` of the previous page, as printed.
    ///   - order: key order (the default) or next-fire order (soonest first, then key;
    ///     reminders without a next firing last), merged across shards the same way.
    /// - Throws: `WireError`: `.invalidArgument` (field `cursor`) for a cursor of another
    ///   form or order; a shard's refusal; `.unavailable` when the only shard asked did not answer.
    public func list(
        _ filter: ReminderFilter, all: Bool, limit: Int?, cursor: String?, order: ListOrder = .id
    ) throws(WireError) -> ClusterPage<ListResult> {
        // A recipient's listing is one shard's: no map is asked for (`send` routes it).
        var isOneShard = filter.recipient != nil
        if !isOneShard { isOneShard = try isSingleShard() }
        if isOneShard {
            let pageCursor = try cursor.map { text throws(WireError) in try PageCursor(text: text, expecting: order.cursorKind) }
            let (reply, bytes) = try send(
                ControlRequest(command: .list(filter, all: all, limit: limit, cursor: pageCursor, order: order)),
                expecting: ListResult.self)
            return ClusterPage(result: reply.result ?? ListResult(reminders: [], total: 0), bytes: bytes)
        }
        let pageSize = try PageSize.checked(limit)
        let (pages, start, replies) = try gatherPages(kind: order.cursorKind, cursor: cursor, expecting: ListResult.self) { shardCursor in
            .list(filter, all: all, limit: pageSize, cursor: shardCursor, order: order)
        }
        let merged: (items: [ReminderListing], next: [Int: PageMerge.Next<[UInt8]>])
        switch order {
        case .id:
            let shardPages = try pages.map { (shard, result) throws(WireError) in
                PageMerge.ShardPage(
                    shard: shard,
                    items: result.reminders.map { (ReminderKey($0.reminder.id, of: $0.reminder.recipient).storage, $0) },
                    frontier: try Self.frontierKey(result.nextCursor, kind: .list))
            }
            let page = PageMerge.merge(shardPages, limit: pageSize)
            merged = (page.items, page.next.mapValues { $0.map { Array($0.utf8) } })
        case .nextFire:
            let shardPages = try pages.map { (shard, result) throws(WireError) in
                PageMerge.ShardPage(
                    shard: shard, items: result.reminders.map { (Self.nextFirePlace(of: $0), $0) },
                    frontier: try Self.nextFireFrontier(result.nextCursor))
            }
            let page = PageMerge.merge(shardPages, limit: pageSize)
            merged = (page.items, page.next.mapValues { $0.map(\.cursorBytes) })
        }
        let next = Self.advanced(start, by: merged.next)
        let isWhole = cursor == nil && next.isFinished && replies.missing.isEmpty
        return ClusterPage(
            result: ListResult(reminders: merged.items, total: isWhole ? merged.items.count : nil, nextCursor: next.isFinished ? nil : next.text),
            bytes: nil, partial: replies.partialError)
    }

    /// One page of `list` that holds `limit` matches unless the listing ends first, for a
    /// selective filter (a recipient among many, a rare `match`): a coordinator examines at
    /// most 5,000 reminders a request and answers a short (even empty) page with a
    /// `nextCursor`, so this follows the cursor, asking each time for what the page still
    /// lacks, until the page is full, the listing ends, a shard does not answer, or
    /// `deadline` passes (then the page is short and its `nextCursor` goes on).
    /// - Parameters:
    ///   - filter: which reminders, as ``list(_:all:limit:cursor:order:)``.
    ///   - all: every state, not only `pending`.
    ///   - limit: the page size (1…10,000; `nil`: 250).
    ///   - cursor: the `nextCursor` of the previous page, as printed.
    ///   - order: key order or next-fire order, as ``list(_:all:limit:cursor:order:)``.
    ///   - deadline: when to stop following (`nil`: never, until full or ended).
    ///   - progress: called after each request but the last with the requests made and the
    ///     matches found so far (for a progress line on a terminal).
    /// - Returns: the page; `bytes` is the raw reply only when one request made it, and
    ///   `result.total` is set only when it holds the whole listing.
    /// - Throws: as ``list(_:all:limit:cursor:order:)``.
    public func filledList(
        _ filter: ReminderFilter, all: Bool, limit: Int?, cursor: String?, order: ListOrder = .id,
        until deadline: ContinuousClock.Instant? = nil, progress: ((_ requests: Int, _ found: Int) -> Void)? = nil
    ) throws(WireError) -> ClusterPage<ListResult> {
        let pageSize = try PageSize.checked(limit)
        var page = try list(filter, all: all, limit: pageSize, cursor: cursor, order: order)
        var requests = 1
        while page.partial == nil, let next = page.result.nextCursor, page.result.reminders.count < pageSize,
            deadline.map({ ContinuousClock.now < $0 }) ?? true
        {
            progress?(requests, page.result.reminders.count)
            let more = try list(filter, all: all, limit: pageSize - page.result.reminders.count, cursor: next, order: order)
            requests += 1
            page.result.reminders += more.result.reminders
            page.result.nextCursor = more.result.nextCursor
            page.partial = more.partial
            page.bytes = nil
        }
        if requests > 1 {
            page.result.total = cursor == nil && page.result.nextCursor == nil && page.partial == nil ? page.result.reminders.count : nil
        }
        return page
    }

    /// One page of `deadLetters`, merged from every shard oldest due first (a single shard's
    /// reply as it is).
    /// - Throws: as ``list(_:all:limit:cursor:order:)``.
    public func deadLetters(limit: Int?, cursor: String?) throws(WireError) -> ClusterPage<DeadLettersResult> {
        if try isSingleShard() {
            let pageCursor = try cursor.map { text throws(WireError) in try PageCursor(text: text, expecting: .deadLetters) }
            let (reply, bytes) = try send(
                ControlRequest(command: .deadLetters(limit: limit, cursor: pageCursor)), expecting: DeadLettersResult.self)
            return ClusterPage(result: reply.result ?? DeadLettersResult(firings: []), bytes: bytes)
        }
        let pageSize = try PageSize.checked(limit)
        let (pages, start, replies) = try gatherPages(kind: .deadLetters, cursor: cursor, expecting: DeadLettersResult.self) {
            .deadLetters(limit: pageSize, cursor: $0)
        }
        let shardPages = try pages.map { (shard, result) throws(WireError) in
            PageMerge.ShardPage(
                shard: shard, items: result.firings.map { (DeadLetterOrder(firingId: $0.firingId), $0) },
                frontier: try Self.frontierKey(result.nextCursor, kind: .deadLetters).flatMap { FiringID($0) }
                    .map(DeadLetterOrder.init(firingId:)))
        }
        let merged = PageMerge.merge(shardPages, limit: pageSize)
        var failures: [String: DeliveryFailure] = [:]
        for (_, result) in pages { failures.merge(result.failures ?? [:]) { first, _ in first } }
        let listed = Set(merged.items.map(\.firingId.description))
        failures = failures.filter { listed.contains($0.key) }
        let next = Self.advanced(start, by: merged.next.mapValues { $0.map { Array($0.firingId.text.utf8) } })
        return ClusterPage(
            result: DeadLettersResult(
                firings: merged.items, nextCursor: next.isFinished ? nil : next.text, failures: failures.isEmpty ? nil : failures),
            bytes: nil,
            partial: replies.partialError)
    }

    /// Every dead letter of the cluster, read page by page (1,000 a page), oldest due first.
    /// Retrying a part is worse than retrying none, so a shard that does not answer is an
    /// error, not a short list.
    /// - Throws: `WireError` — the `partial` error naming the missing shard, or as
    ///   ``deadLetters(limit:cursor:)``.
    public func allDeadLetters() throws(WireError) -> [Firing] {
        var firings: [Firing] = []
        var cursor: String?
        repeat {
            let page = try deadLetters(limit: 1000, cursor: cursor)
            if let partial = page.partial { throw partial }
            firings += page.result.firings
            cursor = page.result.nextCursor
        } while cursor != nil
        return firings
    }

    /// Asks every shard not done for its next page (its own cursor from `cursor`).
    /// - Returns: the answered pages, the cursor they started from, and the replies.
    func gatherPages<Result: Codable & Sendable>(
        kind: PageCursor.Kind, cursor: String?, expecting: Result.Type, command: (PageCursor?) -> ControlRequest.Command
    ) throws(WireError) -> (pages: [(Int, Result)], start: ClusterCursor, replies: ShardReplies<Result>) {
        let map = try currentMap()
        var start = ClusterCursor(kind: kind, mapEpoch: map.mapEpoch, positions: [:])
        if let cursor {
            guard ClusterCursor.isClusterCursor(cursor) else {
                throw WireError(
                    .invalidArgument, "the cursor is a single shard's; this cluster has \(map.shards.count) shards: start again without it",
                    field: "cursor")
            }
            start = try ClusterCursor(text: cursor, expecting: kind)
        }
        var bodies: [Int: Data] = [:]
        let requestId = UUID().uuidString
        for shard in map.shards where start.positions[shard.id] != .done {
            bodies[shard.id] = codec.encode(ControlRequest(requestId: requestId, command: command(start.shardCursor(shard.id))))
            if start.positions[shard.id] == nil { start.positions[shard.id] = .start }
        }
        start.mapEpoch = map.mapEpoch
        let replies = try gather(scatterExchange(bodies), expecting: Result.self)
        return (replies.results.map { ($0.shard, $0.result) }, start, replies)
    }

    /// A listed reminder's place in next-fire order, as its shard ordered it: its next fire
    /// instant while pending.
    static func nextFirePlace(of listing: ReminderListing) -> NextFireKey {
        NextFireKey(
            fireAt: listing.state == .pending ? listing.nextFireAt : nil,
            key: ReminderKey(listing.reminder.id, of: listing.reminder.recipient))
    }

    /// The place of a shard's next-fire `nextCursor` (`nil` when it finished).
    /// - Throws: `WireError(.malformed)` when it is not a next-fire cursor.
    static func nextFireFrontier(_ nextCursor: String?) throws(WireError) -> NextFireKey? {
        guard let nextCursor else { return nil }
        let cursor: PageCursor
        do {
            cursor = try PageCursor(text: nextCursor, expecting: .listByNextFire)
        } catch {
            throw WireError(.malformed, "a shard's nextCursor is not one of its listing: \(error.message)")
        }
        guard let place = NextFireKey(cursorBytes: cursor.key) else {
            throw WireError(.malformed, "a shard's nextCursor holds no next-fire place")
        }
        return place
    }

    /// The key of a shard's `nextCursor` (`nil` when it finished).
    /// - Throws: `WireError(.malformed)` when a shard's cursor is not of its listing.
    static func frontierKey(_ nextCursor: String?, kind: PageCursor.Kind) throws(WireError) -> String? {
        guard let nextCursor else { return nil }
        let cursor: PageCursor
        do {
            cursor = try PageCursor(text: nextCursor, expecting: kind)
        } catch {
            throw WireError(.malformed, "a shard's nextCursor is not one of its listing: \(error.message)")
        }
        guard let key = cursor.textKey else { throw WireError(.malformed, "a shard's nextCursor holds no text key") }
        return key
    }

    /// `start` with each merged shard's next position (shards not answered keep theirs).
    static func advanced(_ start: ClusterCursor, by next: [Int: PageMerge.Next<[UInt8]>]) -> ClusterCursor {
        var cursor = start
        for (shard, position) in next {
            switch position {
            case .after(let key): cursor.positions[shard] = .after(key)
            case .done: cursor.positions[shard] = .done
            }
        }
        return cursor
    }
}

extension PageMerge.Next {
    /// The position with its key mapped.
    func map<Other>(_ transform: (Key) -> Other) -> PageMerge.Next<Other> {
        switch self {
        case .after(let key): .after(transform(key))
        case .done: .done
        }
    }
}
