import ChimeCore
import ChimeWire
import ChimeCommandLine
import Foundation
import ChimeClient

enum ControlCommand: Command {
    static let spec = CommandSpec(
        name: "ctl",
        summary: "Operator commands: status, workers, stats, dead letters, store.",
        usage: "chime ctl status|workers|stats|ping|map|dead-letters|snapshot|compact|store [--json]\n       chime ctl dead-letters [--limit N] [--cursor C | --all-pages] [--json]\n       chime ctl retry FIRING_ID [--json]\n       chime ctl retry --all [--quiet] [--json]\n       chime ctl delete FIRING_ID [--json]",
        options: [
            OptionSpec(name: "all", value: nil, help: "With retry: retry every dead letter, with progress and a summary."),
            OptionSpec(name: "quiet", value: nil, help: "With retry --all: no progress and no summary."),
            OptionSpec(
                name: "limit", value: "N",
                help: "With dead-letters: page size, at most N per page (1-\(PageSize.maximum), default \(PageSize.default))."),
            OptionSpec(name: "cursor", value: "C", help: "With dead-letters: start after the page that printed this nextCursor."),
            OptionSpec(
                name: "all-pages", value: nil,
                help: "With dead-letters: fetch every page in turn; with --json print one firing per line (NDJSON)."),
            OptionSpec(name: "json", value: nil, help: "Print the coordinator's JSON reply."),
        ] + CommonOptions.specs,
        details: """
            status   reminder counts by state, in-flight firings, live workers, next fire; a STALLED line
                     (and dueWithoutWorker, oldestDueAgeSeconds in --json) when firings are due and no
                     worker is alive
            workers  each worker's id, liveness, last heartbeat and counts
            stats    counters, backlog (due, not dispatched) and oldest undelivered age, rates per
                     second over the last minute, dispatch and fire lateness p50/p99/max (ms)
            ping          round trip to the coordinator (to every shard of a cluster)
            map           the shard map: map epoch, slot count, each shard's slots and endpoints
            dead-letters  firings that exhausted their attempts
            retry ID      send a dead-lettered firing again (same firing id), only to the
                          destinations that do not have it yet
            retry --all   send every dead-lettered firing again
            delete ID     delete a dead-lettered firing for good (it never fires again)
            snapshot      write a snapshot of the schedule now (each shard has 120 s to answer)
            compact       write a snapshot and remove the journal segments it covers (120 s)
            store         journal and snapshot sizes, segments, last fsync latency
            With several shards, status, workers, stats, snapshot, compact and store show one row
            (or block) per shard and the total; dead-letters pages merge every shard's, oldest due
            first. A shard that does not answer makes the result partial: the others are shown,
            the missing shard is named on standard error (--json: "ok": false, "error" code
            "partial") and the exit status is 1.
            """)

    /// Each shard's deadline for `snapshot` and `compact` (a shard that has not answered by
    /// then is named in the partial result; its snapshot may still be written).
    static let slowDeadline = Duration.seconds(120)
    static let subcommands = ["status", "workers", "stats", "ping", "map", "dead-letters", "retry", "delete", "snapshot", "compact", "store"]

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard let name = arguments.positionals.first else {
            throw UsageError("name one of: status, workers, stats, ping, map, dead-letters, retry, delete, snapshot, compact, store")
        }
        guard subcommands.contains(name) else {
            let hint = Suggestions.hint(for: name, among: subcommands)
            throw UsageError("unknown ctl command '\(name)'\(hint); expected status, workers, stats, ping, map, dead-letters, retry, delete, snapshot, compact or store")
        }
        let retriesAll = name == "retry" && arguments.has("all")
        for paging in ["limit", "cursor", "all-pages"]
        where name != "dead-letters" && (arguments.has(paging) || arguments.value(paging) != nil) {
            throw UsageError("--\(paging) applies to ctl dead-letters only")
        }
        if arguments.has("all") && name != "retry" { throw UsageError("--all applies to ctl retry only") }
        let expectedCount = (name == "retry" && !retriesAll) || name == "delete" ? 2 : 1
        guard arguments.positionals.count == expectedCount else {
            if retriesAll { throw UsageError("ctl retry --all takes no FIRING_ID") }
            if name == "delete" { throw UsageError("ctl delete needs one FIRING_ID") }
            throw UsageError(name == "retry" ? "ctl retry needs one FIRING_ID (or --all)" : "ctl \(name) takes no arguments")
        }
        // A snapshot is answered once it is written: a shard of millions takes seconds, more
        // under load (8 shards ingesting 10M: "no reply" after 9.1 s though every snapshot was
        // written), so each shard gets ControlCommand.slowDeadline and no resend.
        let slow = name == "snapshot" || name == "compact"
        let client = try makeControlClient(arguments, retries: slow ? 0 : nil, timeoutAtLeast: slow ? Self.slowDeadline : nil)
        let json = arguments.has("json")
        if name == "map" { return try showMap(client, json: json) }
        if ["status", "workers", "stats", "ping", "snapshot", "compact", "store"].contains(name), try !client.isSingleShard() {
            return try runAcrossShards(name, client, json: json)
        }
        switch name {
        case "status":
            let (reply, raw) = try client.call(ControlRequest(command: .status), StatusReport.self)
            guard !json, let status = reply.result else { printJSON(raw); return 0 }
            output("coordinator pid \(status.pid), chime \(status.version), up \(HumanTime.duration(seconds: status.uptimeSeconds))")
            let counts = ReminderState.allCases.map { "\($0.rawValue) \(status.reminders[$0.rawValue] ?? 0)" }
            output("reminders: " + counts.joined(separator: ", "))
            output("in flight: \(status.inFlight), workers alive: \(status.workersAlive)")
            if let stalled = StatusLines.stalled(due: status.dueWithoutWorker, oldestAgeSeconds: status.oldestDueAgeSeconds) {
                output(stalled)
            }
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
            return try deadLetters(client, arguments)
        case "retry" where retriesAll:
            return try retryAll(client, arguments)
        case "retry":
            let firingId = try firingID(arguments.positionals[1])
            let (reply, raw) = try client.call(ControlRequest(command: .retry(firingId)), RetryResult.self)
            if json { printJSON(raw) } else { output("retrying \(reply.result?.firingId ?? firingId)") }
        case "delete":
            let firingId = try firingID(arguments.positionals[1])
            let (reply, raw) = try client.call(ControlRequest(command: .deleteDeadLetter(firingId)), DeleteDeadLetterResult.self)
            if json { printJSON(raw) } else { output("deleted dead letter \(reply.result?.firingId ?? firingId)") }
        case "snapshot", "compact", "store":
            let command: ControlRequest.Command = name == "snapshot" ? .snapshot : name == "compact" ? .compact : .store
            let (reply, raw) = try client.call(ControlRequest(command: command), StoreReport.self)
            guard !json, let store = reply.result else { printJSON(raw); return 0 }
            output(store.humanDescription)
        default:
            preconditionFailure("ctl \(name) passed the name check")
        }
        return 0
    }

    /// `ctl dead-letters`: one page (its JSON reply with `--json`), or with `--all-pages` every
    /// page in turn (with `--json` one firing per line, NDJSON), as `chime list` pages. A shard
    /// that did not answer ends the output with the `partial` reply (with `--json` its last
    /// line: `{"ok":false,"error":{"code":"partial",…},"result":{"firings":[],"nextCursor":…}}`), exit 1.
    static func deadLetters(_ client: ClusterClient, _ arguments: Arguments) throws -> Int32 {
        let json = arguments.has("json")
        let allPages = arguments.has("all-pages")
        if allPages && arguments.value("cursor") != nil { throw UsageError("give --cursor or --all-pages, not both") }
        let limit = try arguments.integer("limit")
        if let limit, !(1...PageSize.maximum).contains(limit) {
            throw UsageError("--limit must be from 1 to \(PageSize.maximum), not \(limit)")
        }
        var cursor = arguments.value("cursor")
        let codec = WireCodec()
        var shown = 0
        repeat {
            let page = try cursorAsUsage { () throws(WireError) in try client.deadLetters(limit: limit, cursor: cursor) }
            let result = page.result
            if json && !allPages {
                if let raw = page.bytes { printJSON(raw); return 0 }
                return finishGathered(result, partial: page.partial, json: true)
            }
            for firing in result.firings {
                if json {
                    printJSON(codec.encode(firing))
                } else {
                    output("\(firing.firingId)  recipient \(firing.recipient)  attempts \(firing.attempt)")
                    if let failure = result.failures?[firing.firingId.description] {
                        output("  cause: \(failure.cause)  (worker \(failure.worker))")
                        for outcome in failure.outcomes {
                            output("  \(outcome.destination): \(outcome.outcome.rawValue)\(outcome.reason.map { " — \($0)" } ?? "")")
                            for attempt in outcome.attempts {
                                let status = attempt.status.map { "HTTP \($0)" } ?? "no response"
                                output("    #\(attempt.number) \(RFC3339.format(attempt.at)) \(attempt.worker): \(status)\(attempt.error.map { " — \($0)" } ?? "")")
                            }
                        }
                    }
                }
            }
            shown += result.firings.count
            cursor = result.nextCursor
            if let partial = page.partial {
                // With --json the listing ends with the partial reply on standard output (its
                // result holds the cursor to go on from), as every gathered command reports it.
                if json { return finishGathered(DeadLettersResult(firings: [], nextCursor: cursor), partial: partial, json: true) }
                return finishGathered(EmptyResult(), partial: partial, json: false)
            }
            if !allPages, let next = result.nextCursor {
                output("(\(shown) shown; more after this page: --cursor \(next), or --all-pages for every page)")
                return 0
            }
        } while allPages && cursor != nil
        if !json && shown == 0 { output("no dead letters") }
        return 0
    }

    /// `ctl retry --all`: every dead letter listed now, retried one request each (the
    /// coordinator's `retry` takes one firing id), with progress and a summary.
    /// Every page of dead letters is read first (1,000 a page), then each is retried.
    static func retryAll(_ client: ClusterClient, _ arguments: Arguments) throws -> Int32 {
        let json = arguments.has("json")
        let progress = BulkProgress(verb: "retried", quiet: arguments.has("quiet") || json)
        // Retrying a part is worse than retrying none: a shard that did not answer stops it.
        let firings = try client.allDeadLetters()
        var retried = 0
        var failures: [ItemFailure] = []
        for (index, firing) in firings.enumerated() {
            do {
                _ = try client.call(ControlRequest(command: .retry(firing.firingId)), RetryResult.self)
                retried += 1
            } catch let error as WireError where error.code != .unavailable {
                let failure = ItemFailure(index: index, id: firing.firingId.description, error: error)
                failures.append(failure)
                if !json {
                    progress.clear()
                    FileHandle.standardError.write(Data("chime: \(failure.line)\n".utf8))
                }
            }
            progress.update(done: retried, failed: failures.count, fraction: Double(index + 1) / Double(firings.count))
        }
        progress.clear()
        if json {
            var document: [String: Any] = [
                "ok": failures.isEmpty,
                "result": ["retried": retried, "failed": failures.count, "seconds": (progress.elapsed * 1000).rounded() / 1000,
                           "errors": failures.map(\.object)] as [String: Any],
            ]
            if !failures.isEmpty {
                document["error"] = ["code": "partial", "message": "\(failures.count) of \(firings.count) retries failed"]
            }
            output(jsonLine(document))
        } else if !arguments.has("quiet") {
            output(progress.summary(done: retried, failed: failures.count))
        }
        return failures.isEmpty ? 0 : 1
    }
}
