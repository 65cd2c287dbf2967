import ChimeCore
import Foundation

/// The HTML of each page: pure functions from what the cluster answered to markup.
public enum DashboardPages {
    /// The overview: a row per shard, the totals, and each shard's charts.
    public static func overview(_ view: OverviewView, history: MetricsHistory) -> DashboardPage {
        var problems = view.shards.filter { $0.phase == "down" }.map {
            "Shard \($0.shard) is down: \($0.error ?? "no answer"). The other shards are shown."
        }
        if let error = view.error { problems.append("No shard could be asked: \(error)") }
        let rows = view.shards.map(overviewRow)
        let up = view.shards.filter { $0.phase != "down" }
        let pending = up.compactMap { $0.reminders?["pending"] }.reduce(0, +)
        let connections = up.compactMap(\.workersAlive).reduce(0, +)
        let backlog = up.compactMap(\.dueBacklog).reduce(0, +)
        let charts = view.shards.map { shard -> HTML in
            let samples = history.samples(ofShard: shard.shard)
            func points(_ value: (HistorySample) -> Double?) -> [SVGChart.Point] {
                samples.map { SVGChart.Point(at: $0.at, value: value($0)) }
            }
            return """
                <h3>Shard \(shard.shard)</h3><div class="charts">\
                \(SVGChart.render(title: "firings dispatched", unit: "firings/s", points: points(\.firingsPerSecond)))\
                \(SVGChart.render(title: "fire lateness p99", unit: "ms", points: points(\.latenessP99Milliseconds)))\
                \(SVGChart.render(title: "due backlog", unit: "firings", points: points { $0.dueBacklog.map(Double.init) }))\
                </div>
                """
        }
        let content: HTML = """
            <p id="totals">\(view.shards.count) shard(s), \(up.count) up · pending reminders <b id="total-pending">\(pending)</b> · \
            \(workerCount(processes: view.workerProcesses, connections: connections, shards: up.count)) · due backlog <b>\(backlog)</b></p>
            <table id="shards"><thead><tr><th>Shard</th><th>Phase</th><th class="number">Epoch</th><th class="number">Pending</th>\
            <th class="number">Due backlog</th><th class="number">Oldest undelivered (s)</th><th class="number">Firings/s</th>\
            <th class="number">Lateness p50 / p99 / max (ms)</th><th class="number">Store bytes</th><th>Store</th>\
            <th class="number">Worker connections</th><th class="number">Dead-lettered</th></tr></thead><tbody>\(rows)</tbody></table>
            <h2>Last hour</h2>\(charts)
            """
        return DashboardPage(title: "Overview", section: "/", refreshSeconds: 5, problems: problems, content: content)
    }

    /// "worker processes alive N (M connections over K shards)": a worker process that
    /// serves three shards is one process and three connections. Without a process count
    /// (the workers could not be asked) only the connections are said.
    static func workerCount(processes: Int?, connections: Int, shards: Int) -> HTML {
        let over: HTML = "\(connections) connection\(connections == 1 ? "" : "s") over \(shards) shard\(shards == 1 ? "" : "s")"
        guard let processes else {
            return "worker processes alive <b id=\"total-workers\">?</b> (\(over))"
        }
        return "worker processes alive <b id=\"total-workers\">\(processes)</b> (\(over))"
    }

    static func overviewRow(_ shard: ShardOverview) -> HTML {
        guard shard.phase != "down" else {
            return """
                <tr data-shard="\(shard.shard)"><td>\(shard.shard)</td><td class="down">down</td>\
                <td colspan="10" class="muted">\(shard.error ?? "no answer")</td></tr>
                """
        }
        let lateness: HTML = shard.fireLateness.map {
            "\($0.p50, digits: 1) / \($0.p99, digits: 1) / \($0.max, digits: 1)"
        } ?? "-"
        let store: HTML = shard.storeFull == true ? "<span class=\"full\">FULL</span>" : "<span class=\"up\">ok</span>"
        return """
            <tr data-shard="\(shard.shard)"><td>\(shard.shard)</td><td class="up">\(shard.phase)</td>\
            <td class="number">\(number(shard.epoch))</td><td class="number pending">\(number(shard.reminders?["pending"]))</td>\
            <td class="number">\(number(shard.dueBacklog))</td><td class="number">\(decimal(shard.oldestUndeliveredAgeSeconds))</td>\
            <td class="number">\(decimal(shard.firingsPerSecond))</td><td class="number">\(lateness)</td>\
            <td class="number">\(number(shard.storeBytes))</td><td>\(store)</td>\
            <td class="number workers">\(number(shard.workersAlive))</td><td class="number">\(number(shard.deadLettered))</td></tr>
            """
    }

    static func number<Number: BinaryInteger>(_ value: Number?) -> HTML {
        value.map { "\($0)" } ?? "-"
    }

    static func decimal(_ value: Double?) -> HTML {
        value.map { "\($0, digits: 1)" } ?? "-"
    }

    static func instant(_ date: Date?) -> String {
        date.map { RFC3339.format($0) } ?? "-"
    }
}
