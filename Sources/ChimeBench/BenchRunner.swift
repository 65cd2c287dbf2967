import ChimeCore
import ChimeRuntime
import ChimeWire
import Foundation
import ChimeClient

/// Runs a workload on fresh local clusters and reports WORKLOADS.md's metrics, one
/// ``BenchReport`` per run. Every wait is bounded; every child is stopped by its pid.
public final class BenchRunner {
    let settings: BenchSettings
    let binary: URL
    let stop: StopSignal
    /// Progress lines go here (standard error in the CLI), never to the JSON output.
    let note: (String) -> Void

    /// - Parameters:
    ///   - binary: the `chime` executable to start as coordinator and workers.
    ///   - stop: ends waits early (Ctrl-C); the run then throws.
    public init(settings: BenchSettings, binary: URL, stop: StopSignal, note: @escaping (String) -> Void) {
        self.settings = settings
        self.binary = binary
        self.stop = stop
        self.note = note
    }

    /// Runs `settings.runs` runs, calling `onReport` after each; with a peer, each Chime run is
    /// followed by a run of the peer (alternating, so both meet the same load).
    /// - Throws: `BenchError` when a cluster or the peer cannot start or a wait times out.
    public func runAll(onReport: (BenchReport) -> Void) throws -> [BenchReport] {
        var reports: [BenchReport] = []
        for run in 1...settings.runs {
            var report = settings.workload.fires ? try runFiring() : try runIngest()
            report.run = run
            onReport(report)
            reports.append(report)
            if let peer = settings.peer {
                var peerReport = try runPeer(peer)
                peerReport.run = run
                onReport(peerReport)
                reports.append(peerReport)
            }
        }
        return reports
    }

    /// Starts a cluster and waits until the coordinator answers and every worker is alive.
    func startCluster(sampler: RSSSampler) throws -> BenchCluster {
        let cluster = try BenchCluster(
            binary: binary, shards: settings.shards, workers: settings.workers, fsync: settings.fsync,
            configuration: settings.configuration, sampler: sampler, curve: settings.curve)
        cluster.keepsDirectory = settings.keepsDirectory
        cluster.coordinatorWrapper = settings.coordinatorWrapper
        cluster.workerWrapper = settings.workerWrapper
        cluster.stopSignal = stop
        if settings.keepsDirectory { note("run directory: \(cluster.directory.path)") }
        try cluster.startCoordinator()
        _ = try cluster.waitUntilAnswering(timeout: 30)
        try cluster.startWorkers()
        try cluster.waitForWorkers(timeout: 30)
        return cluster
    }

    /// W1, W2, W3: ingest the plan, (W3: kill and restart), observe the subscriber's records.
    func runFiring() throws -> BenchReport {
        var report = BenchReport(settings: settings)
        let sampler = RSSSampler()
        defer { sampler.stop() }
        let cluster = try startCluster(sampler: sampler)
        defer { cluster.stop() }
        let contention = try settings.diskContention
            ? DiskContention(directory: cluster.directory.appendingPathComponent("contention")) : nil
        defer { _ = contention?.stop() }
        let recordsPath = cluster.directory.appendingPathComponent("records.txt").path
        let subscriber = try BenchSubscriber(
            endpoint: cluster.eventsEndpoint, map: cluster.map, recordsPath: recordsPath, count: settings.count,
            mode: settings.subscriber, curve: cluster.subscriberKeys)
        defer { subscriber.stop() }
        let probes = try warmUp(cluster, subscriber)

        let plan = WorkloadPlan(
            workload: settings.workload, count: settings.count, plannedAt: Date().timeIntervalSince1970,
            lead: settings.effectiveLead)
        try plan.planFileContents().write(to: cluster.directory.appendingPathComponent("plan.txt"))
        report.expectedIngestRate = settings.workload == .w3 ? nil : settings.defaultExpectedIngestRate
        report.leadSeconds = plan.lead
        note("\(settings.workload.rawValue): N=\(plan.count), T in \(String(format: "%.1f", plan.lead)) s; ingesting")
        try ingest(plan, cluster: cluster, into: &report)
        let ingestEnd = Date().timeIntervalSince1970
        report.ingestEndsBeforeTSeconds = plan.fireAt - ingestEnd
        if plan.fireAt - ingestEnd < settings.workload.requiredIngestMargin {
            report.invalidate(
                String(format: "ingestion ended %.3f s before T; WORKLOADS.md needs %.0f s", plan.fireAt - ingestEnd,
                       settings.workload.requiredIngestMargin))
        }

        var killedAt: Double?
        var readyAt: Double?
        if settings.workload == .w3 {
            try sleep(until: plan.fireAt - 5)
            killedAt = cluster.killAll()
            note(String(format: "W3: killed every coordinator and worker at T%+.3f s", killedAt! - plan.fireAt))
            try sleep(until: plan.fireAt + 5)
            let restartedAt = Date().timeIntervalSince1970
            try cluster.startCoordinator()
            try cluster.startWorkers()
            readyAt = try cluster.waitUntilAnswering(timeout: 120)
            report.restartToReadySeconds = readyAt! - restartedAt
            note(String(format: "W3: restarted at T%+.3f s, ready after %.3f s", restartedAt - plan.fireAt, readyAt! - restartedAt))
        }

        var rule = ObservationRule(count: plan.count, fireAt: plan.fireAt, lastDue: plan.lastDue)
        rule.quiet = settings.quietSeconds
        rule.waitsForRestart = settings.workload == .w3
        report.quietSeconds = settings.quietSeconds
        report.observationEnd = try observe(subscriber.progress, rule: rule, restartedAt: readyAt)
        subscriber.stop()
        report.diskContention = contention?.stop()
        addCoordinatorView(cluster, probes: probes, to: &report)
        cluster.stop()
        addPeaks(sampler.stop(), to: &report)

        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: recordsPath)))
        let (lines, malformed) = RecordLine.parseAll(bytes)
        if malformed > 0 { report.invalidate("\(malformed) malformed lines in the records file") }
        let metrics = RunMetrics(
            dues: plan.spreadDues(settings.spread, recipients: settings.recipientNames), records: lines.map { ($0.id, $0.actual) },
            fireAt: plan.fireAt, killedAt: killedAt)
        report.apply(metrics)
        if settings.workload == .w2 {
            // T→last fire and drain rate are burst figures (W1, W3).
            report.tToLastFireSeconds = nil
            report.drainRate = nil
        }
        if let readyAt, let last = metrics.lastActual { report.readyToLastFireSeconds = last - readyAt }
        return report
    }

    /// Polls the subscriber's progress every 10 ms until the rule says stop.
    func observe(_ progress: ObservationProgress, rule: ObservationRule, restartedAt: Double?) throws
        -> ObservationRule.Reason
    {
        while true {
            let now = Date().timeIntervalSince1970
            if let reason = rule.endReason(
                now: now, allSeenAt: progress.allSeenAt, lastRecordAt: progress.lastRecordAt, restartedAt: restartedAt)
            {
                return reason
            }
            if stop.isStopRequested { throw BenchError("interrupted") }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Sleeps until `instant` (epoch seconds) in steps of at most 50 ms, so Ctrl-C is seen.
    func sleep(until instant: Double) throws {
        while true {
            let left = instant - Date().timeIntervalSince1970
            if left <= 0 { return }
            if stop.isStopRequested { throw BenchError("interrupted") }
            Thread.sleep(forTimeInterval: min(left, 0.05))
        }
    }

    /// The coordinators' own delivered count (summed over shards) and lateness (the largest
    /// p99 of any shard), when each answers within 2 s.
    func addCoordinatorView(_ cluster: BenchCluster, probes: Int, to report: inout BenchReport) {
        var delivered: Int?
        for endpoint in cluster.controlEndpoints {
            guard let client = try? ControlClient(endpoint: endpoint, timeout: .seconds(2), retries: 0, curve: cluster.operatorKeys)
            else { continue }
            if let status = try? client.send(ControlRequest(command: .status), expecting: StatusReport.self).result {
                delivered = (delivered ?? 0) + (status.reminders["delivered"] ?? 0)
            }
            if let stats = try? client.send(ControlRequest(command: .stats), expecting: StatsReport.self).result {
                report.coordinatorFireLatenessP99Ms = Self.larger(report.coordinatorFireLatenessP99Ms, stats.fireLateness?.p99)
                report.coordinatorDispatchLatenessP99Ms = Self.larger(
                    report.coordinatorDispatchLatenessP99Ms, stats.dispatchLateness?.p99)
            }
        }
        report.coordinatorDelivered = delivered.map { $0 - probes }
    }

    static func larger(_ left: Double?, _ right: Double?) -> Double? {
        guard let left else { return right }
        guard let right else { return left }
        return max(left, right)
    }

    func addPeaks(_ peaks: RSSSampler.Peaks, to report: inout BenchReport) {
        report.peakRssCoordinatorMB = Double(peaks.coordinator) / 1e6
        if settings.shards > 1 { report.peakRssCoordinatorsMB = peaks.coordinators.map { Double($0) / 1e6 } }
        report.peakRssWorkersMB = Double(peaks.workers) / 1e6
        report.peakRssTotalMB = Double(peaks.total) / 1e6
        report.peakPssTotalMB = Double(peaks.proportionalTotal) / 1e6
    }
}

extension BenchReport {
    mutating func apply(_ metrics: RunMetrics) {
        records = metrics.records
        firedDistinct = metrics.firedDistinct
        lost = metrics.lost
        duplicates = metrics.duplicates
        early = metrics.early
        latenessMs = metrics.latenessMilliseconds
        tToLastFireSeconds = metrics.fireAtToLastFireSeconds
        drainRate = metrics.drainRate
        fireSpanSeconds = metrics.fireSpanSeconds
        recordsBeforeKill = metrics.recordsBeforeKill
        if metrics.unknownIds > 0 { invalidate("\(metrics.unknownIds) records with ids outside the plan") }
    }
}
