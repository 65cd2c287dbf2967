import Foundation

extension DashboardPages {
    /// Every shard's workers: id, host, pid, liveness, capacity, firings in flight (leases),
    /// quarantine, last heartbeat, counts ("-" for a field an earlier coordinator does not send).
    public static func workers(_ view: WorkersView, now: Date = Date()) -> DashboardPage {
        var problems = view.missing.map { "Shard \($0.shard) did not answer: \($0.error). The other shards are shown." }
        if let error = view.error { problems.append("No shard could be asked: \(error)") }
        let rows = view.workers.map { row -> HTML in
            let worker = row.worker
            let seen = now.timeIntervalSince(worker.lastSeenAt)
            let quarantine: HTML = worker.quarantined.map { $0 ? "<td class=\"down\">yes</td>" : "<td>no</td>" } ?? "<td>-</td>"
            return """
                <tr><td>\(row.shard)</td><td>\(worker.id.rawValue)</td><td>\(worker.host)</td><td class="number">\(worker.pid)</td>\
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
                <table id="workers"><thead><tr><th>Shard</th><th>Worker</th><th>Host</th><th class="number">PID</th><th>Alive</th>\
                <th class="number">Capacity</th><th class="number">Leases</th><th>Quarantined</th>\
                <th>Last heartbeat</th><th class="number">Acknowledged</th><th class="number">Delivered</th></tr></thead>\
                <tbody>\(rows)</tbody></table>
                """
        return DashboardPage(title: "Workers", section: "/workers", refreshSeconds: 5, problems: problems, content: table)
    }
}
