import Foundation

extension DashboardPages {
    /// Every shard's workers: id, host, pid, liveness, last heartbeat, counts.
    public static func workers(_ view: WorkersView, now: Date = Date()) -> DashboardPage {
        var problems = view.missing.map { "Shard \($0.shard) did not answer: \($0.error). The other shards are shown." }
        if let error = view.error { problems.append("No shard could be asked: \(error)") }
        let rows = view.workers.map { row -> HTML in
            let worker = row.worker
            let seen = now.timeIntervalSince(worker.lastSeenAt)
            return """
                <tr><td>\(row.shard)</td><td>\(worker.id.rawValue)</td><td>\(worker.host)</td><td class="number">\(worker.pid)</td>\
                <td class="\(worker.alive ? "up" : "down")">\(worker.alive ? "yes" : "no")</td>\
                <td>\(instant(worker.lastSeenAt)) <span class="muted">(\(seen, digits: 1) s ago)</span></td>\
                <td class="number">\(worker.acknowledged)</td><td class="number">\(worker.delivered)</td></tr>
                """
        }
        let table: HTML = rows.isEmpty
            ? "<p>No workers seen.</p>"
            : """
                <table id="workers"><thead><tr><th>Shard</th><th>Worker</th><th>Host</th><th class="number">PID</th><th>Alive</th>\
                <th>Last heartbeat</th><th class="number">Acknowledged</th><th class="number">Delivered</th></tr></thead>\
                <tbody>\(rows)</tbody></table>
                """
        return DashboardPage(title: "Workers", section: "/workers", refreshSeconds: 5, problems: problems, content: table)
    }
}
