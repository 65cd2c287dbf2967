import Foundation

extension BenchReport {
    /// The median of every figure over `reports` (the mean of the two middle values for an
    /// even count), with each run's lost and duplicates listed; `valid` only if all were.
    public static func summary(of reports: [BenchReport]) -> BenchReport {
        precondition(!reports.isEmpty, "a summary needs at least one run")
        var summary = reports[0]
        summary.run = 0
        summary.runs = reports.count
        summary.valid = reports.allSatisfy(\.valid)
        let reasons = reports.flatMap { $0.invalidReasons ?? [] }
        summary.invalidReasons = reasons.isEmpty ? nil : reasons
        func median(_ values: [Double?]) -> Double? {
            let present = values.compactMap { $0 }.sorted()
            guard !present.isEmpty else { return nil }
            let middle = present.count / 2
            return present.count % 2 == 1 ? present[middle] : (present[middle - 1] + present[middle]) / 2
        }
        func median(_ path: KeyPath<BenchReport, Double?>) -> Double? { median(reports.map { $0[keyPath: path] }) }
        func median(_ path: KeyPath<BenchReport, Int?>) -> Int? {
            median(reports.map { $0[keyPath: path].map(Double.init) }).map { Int($0.rounded()) }
        }
        summary.leadSeconds = median(\.leadSeconds)
        summary.ingestSeconds = median(\.ingestSeconds)
        summary.ingestRate = median(\.ingestRate)
        summary.ingestEndsBeforeTSeconds = median(\.ingestEndsBeforeTSeconds)
        summary.records = median(\.records)
        summary.firedDistinct = median(\.firedDistinct)
        summary.lost = median(\.lost)
        summary.duplicates = median(\.duplicates)
        summary.early = median(\.early)
        let lateness = reports.compactMap(\.latenessMs)
        if !lateness.isEmpty {
            summary.latenessMs = RunMetrics.Percentiles(
                p50: median(lateness.map(\.p50)) ?? 0, p99: median(lateness.map(\.p99)) ?? 0,
                max: median(lateness.map(\.max)) ?? 0)
        }
        summary.tToLastFireSeconds = median(\.tToLastFireSeconds)
        summary.drainRate = median(\.drainRate)
        summary.fireSpanSeconds = median(\.fireSpanSeconds)
        summary.recordsBeforeKill = median(\.recordsBeforeKill)
        summary.observationEnd = nil
        summary.restartToReadySeconds = median(\.restartToReadySeconds)
        summary.readyToLastFireSeconds = median(\.readyToLastFireSeconds)
        summary.coordinatorRssAfterIngestMB = median(\.coordinatorRssAfterIngestMB)
        summary.storeBytes = median(\.storeBytes)
        summary.recoveredPending = median(\.recoveredPending)
        summary.peakRssCoordinatorMB = median(\.peakRssCoordinatorMB)
        summary.oneShardRestartToReadySeconds = median(\.oneShardRestartToReadySeconds)
        func medians(_ path: KeyPath<BenchReport, [Double]?>) -> [Double]? {
            guard let width = reports.compactMap({ $0[keyPath: path]?.count }).max() else { return nil }
            return (0..<width).map { index in
                median(reports.map { report in report[keyPath: path].flatMap { $0.indices.contains(index) ? $0[index] : nil } }) ?? 0
            }
        }
        summary.peakRssCoordinatorsMB = medians(\.peakRssCoordinatorsMB)
        summary.coordinatorsRssAfterIngestMB = medians(\.coordinatorsRssAfterIngestMB)
        summary.restartToReadyPerShardSeconds = medians(\.restartToReadyPerShardSeconds)
        summary.peakRssWorkersMB = median(\.peakRssWorkersMB)
        summary.peakRssTotalMB = median(\.peakRssTotalMB)
        summary.peakPssTotalMB = median(\.peakPssTotalMB)
        summary.coordinatorDelivered = median(\.coordinatorDelivered)
        summary.coordinatorFireLatenessP99Ms = median(\.coordinatorFireLatenessP99Ms)
        summary.coordinatorDispatchLatenessP99Ms = median(\.coordinatorDispatchLatenessP99Ms)
        if reports[0].workload.fires {
            summary.lostPerRun = reports.map { $0.lost ?? 0 }
            summary.duplicatesPerRun = reports.map { $0.duplicates ?? 0 }
        }
        return summary
    }
}
