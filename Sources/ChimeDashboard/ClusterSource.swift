import ChimeClient
import ChimeCore
import ChimeWire
import Foundation
import Synchronization

/// The dashboard's view of a real cluster: one ``ClusterClient`` (one control socket per
/// shard, the map cached and refreshed on `wrong_shard`) used by one request at a time.
/// Scatters ask the shards at once; a shard that does not answer within the client's
/// timeout is shown down and the rest of the page still renders.
public final class ClusterSource: DashboardSource {
    private let client: Mutex<ClusterClient>

    /// Takes ownership of `client` (no one else may use it afterwards).
    public init(client: consuming sending ClusterClient) {
        self.client = Mutex(client)
    }

    public func overview() -> OverviewView {
        client.withLock { client in
            let now = Date()
            let map: ShardMap
            do throws(WireError) { map = try client.currentMap() } catch {
                return OverviewView(shards: [], takenAt: now, error: error.message)
            }
            var rows: [Int: ShardOverview] = [:]
            var errors: [Int: String] = [:]
            // A shard that did not answer status is asked nothing more: each question to it
            // would wait out the client's timeout again.
            func gather<Result: Codable & Sendable>(_ command: ControlRequest.Command, _ type: Result.Type, shards: Set<Int>)
                -> [Int: Result]
            {
                guard !shards.isEmpty else { return [:] }
                do throws(WireError) {
                    let replies = try client.scatter(ControlRequest(command: command), expecting: type, toShards: shards)
                    for (shard, error) in replies.missing where errors[shard] == nil { errors[shard] = error.message }
                    return Dictionary(replies.results.map { ($0.shard, $0.result) }, uniquingKeysWith: { first, _ in first })
                } catch {
                    for shard in shards where errors[shard] == nil { errors[shard] = error.message }
                    return [:]
                }
            }
            let statuses = gather(.status, StatusReport.self, shards: Set(map.shards.map(\.id)))
            let stats = gather(.stats, StatsReport.self, shards: Set(statuses.keys))
            let stores = gather(.store, StoreReport.self, shards: Set(statuses.keys))
            let workers = gather(.workers, WorkersResult.self, shards: Set(statuses.keys))
            let connections = workers.flatMap { shard, result in result.workers.map { WorkerRow(shard: shard, worker: $0) } }
            let processes = workers.isEmpty ? nil : WorkerProcess.group(connections).filter(\.isAlive).count
            for shard in map.shards {
                guard let status = statuses[shard.id] else {
                    rows[shard.id] = .down(shard.id, error: errors[shard.id] ?? "no answer")
                    continue
                }
                let stat = stats[shard.id]
                let store = stores[shard.id]
                rows[shard.id] = ShardOverview(
                    shard: shard.id, phase: "active", error: errors[shard.id], epoch: store?.epoch, reminders: status.reminders,
                    inFlight: status.inFlight, dueBacklog: stat?.dueBacklog,
                    oldestUndeliveredAgeSeconds: stat?.oldestUndeliveredAgeSeconds, firingsPerSecond: stat?.dispatchedPerSecond,
                    fireLateness: stat?.fireLateness, storeBytes: store.map { $0.journalBytes + $0.snapshotBytes },
                    storeFull: status.storeFull, workersAlive: status.workersAlive, deadLettered: stat?.deadLettered)
            }
            return OverviewView(shards: rows.values.sorted { $0.shard < $1.shard }, takenAt: now, workerProcesses: processes)
        }
    }

    public func workers() -> WorkersView {
        client.withLock { client in
            do throws(WireError) {
                let replies = try client.scatter(ControlRequest(command: .workers), expecting: WorkersResult.self)
                let rows = replies.results.flatMap { shard, result in
                    result.workers.map { WorkerRow(shard: shard, worker: $0) }
                }
                return WorkersView(workers: rows, missing: replies.missing.map { MissingShard(shard: $0.shard, error: $0.error.message) })
            } catch {
                return WorkersView(workers: [], missing: [], error: error.message)
            }
        }
    }

    public func reminders(_ search: ReminderSearch) throws(WireError) -> PageView<ReminderListing> {
        try client.withLock { client throws(WireError) in
            // A recipient among many has a few reminders in thousands: follow short pages for
            // up to 2 s, so the page shows them instead of "No reminders match".
            let page = try client.filledList(
                search.filter, all: true, limit: Self.pageSize, cursor: search.cursor, until: .now + .seconds(2))
            return PageView(items: page.result.reminders, nextCursor: page.result.nextCursor, partial: page.partial?.message)
        }
    }

    public func recipient(_ id: RecipientID) throws(WireError) -> RecipientResult? {
        try client.withLock { client throws(WireError) in
            do throws(WireError) {
                return try client.send(ControlRequest(command: .recipient(id)), expecting: RecipientResult.self).reply.result
            } catch where error.code == .notFound {
                return nil
            }
        }
    }

    public func deadLetters(cursor: String?) throws(WireError) -> PageView<Firing> {
        try client.withLock { client throws(WireError) in
            let page = try client.deadLetters(limit: Self.pageSize, cursor: cursor)
            let causes = (page.result.failures ?? [:]).mapValues { failure in
                let attempts = failure.outcomes.reduce(0) { $0 + $1.attempts.count }
                return "\(failure.cause) (worker \(failure.worker), \(attempts) attempts)"
            }
            return PageView(
                items: page.result.firings, nextCursor: page.result.nextCursor, partial: page.partial?.message, notes: causes,
                failures: page.result.failures)
        }
    }

    public func perform(_ action: DashboardAction) throws(WireError) -> String {
        try client.withLock { client throws(WireError) in
            switch action {
            case .setEnabled(let id, let recipient, let enabled):
                let reply = try client.send(
                    ControlRequest(command: .setEnabled([id], enabled, recipient: recipient)), expecting: SwitchResult.self)
                let changed = reply.reply.result?.changed ?? []
                return changed.isEmpty
                    ? "\(id.rawValue) of \(recipient.rawValue) was already \(enabled ? "enabled" : "disabled")"
                    : "\(enabled ? "enabled" : "disabled") \(id.rawValue) of \(recipient.rawValue)"
            case .cancel(let id, let recipient):
                let (result, _) = try client.cancel(ReminderFilter(ids: [id], recipient: recipient))
                return result.cancelled.isEmpty ? "nothing to cancel" : "cancelled \(id.rawValue) of \(recipient.rawValue)"
            case .retry(let firing):
                _ = try client.send(ControlRequest(command: .retry(firing)), expecting: RetryResult.self)
                return "retrying \(firing)"
            case .retryAll:
                return try Self.retryAll(client)
            case .deleteDeadLetter(let firing):
                _ = try client.send(ControlRequest(command: .deleteDeadLetter(firing)), expecting: DeleteDeadLetterResult.self)
                return "deleted dead letter \(firing)"
            }
        }
    }

    /// Every dead letter listed now (pages of 1,000), then one `retry` each, as
    /// `chime ctl retry --all` does; a shard that does not answer stops it before any retry.
    static func retryAll(_ client: ClusterClient) throws(WireError) -> String {
        let firings = try client.allDeadLetters()
        var failed = 0
        for firing in firings {
            do throws(WireError) {
                _ = try client.send(ControlRequest(command: .retry(firing.firingId)), expecting: RetryResult.self)
            } catch {
                failed += 1
            }
        }
        return "retried \(firings.count - failed) of \(firings.count) dead letters" + (failed > 0 ? " (\(failed) failed)" : "")
    }

    /// Items per page on the reminders and dead-letters pages.
    public static let pageSize = 50
}
