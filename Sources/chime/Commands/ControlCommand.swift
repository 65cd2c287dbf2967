import ChimeCluster
import ChimeCore
import ChimeWire
import Foundation

enum ControlCommand: Command {
    static let spec = CommandSpec(
        name: "ctl",
        summary: "Operator commands: status, workers, stats, dead letters, store.",
        usage: "chime ctl status|workers|stats|ping|dead-letters|snapshot|compact|store [--json]\n       chime ctl retry FIRING_ID [--json]",
        options: [OptionSpec(name: "json", value: nil, help: "Print the coordinator's JSON reply.")] + CommonOptions.specs,
        details: """
            status   reminder counts by state, in-flight firings, live workers, next fire
            workers  each worker's id, liveness, last heartbeat and counts
            stats    counters, backlog (due, not dispatched) and oldest undelivered age, rates per
                     second over the last minute, dispatch and fire lateness p50/p99/max (ms)
            ping          round trip to the coordinator
            dead-letters  firings that exhausted their attempts
            retry ID      send a dead-lettered firing again (same firing id)
            snapshot      write a snapshot of the schedule now
            compact       write a snapshot and remove the journal segments it covers
            store         journal and snapshot sizes, segments, last fsync latency
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard let name = arguments.positionals.first else {
            throw UsageError("name one of: status, workers, stats, ping, dead-letters, retry, snapshot, compact, store")
        }
        let expectedCount = name == "retry" ? 2 : 1
        guard arguments.positionals.count == expectedCount else {
            throw UsageError(name == "retry" ? "ctl retry needs one FIRING_ID" : "ctl \(name) takes no arguments")
        }
        let client = try makeControlClient(arguments)
        let json = arguments.has("json")
        switch name {
        case "status":
            let (reply, raw) = try client.call(ControlRequest(command: .status), StatusReport.self)
            guard !json, let status = reply.result else { printJSON(raw); return 0 }
            output("coordinator pid \(status.pid), chime \(status.version), up \(DurationParser.format(seconds: status.uptimeSeconds.rounded()))")
            let counts = ReminderState.allCases.map { "\($0.rawValue) \(status.reminders[$0.rawValue] ?? 0)" }
            output("reminders: " + counts.joined(separator: ", "))
            output("in flight: \(status.inFlight), workers alive: \(status.workersAlive)")
            output("next fire: " + (status.nextFireAt.map { "\(RFC3339.format($0)) (\(relative($0)))" } ?? "-"))
            if let storeFull = status.storeFull {
                output("store: " + (storeFull ? "FULL (changes refused with store_full; reads and firing go on; retrying)" : "ok"))
            }
        case "workers":
            let (reply, raw) = try client.call(ControlRequest(command: .workers), WorkersResult.self)
            guard !json, let result = reply.result else { printJSON(raw); return 0 }
            if result.workers.isEmpty { output("no workers seen") }
            else {
                output(column("ID", 28) + column("ALIVE", 7) + column("LAST SEEN", 12) + column("ACKED", 10) + "DELIVERED")
                for worker in result.workers {
                    output(column(worker.id.rawValue, 28) + column(worker.alive ? "yes" : "no", 7)
                        + column(relative(worker.lastSeenAt), 12) + column(String(worker.acknowledged), 10)
                        + String(worker.delivered))
                }
            }
        case "stats":
            let (reply, raw) = try client.call(ControlRequest(command: .stats), StatsReport.self)
            guard !json, let stats = reply.result else { printJSON(raw); return 0 }
            output("dispatched \(stats.dispatched), redelivered \(stats.redelivered), acknowledged \(stats.acknowledged), dead-lettered \(stats.deadLettered ?? 0), suppressed \(stats.suppressed)")
            if let backlog = stats.dueBacklog {
                output(String(format: "backlog: %d due, not dispatched; oldest undelivered %.1f s", backlog, stats.oldestUndeliveredAgeSeconds ?? 0))
            }
            if let window = stats.rateWindowSeconds {
                output(String(format: "rates (last %.0f s): dispatched %.1f/s, acknowledged %.1f/s", window,
                              stats.dispatchedPerSecond ?? 0, stats.acknowledgedPerSecond ?? 0))
            } else {
                output("rates: not yet (less than a second of samples)")
            }
            func line(_ name: String, _ summary: LatenessSummary?) {
                guard let summary else { output("\(name): no samples"); return }
                output(String(format: "%@ (ms, last %d): p50 %.2f  p99 %.2f  max %.2f", name, summary.count, summary.p50, summary.p99, summary.max))
            }
            line("fire lateness", stats.fireLateness)
            line("dispatch lateness", stats.dispatchLateness)
        case "ping":
            let started = Date()
            let (_, raw) = try client.call(ControlRequest(command: .ping), PongResult.self)
            if json { printJSON(raw) } else { output(String(format: "pong in %.2f ms", Date().timeIntervalSince(started) * 1000)) }
        case "dead-letters":
            let (reply, raw) = try client.call(ControlRequest(command: .deadLetters), DeadLettersResult.self)
            guard !json, let result = reply.result else { printJSON(raw); return 0 }
            if result.firings.isEmpty { output("no dead letters") }
            for firing in result.firings {
                output("\(firing.firingId)  recipient \(firing.recipient)  attempts \(firing.attempt)")
            }
        case "retry":
            let firingId = try firingID(arguments.positionals[1])
            let (reply, raw) = try client.call(ControlRequest(command: .retry(firingId)), RetryResult.self)
            if json { printJSON(raw) } else { output("retrying \(reply.result?.firingId ?? firingId)") }
        case "snapshot", "compact", "store":
            let command: ControlRequest.Command = name == "snapshot" ? .snapshot : name == "compact" ? .compact : .store
            let (reply, raw) = try client.call(ControlRequest(command: command), StoreReport.self)
            guard !json, let store = reply.result else { printJSON(raw); return 0 }
            output(store.humanDescription)
        default:
            throw UsageError("unknown ctl command '\(name)'; expected status, workers, stats, ping, dead-letters, retry, snapshot, compact or store")
        }
        return 0
    }
}
