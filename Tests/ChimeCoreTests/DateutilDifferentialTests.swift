import Foundation
import Testing

@testable import ChimeCore

/// Chime against python-dateutil's `rrule` on seeded random recurrences: 2 × 5,000 rules
/// over six zones (America/New_York, Europe/London, Australia/Lord_Howe, Pacific/Apia,
/// Asia/Kolkata, UTC), up to 20 occurrences each plus one `firstOccurrence(onOrAfter:)`
/// probe. The oracle applies Chime's documented differences (see `rrule_oracle.py`).
@Suite struct DateutilDifferentialTests {
    static let rulesPerSeed = 5_000

    @Test(
        .enabled(if: RRuleOracle.isAvailable || ProcessInfo.processInfo.environment["CI"] != nil, "needs python3 with python-dateutil (pip install python-dateutil)"),
        arguments: [20_260_501, 20_260_502])
    func agreesWithDateutilOnRandomRules(seed: Int) throws {
        let cases = try RRuleOracle.generate(seed: seed, count: Self.rulesPerSeed)
        var compared = 0
        var failures: [(OracleCase, String)] = []
        for oracleCase in cases {
            let comparison = RRuleOracle.compare(oracleCase)
            compared += comparison.comparedCount
            if let mismatch = comparison.mismatch { failures.append((oracleCase, mismatch)) }
        }
        print("dateutil differential, seed \(seed): \(cases.count) rules, \(compared) occurrences compared, \(failures.count) mismatches")
        #expect(cases.count == Self.rulesPerSeed)
        for (oracleCase, mismatch) in failures.prefix(5) {
            let smallest = RRuleOracle.minimize(oracleCase)
            let detail = RRuleOracle.compare(smallest).mismatch ?? mismatch
            Issue.record(
                "seed \(seed) case \(oracleCase.id): \(mismatch)\n  minimized (\(detail)): \(smallest.json)\n  original: \(oracleCase.json)")
        }
        if failures.count > 5 {
            Issue.record("seed \(seed): \(failures.count - 5) more mismatches (rerun the oracle with this seed to list them)")
        }
    }
}
