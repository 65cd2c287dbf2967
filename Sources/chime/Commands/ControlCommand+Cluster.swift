import ChimeClient
import ChimeCommandLine
import ChimeCore
import ChimeWire
import Foundation

extension ControlCommand {
    /// `ctl map`: the shard map as the cluster serves it.
    static func showMap(_ client: ClusterClient, json: Bool) throws -> Int32 {
        let map = try client.currentMap()
        if json {
            printJSON(WireCodec().encode(ControlReply(requestId: nil, result: map)))
            return 0
        }
        output("map epoch \(map.mapEpoch), \(map.slotCount) slots, \(map.shards.count) shard\(map.shards.count == 1 ? "" : "s")")
        var rows = [["SHARD", "SLOTS", "CONTROL", "EVENTS"]]
        for shard in map.shards {
            let slots = shard.slots.map { $0.first == $0.last ? "\($0.first)" : "\($0.first)-\($0.last)" }.joined(separator: ",")
            rows.append([String(shard.id), slots, shard.endpoints.control, shard.endpoints.events])
        }
        alignedColumns(rows).forEach { output($0) }
        return 0
    }

    /// `ctl status|workers|stats|ping|snapshot|compact|store` on a cluster of several shards:
    /// one row (or block) per shard and the total; a shard that did not answer makes it partial.
    static func runAcrossShards(_ name: String, _ client: ClusterClient, json: Bool) throws -> Int32 {
        switch name {
        case "status":
            let (report, partial) = try client.report(.status, StatusReport.self, total: StatusTotal.init)
            if !json { printStatus(report, map: try client.currentMap()) }
            return finishGathered(report, partial: partial, json: json)
        case "workers":
            let (report, partial) = try client.report(.workers, WorkersResult.self, total: WorkersTotal.init)
            if !json { printWorkers(report) }
            return finishGathered(report, partial: partial, json: json)
        case "stats":
            let (report, partial) = try client.report(.stats, StatsReport.self, total: StatsReport.init(combining:))
            if !json {
                for row in report.shards {
                    output("shard \(row.shard): dispatched \(row.report.dispatched), acknowledged \(row.report.acknowledged), dead-lettered \(row.report.deadLettered ?? 0), backlog \(row.report.dueBacklog ?? 0)")
                }
                let total = report.total
                output("total: dispatched \(total.dispatched), redelivered \(total.redelivered), acknowledged \(total.acknowledged), dead-lettered \(total.deadLettered ?? 0), suppressed \(total.suppressed)")
                if let backlog = total.dueBacklog {
                    output(String(format: "backlog: %d due, not dispatched; oldest undelivered %.1f s", backlog, total.oldestUndeliveredAgeSeconds ?? 0))
                }
                for (label, summary) in [("fire lateness", total.fireLateness), ("dispatch lateness", total.dispatchLateness)] {
                    guard let summary else { output("\(label): no samples"); continue }
                    output(String(format: "%@ (ms, largest of the shards', %d samples): p50 %.2f  p99 %.2f  max %.2f", label, summary.count, summary.p50, summary.p99, summary.max))
                }
            }
            return finishGathered(report, partial: partial, json: json)
        case "ping":
            let started = Date()
            let replies = try client.scatter(ControlRequest(command: .ping), expecting: PongResult.self)
            let rows = replies.results.map { ShardRow(shard: $0.shard, report: $0.result) }
            if !json {
                output(String(format: "pong from %d of %d shards in %.2f ms", rows.count, rows.count + replies.missing.count, Date().timeIntervalSince(started) * 1000))
            }
            return finishGathered(rows, partial: replies.partialError, json: json)
        default:
            let command: ControlRequest.Command = name == "snapshot" ? .snapshot : name == "compact" ? .compact : .store
            let replies = try client.scatter(ControlRequest(command: command), expecting: StoreReport.self)
            let rows = replies.results.map { ShardRow(shard: $0.shard, report: $0.result) }
            if !json {
                for row in rows { output("shard \(row.shard): " + row.report.humanDescription.replacingOccurrences(of: "\n", with: "\n  ")) }
            }
            return finishGathered(rows, partial: replies.partialError, json: json)
        }
    }

    static func printStatus(_ report: ClusterReport<StatusReport, StatusTotal>, map: ShardMap) {
        output("cluster: \(map.shards.count) shards, map epoch \(map.mapEpoch)")
        let states = ReminderState.allCases.map(\.rawValue)
        output(column("SHARD", 7) + column("PID", 9) + column("UP", 9) + states.map { column($0.uppercased(), 12) }.joined()
            + column("IN FLIGHT", 11) + column("WORKERS", 9) + "NEXT FIRE")
        func row(_ label: String, _ pid: String, _ up: String, _ reminders: [String: Int], _ inFlight: Int, _ workers: Int, _ next: Date?) {
            output(column(label, 7) + column(pid, 9) + column(up, 9) + states.map { column(String(reminders[$0] ?? 0), 12) }.joined()
                + column(String(inFlight), 11) + column(String(workers), 9) + (next.map(RFC3339.format) ?? "-"))
        }
        for shard in report.shards {
            let status = shard.report
            row(String(shard.shard), String(status.pid), HumanTime.duration(seconds: status.uptimeSeconds), status.reminders,
                status.inFlight, status.workersAlive, status.nextFireAt)
        }
        for missing in report.missing ?? [] { output(column(String(missing), 7) + "(no answer)") }
        let total = report.total
        row("total", "", "", total.reminders, total.inFlight, total.workersAlive, total.nextFireAt)
        if let stalled = StatusLines.stalled(due: total.dueWithoutWorker, oldestAgeSeconds: total.oldestDueAgeSeconds) {
            let shards = report.shards.filter { ($0.report.dueWithoutWorker ?? 0) > 0 }.map { String($0.shard) }
            output(stalled + " on shard \(shards.joined(separator: ", "))")
        }
        output("next fire: " + (total.nextFireAt.map { "\(RFC3339.format($0)) (\(relative($0)))" } ?? "-"))
        if total.storeFull == true {
            let full = report.shards.filter { $0.report.storeFull == true }.map { String($0.shard) }.joined(separator: ", ")
            output("store: FULL on shard \(full) (changes refused with store_full; reads and firing go on; retrying)")
        }
    }

    static func printWorkers(_ report: ClusterReport<WorkersResult, WorkersTotal>) {
        guard !report.total.workers.isEmpty else {
            output("no workers seen")
            return
        }
        output(column("ID", 28) + column("ALIVE", 7) + column("LAST SEEN", 12) + column("ACKED", 10) + column("DELIVERED", 11) + "SHARDS")
        for worker in report.total.workers {
            let shards = report.shards.filter { row in row.report.workers.contains { $0.id == worker.id && $0.alive } }.map { String($0.shard) }
            output(column(worker.id.rawValue, 28) + column(worker.alive ? "yes" : "no", 7) + column(relative(worker.lastSeenAt), 12)
                + column(String(worker.acknowledged), 10) + column(String(worker.delivered), 11) + (shards.isEmpty ? "-" : shards.joined(separator: ",")))
        }
    }
}
