import ChimeCore
import ChimeWire
import Foundation
import HTTPServer
import Testing

@testable import ChimeDashboard

/// Worker processes counted once however many shards they serve, charts with labelled
/// axes, and dead letters that say why.
@Suite struct DashboardWorkersAndChartsTests {
    static let seen = FixedSource.due

    static func report(_ id: String, pid: Int32, alive: Bool, leases: Int?, capacity: Int? = 8) -> WorkerReport {
        WorkerReport(
            id: WorkerID(id), host: "h1", pid: pid, alive: alive, lastSeenAt: seen, acknowledged: 0, delivered: 0,
            capacity: capacity, leases: leases)
    }

    /// Process 10 serves shards 2, 0 and 1 (reported out of order); process 11 serves 0 and
    /// 1 and only shard 0 still hears it.
    static let rows = [
        WorkerRow(shard: 2, worker: report("w-a", pid: 10, alive: true, leases: 3)),
        WorkerRow(shard: 0, worker: report("w-a", pid: 10, alive: true, leases: 1)),
        WorkerRow(shard: 0, worker: report("w-b", pid: 11, alive: true, leases: 0, capacity: nil)),
        WorkerRow(shard: 1, worker: report("w-a", pid: 10, alive: true, leases: 2)),
        WorkerRow(shard: 1, worker: report("w-b", pid: 11, alive: false, leases: nil, capacity: nil)),
    ]

    @Test func groupsConnectionsIntoProcesses() {
        #expect(WorkerProcess.group(Self.rows) == [
            WorkerProcess(names: ["w-a"], host: "h1", pid: 10, shards: [0, 1, 2], aliveShards: [0, 1, 2], inFlight: 6, capacity: 24),
            WorkerProcess(names: ["w-b"], host: "h1", pid: 11, shards: [0, 1], aliveShards: [0], inFlight: 0, capacity: nil),
        ])
    }

    @Test func workersPageHasAProcessesTable() {
        let html = DashboardPages.workers(WorkersView(workers: Self.rows, missing: []), now: Self.seen).content.text
        #expect(html.contains("<p id=\"process-count\">2 worker processes alive of 2 seen</p>"))
        #expect(html.contains(
            "<tr data-pid=\"10\"><td><span class=\"id\" title=\"w-a\">w-a</span></td><td><span class=\"id\" title=\"h1\">h1</span></td>"
                + "<td class=\"number\">10</td><td class=\"shards\">0, 1, 2</td><td class=\"up\">all</td>"
                + "<td class=\"number in-flight\">6</td><td class=\"number\">24</td></tr>"))
        #expect(html.contains(
            "<td class=\"shards\">0, 1</td><td class=\"down\">0</td><td class=\"number in-flight\">0</td><td class=\"number\">-</td></tr>"))
    }

    @Test func overviewCountsProcessesNotConnections() throws {
        let overview = OverviewView(
            shards: [
                ShardOverview(shard: 0, phase: "active", workersAlive: 2),
                ShardOverview(shard: 1, phase: "active", workersAlive: 2),
                ShardOverview(shard: 2, phase: "active", workersAlive: 2),
            ], takenAt: Self.seen, workerProcesses: 2)
        let html = DashboardPages.overview(overview, history: MetricsHistory()).content.text
        #expect(html.contains("worker processes alive <b id=\"total-workers\">2</b> (6 connections over 3 shards)"))
        #expect(!html.contains("summed over shards"))
        let unknown = DashboardPages.overview(OverviewView(shards: [overview.shards[0]], takenAt: Self.seen), history: MetricsHistory())
        #expect(unknown.content.text.contains("worker processes alive <b id=\"total-workers\">?</b> (2 connections over 1 shard)"))
        let decoded = try WireCodec().decode(OverviewView.self, from: WireCodec().encode(overview))
        #expect(decoded.workerProcesses == 2)
    }

    @Test func chartsHaveLabelledAxesWithUnitsAndTimeTicks() {
        let points = [0, 15, 30].map { SVGChart.Point(at: Self.seen + Double($0), value: Double($0) / 10) }
        let svg = SVGChart.render(title: "fire lateness p99", unit: "ms", points: points).text
        // y: 0, half the maximum (1.5) and the maximum (3), right-aligned left of the axis.
        #expect(svg.contains("<text class=\"tick-label\" x=\"50.0\" y=\"116.0\" text-anchor=\"end\">0</text>"))
        #expect(svg.contains("<text class=\"tick-label\" x=\"50.0\" y=\"64.0\" text-anchor=\"end\">1.50</text>"))
        #expect(svg.contains("<text class=\"tick-label\" x=\"50.0\" y=\"12.0\" text-anchor=\"end\">3</text>"))
        // x: first, middle and last sample, HH:mm:ss UTC.
        #expect(svg.contains("<text class=\"tick-label\" x=\"56.0\" y=\"128.0\" text-anchor=\"start\">08:00:00</text>"))
        #expect(svg.contains("<text class=\"tick-label\" x=\"204.0\" y=\"128.0\" text-anchor=\"middle\">08:00:15</text>"))
        #expect(svg.contains("<text class=\"tick-label\" x=\"352.0\" y=\"128.0\" text-anchor=\"end\">08:00:30</text>"))
        #expect(svg.contains(
            "<text class=\"axis-label y-label\" x=\"-60.0\" y=\"12\" transform=\"rotate(-90)\" text-anchor=\"middle\">ms</text>"))
        #expect(svg.contains("<text class=\"axis-label x-label\" x=\"204.0\" y=\"146.0\" text-anchor=\"middle\">time (UTC)</text>"))
        #expect(svg.contains("<polyline class=\"line\" points=\"56.0,112.0 204.0,60.0 352.0,8.0\"/>"))
        let empty = SVGChart.render(title: "due backlog", unit: "firings", points: []).text
        #expect(empty.contains("<figcaption>due backlog: - firings <span class=\"muted\">(max 0)</span></figcaption>"))
        #expect(!empty.contains("<polyline"))
    }

    @Test func overviewChartsNameTheirUnits() throws {
        let history = MetricsHistory()
        let source = try FixedSource.make()
        history.record(source.overview())
        let html = DashboardPages.overview(source.overview(), history: history).content.text
        #expect(html.contains("aria-label=\"firings dispatched in firings/s over time (UTC)\""))
        #expect(html.contains("aria-label=\"fire lateness p99 in ms over time (UTC)\""))
        #expect(html.contains("aria-label=\"due backlog in firings over time (UTC)\""))
    }

    @Test func deadLettersShowTheCauseAndAttemptHistoryOrSayThereIsNone() throws {
        let source = try FixedSource.make()
        let firing = try #require(source.deadLetterPage.items.first)
        var other = firing
        other.firingId = FiringID(firing.firingId.key, dueAt: FixedSource.due + 60)
        let failure = DeliveryFailure(
            cause: "webhook:https://x/<y> refused: HTTP 400", worker: WorkerID("w<1>"),
            outcomes: [
                DestinationOutcome(
                    destination: "webhook:https://x/<y>", channel: "webhook", outcome: .refused, reason: "HTTP 400: <bad>",
                    attempts: [
                        DeliveryAttemptRecord(at: FixedSource.due, worker: WorkerID("w<1>"), number: 1, status: 503, error: "HTTP 503"),
                        DeliveryAttemptRecord(at: FixedSource.due + 2, worker: WorkerID("w<1>"), number: 2, status: 400, error: "<bad>"),
                    ])
            ])
        let page = PageView(items: [firing, other], nextCursor: nil, partial: nil, failures: [firing.firingId.description: failure])
        let html = DashboardPages.deadLetters(.success(page), cursor: nil, context: FormContext(csrfToken: "t", readOnly: true)).content.text
        #expect(html.contains(
            "<td class=\"cause\">webhook:https://x/&lt;y&gt; refused: HTTP 400<details class=\"attempt-history\">"
                + "<summary>2 attempts, reported by worker w&lt;1&gt;</summary>"))
        #expect(html.contains("webhook: <b>refused</b> — HTTP 400: &lt;bad&gt;"))
        #expect(html.contains(
            "<tr><td>2026-12-24T08:00:00.000Z</td><td><span class=\"id\" title=\"w&lt;1&gt;\">w&lt;1&gt;</span></td>"
                + "<td class=\"number\">1</td><td class=\"number\">503</td><td>HTTP 503</td></tr>"))
        #expect(html.contains("<td class=\"number\">2</td><td class=\"number\">400</td><td>&lt;bad&gt;</td></tr>"))
        #expect(html.contains("<td class=\"cause\"><span class=\"muted\">no cause recorded</span></td>"))
    }
}
