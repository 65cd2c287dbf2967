import Testing

@testable import ChimeBench

@Suite struct RunMetricsTests {
    @Test(arguments: [
        (50.0, 5.0), (99.0, 10.0), (100.0, 10.0), (10.0, 1.0), (11.0, 2.0), (90.0, 9.0), (91.0, 10.0),
    ])
    func nearestRankOfOneToTen(percent: Double, expected: Double) {
        let sorted = (1...10).map(Double.init)
        #expect(RunMetrics.nearestRank(sorted, percent: percent) == expected)
    }

    @Test func nearestRankOfAHundredIsTheRankItself() {
        let sorted = (1...100).map(Double.init)
        #expect(RunMetrics.nearestRank(sorted, percent: 99) == 99)
        #expect(RunMetrics.nearestRank(sorted, percent: 50) == 50)
        #expect(RunMetrics.nearestRank([], percent: 50) == nil)
        #expect(RunMetrics.nearestRank([7], percent: 99) == 7)
    }

    @Test func countsLostDuplicatesEarlyAndKeepsTheEarliestFiring() {
        let dues = [100.0, 100.0, 100.0, 100.0]
        let records: [(id: Int, actual: Double)] = [
            (0, 100.002), (1, 100.010), (0, 100.500), (2, 99.9985), (1, 100.004), (9, 100.0),
        ]
        let metrics = RunMetrics(dues: dues, records: records, fireAt: 100)
        #expect(metrics.records == 5)
        #expect(metrics.unknownIds == 1)
        #expect(metrics.firedDistinct == 3)
        #expect(metrics.lost == 1)
        #expect(metrics.duplicates == 2)
        // Only 99.9985 is more than 1 ms before its due.
        #expect(metrics.early == 1)
        let lateness = try! #require(metrics.latenessMilliseconds)
        // First firings: id 0 → 2 ms, id 1 → 4 ms (the earlier record), id 2 → −1.5 ms.
        #expect(abs(lateness.p50 - 2) < 1e-6)
        #expect(abs(lateness.p99 - 4) < 1e-6)
        #expect(abs(lateness.max - 4) < 1e-6)
        #expect(abs(metrics.fireAtToLastFireSeconds! - 0.5) < 1e-9)
        #expect(abs(metrics.drainRate! - 6) < 1e-6)
        #expect(abs(metrics.fireSpanSeconds! - 0.5015) < 1e-9)
        #expect(metrics.recordsBeforeKill == nil)
    }

    @Test func countsRecordsBeforeTheKill() {
        let metrics = RunMetrics(
            dues: [20, 20], records: [(0, 14.0), (1, 26.0), (0, 26.1)], fireAt: 20, killedAt: 15)
        #expect(metrics.recordsBeforeKill == 1)
        #expect(metrics.early == 1)
        #expect(metrics.lost == 0 && metrics.duplicates == 1)
    }

    @Test func nothingFiredLeavesTheTimingsOut() {
        let metrics = RunMetrics(dues: [1, 2, 3], records: [], fireAt: 1)
        #expect(metrics.lost == 3)
        #expect(metrics.latenessMilliseconds == nil && metrics.drainRate == nil && metrics.fireSpanSeconds == nil)
    }
}

@Suite struct RecordLineTests {
    @Test func formatsSixDecimalsAndParsesBack() {
        var bytes: [UInt8] = []
        RecordLine.append(id: 42, due: 1_800_000_000.25, actual: 1_800_000_000.250_731, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "42 1800000000.250000 1800000000.250731\n")
        let parsed = RecordLine.parseAll(bytes)
        #expect(parsed.malformed == 0)
        #expect(parsed.records == [RecordLine.Fields(id: 42, due: 1_800_000_000.25, actual: 1_800_000_000.250_731)])
    }

    @Test func zeroIdAndWholeSeconds() {
        var bytes: [UInt8] = []
        RecordLine.append(id: 0, due: 7, actual: 0.000_001, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "0 7.000000 0.000001\n")
    }

    @Test func countsMalformedLines() {
        let text = "1 2.5 3.5\ngarbage\n2 1.0\n3 4.000001 5.1\n"
        let parsed = RecordLine.parseAll(Array(text.utf8))
        #expect(parsed.malformed == 2)
        #expect(parsed.records.map(\.id) == [1, 3])
    }
}

@Suite struct ObservationRuleTests {
    let rule = ObservationRule(count: 10, fireAt: 100, lastDue: 130)

    @Test func endsFiveSecondsAfterAllSeen() {
        #expect(rule.endReason(now: 104, allSeenAt: 100, lastRecordAt: 100, restartedAt: nil) == nil)
        #expect(rule.endReason(now: 105, allSeenAt: 100, lastRecordAt: 100, restartedAt: nil) == .allSeen)
    }

    @Test func quietCountsFromTheLastDueOrTheLastRecord() {
        #expect(rule.endReason(now: 149, allSeenAt: nil, lastRecordAt: 120, restartedAt: nil) == nil)
        #expect(rule.endReason(now: 150, allSeenAt: nil, lastRecordAt: 120, restartedAt: nil) == .quiet)
        #expect(rule.endReason(now: 150, allSeenAt: nil, lastRecordAt: 140, restartedAt: nil) == nil)
        #expect(rule.endReason(now: 700, allSeenAt: nil, lastRecordAt: 699, restartedAt: nil) == .timeLimit)
    }

    @Test func aCrashRunWaitsForTheRestartBeforeCountingQuiet() {
        var crash = ObservationRule(count: 10, fireAt: 100, lastDue: 100)
        crash.waitsForRestart = true
        crash.quiet = 3
        #expect(crash.endReason(now: 104, allSeenAt: nil, lastRecordAt: nil, restartedAt: nil) == nil)
        #expect(crash.endReason(now: 108, allSeenAt: nil, lastRecordAt: nil, restartedAt: 106) == nil)
        #expect(crash.endReason(now: 109, allSeenAt: nil, lastRecordAt: nil, restartedAt: 106) == .quiet)
    }
}

@Suite struct WorkloadPlanTests {
    @Test func spreadsW2OverThirtySecondsFromAMillisecondT() {
        let plan = WorkloadPlan(workload: .w2, count: 30_000, plannedAt: 1000.0004, lead: 4)
        #expect(plan.fireAt == 1004.001)
        #expect(plan.dues[0] == plan.fireAt)
        #expect(abs(plan.dues[29_999] - (1004.001 + 29.999)) < 1e-9)
    }

    @Test func referenceLead() {
        #expect(Workload.w1.lead(count: 10_000, expectedIngestRate: 10_000) == 4.3)
        #expect(Workload.w1.lead(count: 100, expectedIngestRate: 10_000) == 4)
        #expect(Workload.w3.lead(count: 100_000, expectedIngestRate: 1) == 20)
    }
}
