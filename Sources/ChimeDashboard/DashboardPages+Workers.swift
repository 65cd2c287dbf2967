import Foundation

extension DashboardPages {
    /// The worker processes (one row per host and process id: the shards it serves, the
    /// shards that hear it, firings in flight over all of them), then every shard's
    /// connections: id, host, pid, liveness, capacity, firings in flight (leases),
    /// quarantine, last heartbeat, counts ("-" for a field an earlier coordinator does not send).
    public static func workers(_ view: WorkersView, now: Date = Date()) -> DashboardPage {
        var problems = view.missing.map { "Shard \($0.shard) did not answer: \($0.error). The other shards are shown." }
        if let error = view.error { problems.append("No shard could be asked: \(error)") }
        let rows = view.workers.map { row -> HTML in
            let worker = row.worker
            let seen = now.timeIntervalSince(worker.lastSeenAt)
            let quarantine: HTML = worker.quarantined.map { $0 ? "<td class=\"down\">yes</td>" : "<td>no</td>" } ?? "<td>-</td>"
            return """
                <tr><td>\(row.shard)</td><td>\(identifier(worker.id.rawValue))</td><td>\(identifier(worker.host))</td><td class="number">\(worker.pid)</td>\
                <td class="\(worker.alive ? "up" : "down")">\(worker.alive ? "yes" : "no")</td>\
                <td class="number">\(worker.capacity.map(String.init) ?? "-")</td><td class="number">\(worker.leases.map(String.init) ?? "-")</td>\
                \(quarantine)\
                <td>\(instant(worker.lastSeenAt)) <span class="muted">(\(seen, digits: 1) s ago)</span></td>\
                <td class="number">\(worker.acknowledged)</td><td class="number">\(worker.delivered)</td></tr>
                """
        }
        let table: HTML = rows.isEmpty
            ? "<p>No workers seen.</p>"
            : """
                \(processes(view.processes))
                <h2>Connections</h2><p class="muted">One row per worker process and shard it serves, as that shard's \
                coordinator reports it.</p>
                <table id="workers"><thead><tr><th>Shard</th><th>Worker</th><th>Host</th><th class="number">PID</th><th>Alive</th>\
                <th class="number">Capacity</th><th class="number">Leases</th><th>Quarantined</th>\
                <th>Last heartbeat</th><th class="number">Acknowledged</th><th class="number">Delivered</th></tr></thead>\
                <tbody>\(rows)</tbody></table>
                """
        return DashboardPage(title: "Workers", section: "/workers", refreshSeconds: 5, problems: problems, content: table)
    }

    /// The Processes table: one row per worker process.
    static func processes(_ processes: [WorkerProcess]) -> HTML {
        let alive = processes.filter(\.isAlive).count
        let rows = processes.map { process -> HTML in
            let names = HTML.join(process.names.map { identifier($0) })
            let shards = process.shards.map(String.init).joined(separator: ", ")
            let heard = process.aliveShards.count == process.shards.count
                ? "<td class=\"up\">all</td>" as HTML
                : process.aliveShards.isEmpty
                    ? "<td class=\"down\">none</td>"
                    : "<td class=\"down\">\(process.aliveShards.map(String.init).joined(separator: ", "))</td>"
            return """
                <tr data-pid="\(process.pid)"><td>\(names)</td><td>\(identifier(process.host))</td><td class="number">\(process.pid)</td>\
                <td class="shards">\(shards)</td>\(heard)\
                <td class="number in-flight">\(process.inFlight.map(String.init) ?? "-")</td>\
                <td class="number">\(process.capacity.map(String.init) ?? "-")</td></tr>
                """
        }
        return """
            <h2>Processes</h2><p id="process-count">\(alive) worker process\(alive == 1 ? "" : "es") alive of \(processes.count) seen</p>
            <table id="processes"><thead><tr><th>Process</th><th>Host</th><th class="number">PID</th><th>Shards served</th>\
            <th>Heard by</th><th class="number">In flight</th><th class="number">Capacity</th></tr></thead><tbody>\(rows)</tbody></table>
            """
    }
}
