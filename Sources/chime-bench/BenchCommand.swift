import ChimeBench
import ChimeCommandLine
import ChimeRuntime
import Foundation

/// `chime bench`: the benchmark harness, an executable of its own (`chime-bench`) so that
/// the product binary does not link it; `chime bench …` execs it with the same arguments.
enum BenchCommand {
    static let spec = CommandSpec(
        name: "bench",
        summary: "Benchmark a local cluster on a workload of WORKLOADS.md; one JSON object per run.",
        usage: "chime bench --workload W1|W2|W3|W4 [--count N] [--fsync always|interval|never] [--workers N] [--runs R] [--batch N] [--pipeline K] [--shards N] [--disk-contention] [--peer apscheduler]",
        options: [
            OptionSpec(name: "workload", value: "W", help: "W1 burst, W2 spread over 30 s, W3 crash and restart, W4 ingest a day ahead."),
            OptionSpec(name: "count", value: "N", help: "Reminders (default: W1 10000, W2 30000, W3 2000, W4 10000)."),
            OptionSpec(name: "fsync", value: "POLICY", help: "The coordinator's fsync policy: always (default), interval or never."),
            OptionSpec(name: "workers", value: "N", help: "Workers to start (default 2)."),
            OptionSpec(name: "shards", value: "N", help: "Coordinators, each owning an even share of the slots (default 1: one coordinator, no cluster section); each reminder goes to its recipient's shard, the subscriber and the workers use every shard."),
            OptionSpec(name: "recipients", value: "K", help: "Distinct recipients, reminder i to recipient i mod K (default: W4 1000; W1-W3 1 on one shard, 1000 on several)."),
            OptionSpec(name: "runs", value: "R", help: "Runs, each on a fresh cluster (default 1); R > 1 adds a median summary."),
            OptionSpec(name: "batch", value: "N", help: "Reminders per schedule request (default 1, W4 1000); above 1 is labelled bulk."),
            OptionSpec(name: "pipeline", value: "K", help: "Schedule requests in flight on the one DEALER (default 1); above 1 is labelled pipelined."),
            OptionSpec(name: "expected-rate", value: "R", help: "Ingest rate (reminders/s) the W1/W2 lead is computed from."),
            OptionSpec(name: "spread", value: "SECONDS", help: "W1/W2: give each reminder trigger.spread SECONDS; lateness is measured from each firing's spread due instant."),
            OptionSpec(name: "lead", value: "SECONDS", help: "W1/W2: T − T_plan instead of max(4, 1.3 N / rate + 3)."),
            OptionSpec(name: "quiet-seconds", value: "S", help: "End observation after S s without a record (default 20, as WORKLOADS.md); reported."),
            OptionSpec(name: "subscriber", value: "MODE", help: "client (default: SubscriberClient, decodes each event), raw (bare SUB, no high-water mark, no decode) or pyzmq (a python3 pyzmq process that json.loads each event and writes its own records: what users see)."),
            OptionSpec(name: "cluster-config", value: "PATH", help: "A configuration file (JSON) for the children, merged over the defaults."),
            OptionSpec(name: "wrap-coordinator", value: "COMMAND", help: "Run the coordinator under COMMAND (split on spaces), e.g. a profiler; reported."),
            OptionSpec(name: "wrap-workers", value: "COMMAND", help: "Run each worker under COMMAND (split on spaces); reported."),
            OptionSpec(name: "curve", value: nil, help: "Run CURVE on every endpoint (keys made per run) to measure what encryption costs; reported."),
            OptionSpec(name: "disk-contention", value: nil, help: "Run a disk-contention generator beside the cluster: 64 MiB files written and fdatasynced in a loop on the store's filesystem (issue 28); its MiB/s and fsync times are reported."),
            OptionSpec(name: "peer", value: "NAME", help: "W1/W2: after each Chime run, run the same workload on a peer scheduler (apscheduler: APScheduler 3 in one Python process, needs pip install 'apscheduler<4') and print its report (\"peer\":NAME) beside Chime's."),
            OptionSpec(name: "keep", value: nil, help: "Keep each run's directory (store, logs, plan, records) and print its path."),
        ],
        details: """
            Starts the chime binary beside chime-bench as a coordinator (file store in a temporary
            directory; with --shards N, N coordinators on blocks of 10 ports with a generated cluster
            section) and workers on free loopback ports, subscribes in this process, and prints one
            JSON object per run (and a median summary when R > 1) on standard output; progress goes to
            standard error. Build with 'swift build -c release' first (it builds chime and chime-bench):
            a debug build is reported as such.
            """)

    /// Runs the workload the arguments name and prints its reports.
    /// - Throws: `UsageError` for a bad option, `RuntimeFailure` when `chime` is not beside
    ///   this binary; what a run throws.
    static func run(_ arguments: Arguments) throws -> Int32 {
        guard let name = arguments.value("workload") else { throw UsageError("--workload W1|W2|W3|W4 is required") }
        guard let workload = Workload(rawValue: name.uppercased()) else {
            throw UsageError("--workload must be W1, W2, W3 or W4, not '\(name)'")
        }
        var settings = BenchSettings(workload: workload, count: try arguments.integer("count"))
        guard settings.count >= 1 else { throw UsageError("--count must be at least 1") }
        if let fsync = arguments.value("fsync") {
            guard ["always", "interval", "never"].contains(fsync) else {
                throw UsageError("--fsync must be always, interval or never, not '\(fsync)'")
            }
            settings.fsync = fsync
        }
        settings.workers = try arguments.integer("workers") ?? settings.workers
        guard (1...64).contains(settings.workers) else { throw UsageError("--workers must be between 1 and 64") }
        settings.shards = try arguments.integer("shards") ?? settings.shards
        guard (1...64).contains(settings.shards) else { throw UsageError("--shards must be between 1 and 64") }
        settings.recipients = try arguments.integer("recipients")
        if let recipients = settings.recipients, !(1...10_000_000).contains(recipients) {
            throw UsageError("--recipients must be between 1 and 10000000")
        }
        settings.runs = try arguments.integer("runs") ?? settings.runs
        guard (1...100).contains(settings.runs) else { throw UsageError("--runs must be between 1 and 100") }
        settings.batch = try arguments.integer("batch") ?? settings.batch
        guard (1...100_000).contains(settings.batch) else { throw UsageError("--batch must be between 1 and 100000") }
        settings.pipeline = try arguments.integer("pipeline") ?? settings.pipeline
        guard (1...10_000).contains(settings.pipeline) else { throw UsageError("--pipeline must be between 1 and 10000") }
        settings.expectedIngestRate = try positive(arguments, "expected-rate")
        settings.lead = try positive(arguments, "lead")
        settings.spread = try positive(arguments, "spread")
        settings.quietSeconds = try positive(arguments, "quiet-seconds") ?? settings.quietSeconds
        if let path = arguments.value("cluster-config") {
            settings.configuration = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        if let mode = arguments.value("subscriber") {
            guard let parsed = BenchSubscriber.Mode(rawValue: mode) else {
                throw UsageError("--subscriber must be client, raw or pyzmq, not '\(mode)'")
            }
            settings.subscriber = parsed
        }
        if let name = arguments.value("peer") {
            guard let peer = PeerScheduler(rawValue: name) else {
                throw UsageError("--peer must be \(PeerScheduler.allCases.map(\.rawValue).joined(separator: ", ")), not '\(name)'")
            }
            guard PeerScheduler.workloads.contains(workload) else {
                throw UsageError("--peer runs W1 or W2 only (the peer has no durable store to crash or fill)")
            }
            settings.peer = peer
        }
        settings.keepsDirectory = arguments.has("keep")
        settings.curve = arguments.has("curve")
        settings.diskContention = arguments.has("disk-contention")
        settings.coordinatorWrapper = arguments.value("wrap-coordinator")?.split(separator: " ").map(String.init) ?? []
        settings.workerWrapper = arguments.value("wrap-workers")?.split(separator: " ").map(String.init) ?? []

        let stop = StopSignal()
        installTerminationHandlers(stop)
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("chime")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw RuntimeFailure("chime bench starts the chime binary beside it, \(binary.path), which is missing")
        }
        let runner = BenchRunner(settings: settings, binary: binary, stop: stop) { line in
            FileHandle.standardError.write(Data("chime bench: \(line)\n".utf8))
        }
        let reports = try runner.runAll { output($0.rounded().jsonLine()) }
        // A median summary per system (Chime, then the peer's), when there were several runs.
        let systems: [PeerScheduler?] = [nil] + PeerScheduler.allCases.map { $0 }
        for system in systems {
            let own = reports.filter { $0.peer == system }
            if own.count > 1 { output(BenchReport.summary(of: own).rounded().jsonLine()) }
        }
        return 0
    }

    static func positive(_ arguments: Arguments, _ name: String) throws -> Double? {
        guard let text = arguments.value(name) else { return nil }
        guard let value = Double(text), value > 0 else { throw UsageError("--\(name) must be a positive number, not '\(text)'") }
        return value
    }
}
