import ChimeCluster
import ChimeWire
import Foundation

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
