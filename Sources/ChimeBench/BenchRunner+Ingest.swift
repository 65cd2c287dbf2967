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
        if let pid = cluster.coordinatorPID, let bytes = RSSSampler.residentBytes(of: pid) {
            report.coordinatorRssAfterIngestMB = Double(bytes) / 1e6
        }
        report.storeBytes = cluster.storeBytes()
        // A short ingest can fall between two periodic samples.
        sampler.sample()
        addPeaks(sampler.currentPeaks, to: &report)

        let stoppingAt = Date().timeIntervalSince1970
        if !cluster.stopCoordinator(grace: 30) { report.invalidate("the coordinator needed SIGKILL to stop") }
        try cluster.startCoordinator()
        let readyAt = try cluster.waitUntilAnswering(timeout: 300)
        report.restartToReadySeconds = readyAt - stoppingAt
        note(String(format: "W4: restart (SIGTERM → first ping) %.3f s", readyAt - stoppingAt))
        let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(10), retries: 0, curve: cluster.operatorKeys)
        let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result
        report.recoveredPending = status?.reminders["pending"]
        if report.recoveredPending != plan.count {
            report.invalidate("\(report.recoveredPending ?? 0) reminders pending after the restart, not \(plan.count)")
        }
        return report
    }
}
