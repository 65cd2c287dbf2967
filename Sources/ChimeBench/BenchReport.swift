import Foundation

/// One run's figures, printed as one JSON object (keys sorted). Units are in the names:
/// seconds, milliseconds (`…Ms`), reminders or firings per second (`…Rate`), megabytes of
/// 10^6 bytes (`…MB`). Fields that do not apply to the workload are omitted.
public struct BenchReport: Codable, Sendable {
    public var workload: Workload
    /// The peer scheduler this run measured (`--peer`); `nil`: Chime.
    public var peer: PeerScheduler?
    /// 1-based run number; 0 in a median summary.
    public var run = 1
    public var runs = 1
    /// N.
    public var n: Int
    /// Whether the run respected WORKLOADS.md (ingestion finished early enough, no failure).
    public var valid = true
    public var invalidReasons: [String]?
    /// `release` or `debug`.
    public var build: String
    /// Cores the machine offers (`activeProcessorCount`).
    public var cores: Int
    public var fsync: String
    public var workers: Int
    /// Shards (coordinators); 1: one coordinator without a `cluster` section.
    public var shards: Int
    /// Distinct recipients the plan's reminders go to (each shard gets those of its slots).
    public var recipients: Int
    /// Reminders per schedule request; `bulk` when above 1.
    public var batch: Int
    public var bulk: Bool
    /// Requests in flight on the one DEALER; `pipelined` when above 1.
    public var pipeline: Int
    public var pipelined: Bool
    /// Whether each schedule reply came after the journal fsync.
    public var durable: Bool
    /// Whether every endpoint ran CURVE (with the ZAP handler).
    public var curve: Bool
    /// What the disk-contention generator did (`--disk-contention`); `nil` without it.
    var diskContention: DiskContention.Figures?
    /// The command the coordinator ran under (a profiler), when any: its figures are then not comparable.
    public var coordinatorWrapper: String?
    public var workerWrapper: String?
    /// `client` (SubscriberClient, as applications use it) or `raw` (bare SUB, no decode).
    public var subscriber: BenchSubscriber.Mode?

    public var expectedIngestRate: Double?
    public var leadSeconds: Double?
    public var ingestSeconds: Double?
    public var ingestRate: Double?
    public var ingestRequests: Int?
    /// One call at a time (W4, batch 1, pipeline 1): the mean round trip of a `schedule`
    /// request, milliseconds (ingest time / requests).
    public var roundTripMeanMs: Double?
    /// The same run's bare libzmq DEALER → ROUTER echo of a same-sized body over TCP
    /// loopback (``RoundTripBaselines/echo(body:count:)``), milliseconds.
    public var echoRoundTripMs: RoundTripBaselines.Figures?
    /// The same run's `write` + `fdatasync` of a 256-byte record on the store's disk,
    /// milliseconds.
    public var fdatasyncMs: RoundTripBaselines.Figures?
    /// `T − end of ingestion`, seconds (must be ≥ 1 s for W1/W2, ≥ 7 s for W3).
    public var ingestEndsBeforeTSeconds: Double?

    public var records: Int?
    public var firedDistinct: Int?
    public var lost: Int?
    public var duplicates: Int?
    public var early: Int?
    public var latenessMs: RunMetrics.Percentiles?
    public var tToLastFireSeconds: Double?
    public var drainRate: Double?
    public var fireSpanSeconds: Double?
    public var recordsBeforeKill: Int?
    /// Why observation ended (`allSeen`, `quiet`, `timeLimit`) and the quiet period used.
    public var observationEnd: ObservationRule.Reason?
    public var quietSeconds: Double?

    /// W3: from the restart (spawn) to the first answered ping; W4: from SIGTERM to it.
    public var restartToReadySeconds: Double?
    /// W3: from the restarted coordinator's first answered ping to the last firing.
    public var readyToLastFireSeconds: Double?
    /// W4: the coordinator's VmRSS right after ingestion.
    public var coordinatorRssAfterIngestMB: Double?
    /// W4: bytes under the store directory after ingestion.
    public var storeBytes: Int?
    /// W4: reminders `pending` after the restart (should be N).
    public var recoveredPending: Int?
    /// Several shards: each shard's share of the plan, by shard.
    public var remindersPerShard: [Int]?
    /// W4, several shards: each coordinator's VmRSS right after ingestion, by shard
    /// (`coordinatorRssAfterIngestMB` is their sum).
    public var coordinatorsRssAfterIngestMB: [Double]?
    /// W4, several shards: after SIGTERM to every coordinator at once and a start of each,
    /// each shard's SIGTERM → first answered ping (`restartToReadySeconds` is the largest).
    public var restartToReadyPerShardSeconds: [Double]?
    /// W4, several shards: SIGTERM → first answered ping of shard 0 restarted alone (the
    /// others serving), before the restart of all.
    public var oneShardRestartToReadySeconds: Double?

    /// Peak of the coordinators' summed VmRSS (one coordinator per shard).
    public var peakRssCoordinatorMB: Double?
    /// Several shards: each coordinator's own peak VmRSS, by shard.
    public var peakRssCoordinatorsMB: [Double]?
    public var peakRssWorkersMB: Double?
    public var peakRssTotalMB: Double?
    /// Peak of the processes' summed proportional set sizes (shared pages counted once), MB.
    public var peakPssTotalMB: Double?
    /// The coordinator's own view after observation (`status` and `stats`): reminders
    /// delivered and its dispatch/fire lateness p99, to tell cluster loss from subscriber loss.
    public var coordinatorDelivered: Int?
    public var coordinatorFireLatenessP99Ms: Double?
    public var coordinatorDispatchLatenessP99Ms: Double?
    /// Per-run lost and duplicates (summary only).
    public var lostPerRun: [Int]?
    public var duplicatesPerRun: [Int]?

    init(settings: BenchSettings) {
        workload = settings.workload
        runs = settings.runs
        n = settings.count
        #if DEBUG
            build = "debug"
        #else
            build = "release"
        #endif
        cores = ProcessInfo.processInfo.activeProcessorCount
        fsync = settings.fsync
        workers = settings.workers
        shards = settings.shards
        recipients = settings.defaultRecipients
        batch = settings.batch
        bulk = settings.isBulk
        pipeline = settings.pipeline
        pipelined = settings.pipeline > 1
        durable = settings.isDurable
        curve = settings.curve
        subscriber = settings.workload.fires ? settings.subscriber : nil
        coordinatorWrapper = settings.coordinatorWrapper.isEmpty ? nil : settings.coordinatorWrapper.joined(separator: " ")
        workerWrapper = settings.workerWrapper.isEmpty ? nil : settings.workerWrapper.joined(separator: " ")
    }

    mutating func invalidate(_ reason: String) {
        valid = false
        invalidReasons = (invalidReasons ?? []) + [reason]
    }

    /// The JSON line (sorted keys).
    public func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            preconditionFailure("a bench report always encodes: \(error)")
        }
    }
}

extension BenchReport {
    /// The report with figures rounded for reading: milliseconds to 3 decimals (1 µs),
    /// seconds to 4, rates to whole units, megabytes to 1 decimal.
    public func rounded() -> BenchReport {
        func places(_ value: Double?, _ digits: Int) -> Double? {
            guard let value, value.isFinite else { return value }
            var scale = 1.0
            for _ in 0..<digits { scale *= 10 }
            return (value * scale).rounded() / scale
        }
        var copy = self
        copy.expectedIngestRate = places(expectedIngestRate, 0)
        copy.leadSeconds = places(leadSeconds, 4)
        copy.ingestSeconds = places(ingestSeconds, 4)
        copy.ingestRate = places(ingestRate, 0)
        copy.ingestEndsBeforeTSeconds = places(ingestEndsBeforeTSeconds, 4)
        copy.latenessMs = latenessMs.map {
            RunMetrics.Percentiles(p50: places($0.p50, 3)!, p99: places($0.p99, 3)!, max: places($0.max, 3)!)
        }
        copy.tToLastFireSeconds = places(tToLastFireSeconds, 4)
        copy.drainRate = places(drainRate, 0)
        copy.fireSpanSeconds = places(fireSpanSeconds, 4)
        copy.restartToReadySeconds = places(restartToReadySeconds, 4)
        copy.readyToLastFireSeconds = places(readyToLastFireSeconds, 4)
        copy.coordinatorRssAfterIngestMB = places(coordinatorRssAfterIngestMB, 1)
        copy.coordinatorsRssAfterIngestMB = coordinatorsRssAfterIngestMB?.map { places($0, 1) ?? $0 }
        copy.restartToReadyPerShardSeconds = restartToReadyPerShardSeconds?.map { places($0, 4) ?? $0 }
        copy.oneShardRestartToReadySeconds = places(oneShardRestartToReadySeconds, 4)
        copy.peakRssCoordinatorsMB = peakRssCoordinatorsMB?.map { places($0, 1) ?? $0 }
        copy.peakRssCoordinatorMB = places(peakRssCoordinatorMB, 1)
        copy.peakRssWorkersMB = places(peakRssWorkersMB, 1)
        copy.peakRssTotalMB = places(peakRssTotalMB, 1)
        copy.peakPssTotalMB = places(peakPssTotalMB, 1)
        copy.coordinatorFireLatenessP99Ms = places(coordinatorFireLatenessP99Ms, 3)
        copy.coordinatorDispatchLatenessP99Ms = places(coordinatorDispatchLatenessP99Ms, 3)
        return copy
    }
}
