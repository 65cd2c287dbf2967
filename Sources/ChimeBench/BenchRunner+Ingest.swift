import ChimeWire
import Foundation
import ChimeClient

extension BenchRunner {
    /// W4: schedule N reminders a day ahead, read the coordinator's RSS and the store's
    /// size, then restart the coordinator (SIGTERM, start) and time it to the first ping.
    func runIngest() throws -> BenchReport {
        var report = BenchReport(settings: settings)
        let sampler = RSSSampler()
        defer { sampler.stop() }
        let cluster = try startCluster(sampler: sampler)
        defer { cluster.stop() }
        let plan = WorkloadPlan(
            workload: .w4, count: settings.count, plannedAt: Date().timeIntervalSince1970, lead: 0)
        note("W4: N=\(plan.count), batch \(settings.batch), pipeline \(settings.pipeline); ingesting")
        try ingest(plan, cluster: cluster, into: &report)
        if settings.batch == 1 && settings.pipeline == 1, let seconds = report.ingestSeconds, let requests = report.ingestRequests {
            // One call at a time: the floors it is held against, measured now, on this machine.
            report.roundTripMeanMs = (seconds / Double(max(1, requests)) * 1e6).rounded() / 1000
            let body = Ingestor.requestBody(
                requestId: "bench-echo", ids: 0..<1, dues: plan.dues,
                shape: Ingestor.ReminderShape(recipient: { _ in "bench" }, content: { _ in "{}" }))
            report.echoRoundTripMs = try RoundTripBaselines.echo(body: body, count: min(10_000, max(1_000, plan.count)))
            report.fdatasyncMs = try RoundTripBaselines.fdatasyncCost(in: cluster.directory)
            note(String(format: "one call at a time: round trip %.3f ms; bare echo mean %.3f ms; fdatasync p50 %.3f ms",
                        report.roundTripMeanMs ?? 0, report.echoRoundTripMs?.mean ?? 0, report.fdatasyncMs?.p50 ?? 0))
        }
        let rss = cluster.coordinatorPIDs.map { pid in pid.flatMap(RSSSampler.residentBytes).map { Double($0) / 1e6 } ?? 0 }
        if cluster.coordinatorPIDs.contains(where: { $0 != nil }) { report.coordinatorRssAfterIngestMB = rss.reduce(0, +) }
        if cluster.map != nil { report.coordinatorsRssAfterIngestMB = rss }
        report.storeBytes = cluster.storeBytes()
        // A short ingest can fall between two periodic samples.
        sampler.sample()
        addPeaks(sampler.currentPeaks, to: &report)
        if cluster.map != nil { try restartOneShard(cluster, into: &report) }

        let stoppingAt = Date().timeIntervalSince1970
        if !cluster.stopCoordinator(grace: 30) { report.invalidate("a coordinator needed SIGKILL to stop") }
        try cluster.startCoordinator()
        let readyAt = try (0..<cluster.shardCount).map { try cluster.waitUntilAnswering(shard: $0, timeout: 300) }
        report.restartToReadySeconds = (readyAt.max() ?? stoppingAt) - stoppingAt
        if cluster.map != nil { report.restartToReadyPerShardSeconds = readyAt.map { $0 - stoppingAt } }
        note(String(format: "W4: restart (SIGTERM → first ping) %.3f s", (readyAt.max() ?? stoppingAt) - stoppingAt))
        var pending = 0
        for endpoint in cluster.controlEndpoints {
            let client = try ControlClient(endpoint: endpoint, timeout: .seconds(10), retries: 0, curve: cluster.operatorKeys)
            let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result
            pending += status?.reminders["pending"] ?? 0
        }
        report.recoveredPending = pending
        if report.recoveredPending != plan.count {
            report.invalidate("\(pending) reminders pending after the restart, not \(plan.count)")
        }
        return report
    }

    /// Several shards: SIGTERM to shard 0's coordinator alone, a start, and the time to its
    /// first answered ping while the other shards serve.
    func restartOneShard(_ cluster: BenchCluster, into report: inout BenchReport) throws {
        let stoppingAt = Date().timeIntervalSince1970
        if !cluster.stopCoordinator(shard: 0, grace: 30) { report.invalidate("shard 0's coordinator needed SIGKILL to stop") }
        try cluster.startCoordinator(shard: 0)
        let readyAt = try cluster.waitUntilAnswering(shard: 0, timeout: 300)
        report.oneShardRestartToReadySeconds = readyAt - stoppingAt
        note(String(format: "W4: shard 0 alone restarted (SIGTERM → first ping) %.3f s", readyAt - stoppingAt))
    }
}
