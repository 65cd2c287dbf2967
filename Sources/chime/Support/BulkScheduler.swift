import ChimeCore
import ChimeRuntime
import ChimeWire
import ChimeCommandLine
import Foundation
import ChimeClient

/// Sends reminders to the coordinator in `schedule` requests under the limits: at most
/// `maximumCount` reminders and `maximumBytes` of JSON each, one chunk encoded at a time.
///
/// Each chunk carries its own `requestId`, so the client's retry after a timeout is applied
/// once. A chunk the coordinator refuses because of one reminder (`reminders[k]…`) is sent
/// again without it, that reminder counted failed with its input index; a chunk refused
/// without naming a reminder is sent again in halves; `unavailable`, `store_full`,
/// `unauthenticated` and `internal` stop the run.
///
/// On a cluster of several shards each shard has its own chunk (a reminder's shard is its
/// recipient's), so every request goes to one shard whole and a resent chunk never touches
/// another shard's reminders.
///
/// Up to ``chunksInFlight`` chunks (4 unless `--in-flight` says otherwise) are in flight at
/// once over all shards (a ``PipelinedClient`` per shard), so
/// the coordinator applies one chunk while the next is encoded and sent. Replies are handled
/// on the caller's thread; a chunk whose reply is not `ok` is sent again the one-at-a-time way
/// above (which follows `wrong_shard`).
final class BulkScheduler {
    typealias Item = (index: Int, id: String, bytes: Data)

    /// The reminders waiting for one shard's next request.
    struct Chunk {
        var items: [Item] = []
        var bytes = 0
        /// A recipient of the chunk's reminders: the request's routing key.
        var recipient: RecipientID?
    }

    let client: ClusterClient
    let maximumCount: Int
    let maximumBytes: Int
    let progress: BulkProgress
    let codec = WireCodec()
    let runID = UUID().uuidString
    var chunkNumber = 0
    /// Each shard's chunk (one entry, shard 0, on a single shard).
    var chunks: [Int: Chunk] = [:]
    /// Whether reminders are routed per shard (the cluster has more than one).
    let isSharded: Bool
    private(set) var scheduled = 0
    private(set) var failed = 0
    /// The first ``keptFailures`` failures (all are passed to `onFailure`).
    private(set) var failures: [ItemFailure] = []
    private(set) var warningCount = 0
    /// Called for each failed item as it is known (to print it at once).
    var onFailure: (ItemFailure) -> Void = { _ in }
    /// Called for each coordinator warning.
    var onWarning: (String) -> Void = { _ in }
    static let keptFailures = 1000
    /// Items read from the input so far, and the share of the input they are (`nil`:
    /// unknown), from which the progress bar estimates the total (``noteRead(items:fraction:)``).
    private(set) var itemsRead = 0
    private(set) var readFraction: Double?

    /// Chunks sent and not yet answered at most (over all shards), unless `--in-flight` says otherwise.
    static let defaultChunksInFlight = 4
    /// Chunks sent and not yet answered at most (`--in-flight`).
    let chunksInFlight: Int
    /// One pipelined client per shard, made on first use.
    var pipelines: [Int: PipelinedClient] = [:]
    /// Chunks in flight by request id.
    var inFlight: [String: (items: [Item], recipient: RecipientID?)] = [:]
    /// Replies that came back, handed over from the pipelined clients' threads.
    let arrivals = Arrivals()

    deinit { for pipeline in pipelines.values { pipeline.close() } }

    /// The request's fixed bytes around the reminders: `{"op":"schedule","requestId":"…","reminders":[` … `]}`.
    static let envelopeBytes = 128

    /// - Throws: `WireError` when the cluster's shard map cannot be had.
    init(
        client: ClusterClient, configuration: ChimeConfiguration, chunkSize: Int, chunksInFlight: Int = defaultChunksInFlight,
        progress: BulkProgress
    ) throws(WireError) {
        self.client = client
        self.chunksInFlight = max(1, chunksInFlight)
        self.isSharded = try !client.isSingleShard()
        self.maximumCount = max(1, min(chunkSize, configuration.coordinator.maxRemindersPerRequest))
        // Half the request limit, at most 4 MiB: short loop turns on the coordinator.
        self.maximumBytes = max(1024, min(configuration.coordinator.maxRequestBytes / 2, 4 << 20))
        self.progress = progress
    }

    /// Notes that `items` items are read, `fraction` (0…1) of the input (`nil`: unknown).
    func noteRead(items: Int, fraction: Double?) {
        itemsRead = items
        readFraction = fraction
    }

    /// The share of the reminders settled, for the progress bar (``bulkSettledShare(settled:read:readFraction:)``).
    var settledShare: Double? { bulkSettledShare(settled: scheduled + failed, read: itemsRead, readFraction: readFraction) }

    /// Queues one reminder (sending a full chunk first when this one would not fit).
    /// - Throws: `WireError(.unavailable)` when the coordinator does not answer.
    func add(_ reminder: Reminder, index: Int) throws(WireError) {
        try add(json: codec.encode(reminder), id: reminder.id.rawValue, index: index)
    }

    /// Queues one reminder already in its wire JSON (checked by the caller).
    /// - Throws: `WireError(.unavailable)` when the coordinator does not answer.
    func add(json bytes: Data, id: String, index: Int) throws(WireError) {
        // A reminder whose recipient does not decode goes to shard 0, which refuses it by name.
        let recipient = isSharded ? WirePeek.recipient(in: bytes) : nil
        let shard = try recipient.map { recipient throws(WireError) in try client.shard(of: recipient) } ?? 0
        var chunk = chunks[shard] ?? Chunk()
        if !chunk.items.isEmpty && (chunk.items.count >= maximumCount || chunk.bytes + bytes.count + 1 + Self.envelopeBytes > maximumBytes) {
            chunks[shard] = nil
            try send(chunk, toShard: shard)
            chunk = Chunk()
        }
        chunk.items.append((index, id, bytes))
        chunk.bytes += bytes.count + 1
        if chunk.recipient == nil { chunk.recipient = recipient }
        chunks[shard] = chunk
    }

    /// Counts an item that failed before sending (it did not decode).
    func fail(index: Int, id: String?, _ error: WireError) {
        record(ItemFailure(index: index, id: id, error: error))
    }

    /// Sends what is queued for every shard.
    /// - Throws: `WireError(.unavailable)`.
    func flush() throws(WireError) {
        let queued = chunks.sorted { $0.key < $1.key }
        chunks.removeAll()
        for (shard, chunk) in queued { try send(chunk, toShard: shard) }
        while !inFlight.isEmpty { try settleOne() }
    }

    /// Sends `chunk`; without the reminder an error names, or in halves when the error names
    /// none (`malformed` JSON in one object), until each failing reminder stands alone.
    /// `answered` is the reply a first sending of the whole chunk already got.
    func deliver(_ items: [Item], routing recipient: RecipientID?, answered: ControlReply<ScheduleResult>? = nil) throws(WireError) {
        var chunk = items
        var answered = answered
        while !chunk.isEmpty {
            let reply: ControlReply<ScheduleResult>
            if let first = answered {
                reply = first
                answered = nil
            } else {
                reply = try send(chunk, routing: recipient)
            }
            if reply.ok {
                scheduled += chunk.count
                for warning in reply.warnings ?? [] {
                    warningCount += 1
                    onWarning(warning)
                }
                return
            }
            let error = reply.error ?? WireError(.malformed, "the reply has ok=false and no error")
            if Self.stopsTheRun.contains(error.code) { throw error }
            if let (position, field) = Self.item(of: error, count: chunk.count) {
                var itemError = error
                itemError.field = field
                record(ItemFailure(index: chunk[position].index, id: chunk[position].id.isEmpty ? nil : chunk[position].id, error: itemError))
                chunk.remove(at: position)
                continue
            }
            if chunk.count > 1 {
                let middle = chunk.count / 2
                try deliver(Array(chunk[..<middle]), routing: recipient)
                try deliver(Array(chunk[middle...]), routing: recipient)
                return
            }
            record(ItemFailure(index: chunk[0].index, id: chunk[0].id.isEmpty ? nil : chunk[0].id, error: error))
            return
        }
    }

    /// Errors about the connection, the whole cluster or the caller's key, not about a
    /// reminder (past a key's quota every later chunk would be refused too).
    static let stopsTheRun: Set<WireError.Code> = [.unavailable, .storeFull, .unauthenticated, .internal, .quotaExceeded]

    func send(_ chunk: [Item], routing recipient: RecipientID?) throws(WireError) -> ControlReply<ScheduleResult> {
        let reply = try client.exchange(request(for: chunk).body, routing: recipient)
        return try codec.decode(ControlReply<ScheduleResult>.self, from: reply)
    }

    /// A `schedule` request of `chunk` with the run's next request id.
    func request(for chunk: [Item]) -> (requestId: String, body: Data) {
        chunkNumber += 1
        let requestId = "\(runID)-\(chunkNumber)"
        var body = Data(#"{"op":"schedule","requestId":"\#(requestId)","reminders":["#.utf8)
        body.reserveCapacity(chunk.reduce(0) { $0 + $1.bytes.count + 1 } + Self.envelopeBytes)
        for (position, item) in chunk.enumerated() {
            if position > 0 { body.append(UInt8(ascii: ",")) }
            body.append(item.bytes)
        }
        body.append(contentsOf: Array("]}".utf8))
        return (requestId, body)
    }

    /// The chunk position an error's `field` names (`reminders[3].trigger` → 3, `trigger`),
    /// or `nil` when the error is not about one reminder. A one-reminder request says `reminder`.
    static func item(of error: WireError, count: Int) -> (Int, String?)? {
        guard let field = error.field else { return nil }
        if count == 1, field == "reminder" || field.hasPrefix("reminder.") {
            return (0, field == "reminder" ? nil : String(field.dropFirst("reminder.".count)))
        }
        guard field.hasPrefix("reminders["), let close = field.firstIndex(of: "]"),
            let position = Int(field[field.index(field.startIndex, offsetBy: 10)..<close]), (0..<count).contains(position)
        else { return nil }
        let rest = field[field.index(after: close)...]
        return (position, rest.hasPrefix(".") ? String(rest.dropFirst()) : nil)
    }

    func record(_ failure: ItemFailure) {
        failed += 1
        // Memory stays bounded on a file of bad items; each one still reaches onFailure.
        if failures.count < Self.keptFailures { failures.append(failure) }
        onFailure(failure)
    }

    /// `{"scheduled", "failed", "warnings", "seconds", "rate", "errors": [first 1,000 failures by index]}`.
    var resultObject: [String: Any] {
        let seconds = progress.elapsed
        return [
            "scheduled": scheduled, "failed": failed, "warnings": warningCount,
            "seconds": (seconds * 1000).rounded() / 1000,
            "rate": seconds > 0 ? (Double(scheduled + failed) / seconds).rounded() : 0,
            "errors": failures.sorted { $0.index < $1.index }.map(\.object),
        ]
    }
}
