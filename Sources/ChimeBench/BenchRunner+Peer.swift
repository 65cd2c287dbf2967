import ChimeRuntime
import Foundation

extension BenchRunner {
    /// Runs `peer` on the workload (W1 or W2) with a plan made as Chime's is (the same N,
    /// the same lead rule, a fresh T): starts the peer's `python3` child, waits (at most 30 s)
    /// until its scheduler runs, writes the plan, follows the records file until the
    /// observation rule ends the run, and stops the child by its pid.
    /// - Throws: `BenchError` when `python3` or the peer's package is missing (with the
    ///   child's output), when the peer does not ingest, or when interrupted.
    func runPeer(_ peer: PeerScheduler) throws -> BenchReport {
        var report = BenchReport(settings: settings)
        report.peer = peer
        report.fsync = "none"
        report.durable = false
        report.workers = 0
        report.shards = 1
        report.subscriber = nil
        report.batch = 1
        report.bulk = false
        report.pipeline = 1
        report.pipelined = false
        report.curve = false
        report.coordinatorWrapper = nil
        report.workerWrapper = nil

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-bench-\(peer.rawValue)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if !settings.keepsDirectory { try? FileManager.default.removeItem(at: directory) } }
        if settings.keepsDirectory { note("\(peer.rawValue) run directory: \(directory.path)") }
        let script = directory.appendingPathComponent("\(peer.rawValue)_peer.py")
        try Data(PeerScheduler.apschedulerScript.utf8).write(to: script)
        let recordsPath = directory.appendingPathComponent("records.txt").path
        guard FileManager.default.createFile(atPath: recordsPath, contents: nil) else {
            throw BenchError("cannot create \(recordsPath)")
        }
        let log = directory.appendingPathComponent("peer.log")
        let child = ChildSupervisor(
            name: peer.rawValue,
            launch: .init(
                executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", "-u", script.path, directory.path],
                output: .file(log)))
        let sampler = RSSSampler()
        defer { sampler.stop() }
        do { sampler.setCoordinator([try child.start().processIdentifier]) } catch {
            throw BenchError("cannot start python3 for --peer \(peer.rawValue): \(error)")
        }
        defer { child.stop(grace: 2) }
        func failure(_ what: String) -> BenchError {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return BenchError("\(peer.rawValue) \(what) (needs python3 with \(peer.rawValue): pip install 'apscheduler<4')\n\(output)")
        }
        let readyBy = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("ready").path) {
            if !child.isRunning || Date() > readyBy { throw failure("did not start") }
            if stop.isStopRequested { throw BenchError("interrupted") }
            Thread.sleep(forTimeInterval: 0.01)
        }

        let plan = WorkloadPlan(
            workload: settings.workload, count: settings.count, plannedAt: Date().timeIntervalSince1970,
            lead: settings.effectiveLead)
        let planTemporary = directory.appendingPathComponent("plan.txt.tmp")
        try plan.planFileContents().write(to: planTemporary)
        try FileManager.default.moveItem(at: planTemporary, to: directory.appendingPathComponent("plan.txt"))
        report.expectedIngestRate = settings.defaultExpectedIngestRate
        report.leadSeconds = plan.lead
        note("\(settings.workload.rawValue) on \(peer.rawValue): N=\(plan.count), T in \(String(format: "%.1f", plan.lead)) s; ingesting")

        let progress = ObservationProgress()
        let tracker = RecordsTracker(count: plan.count, progress: progress)
        let records = open(recordsPath, O_RDONLY | O_CLOEXEC)
        guard records >= 0 else { throw BenchError("cannot read \(recordsPath) (errno \(errno))") }
        defer { close(records) }
        var tail = RecordsTail()
        var rule = ObservationRule(count: plan.count, fireAt: plan.fireAt, lastDue: plan.lastDue)
        rule.quiet = settings.quietSeconds
        report.quietSeconds = settings.quietSeconds
        let ingestedPath = directory.appendingPathComponent("ingested").path
        var ingested: (start: Double, end: Double)?
        while true {
            tail.read(records, into: tracker)
            if ingested == nil, let text = try? String(contentsOfFile: ingestedPath, encoding: .utf8) {
                guard let parsed = PeerScheduler.parseIngested(text) else { throw failure("wrote '\(text)' as its ingest times") }
                ingested = parsed
            }
            let now = Date().timeIntervalSince1970
            if let reason = rule.endReason(
                now: now, allSeenAt: progress.allSeenAt, lastRecordAt: progress.lastRecordAt, restartedAt: nil)
            {
                report.observationEnd = reason
                break
            }
            if !child.isRunning { throw failure("exited") }
            if stop.isStopRequested { throw BenchError("interrupted") }
            Thread.sleep(forTimeInterval: 0.002)
        }
        child.stop(grace: 2)
        let peaks = sampler.stop()
        report.peakRssTotalMB = Double(peaks.total) / 1e6
        report.peakPssTotalMB = Double(peaks.proportionalTotal) / 1e6

        guard let ingested else { throw failure("did not finish ingesting before the run ended") }
        report.ingestSeconds = ingested.end - ingested.start
        report.ingestRate = report.ingestSeconds.map { $0 > 0 ? Double(plan.count) / $0 : Double(plan.count) }
        report.ingestRequests = plan.count
        report.ingestEndsBeforeTSeconds = plan.fireAt - ingested.end
        if plan.fireAt - ingested.end < settings.workload.requiredIngestMargin {
            report.invalidate(
                String(format: "ingestion ended %.3f s before T; WORKLOADS.md needs %.0f s", plan.fireAt - ingested.end,
                       settings.workload.requiredIngestMargin))
        }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: recordsPath)))
        let (lines, malformed) = RecordLine.parseAll(bytes)
        if malformed > 0 { report.invalidate("\(malformed) malformed lines in the records file") }
        report.apply(RunMetrics(dues: plan.dues, records: lines.map { ($0.id, $0.actual) }, fireAt: plan.fireAt, killedAt: nil))
        if settings.workload == .w2 {
            report.tToLastFireSeconds = nil
            report.drainRate = nil
        }
        return report
    }
}

/// Follows a records file being appended to: reads what is new and hands each whole line to
/// a tracker (a partial last line waits for the next read).
struct RecordsTail {
    private var pending: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    /// Reads everything available from `descriptor` now.
    /// - Returns: whether anything was read.
    @discardableResult
    mutating func read(_ descriptor: Int32, into tracker: RecordsTracker) -> Bool {
        var readAny = false
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return readAny }
            readAny = true
            pending.append(contentsOf: buffer[0..<count])
            guard let lastNewline = pending.lastIndex(of: UInt8(ascii: "\n")) else { continue }
            let (fields, _) = RecordLine.parseAll(Array(pending[...lastNewline]))
            for field in fields { tracker.note(id: field.id, actual: field.actual) }
            pending.removeSubrange(...lastNewline)
        }
    }
}
