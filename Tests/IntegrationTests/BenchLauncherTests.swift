import ChimeTestSupport
import Foundation
import Testing

/// `chime bench` runs the `chime-bench` executable beside `chime`, which the product binary
/// does not link.
@Suite struct BenchLauncherTests {
    func chime(_ binary: URL, _ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try LocalCluster.run(binary: binary, arguments, timeout: 20)
    }

    @Test func benchRunsTheHarnessWithTheSameArguments() throws {
        let binary = try LocalCluster.locateBinary()
        let help = try chime(binary, ["bench", "--help"])
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("Benchmark a local cluster on a workload of WORKLOADS.md"))
        #expect(help.output.contains("--workload W"), "the harness's own options")
        let refused = try chime(binary, ["bench", "--workload", "W9"])
        #expect(refused.status == 2)
        #expect(refused.error == "chime: --workload must be W1, W2, W3 or W4, not 'W9'\n")
        let json = try chime(binary, ["bench", "--runs", "0", "--workload", "W1", "--json"])
        #expect(json.status == 2, "unknown option --json is the harness's usage error")
        #expect(json.output.contains(#""code":"usage""#))
    }

    /// `--peer apscheduler` runs the same W1 on APScheduler after Chime's run, with the same
    /// metrics code: two reports, the second marked `"peer":"apscheduler"`, each with every
    /// id fired once.
    @Test func aPeerRunsTheSameWorkloadBesideChime() throws {
        let binary = try LocalCluster.locateBinary()
        let run = try LocalCluster.run(
            binary: binary, ["bench", "--workload", "W1", "--count", "300", "--peer", "apscheduler", "--lead", "4", "--quiet-seconds", "5"],
            timeout: 180)
        #expect(run.status == 0, "\(run.error)")
        let reports = run.output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        try #require(reports.count == 2, "\(run.output)")
        #expect(reports[0]["peer"] == nil)
        #expect(reports[1]["peer"] as? String == "apscheduler")
        #expect(reports[1]["fsync"] as? String == "none")
        for report in reports {
            #expect(report["n"] as? Int == 300)
            #expect(report["firedDistinct"] as? Int == 300)
            #expect(report["records"] as? Int == 300)
            #expect(report["lost"] as? Int == 0)
            #expect(report["duplicates"] as? Int == 0)
            #expect(report["early"] as? Int == 0)
            #expect(report["valid"] as? Bool == true, "\(report["invalidReasons"] ?? "")")
            #expect((report["peakPssTotalMB"] as? Double ?? 0) > 0)
        }
        let unknown = try chime(binary, ["bench", "--workload", "W1", "--peer", "cron"])
        #expect(unknown.status == 2)
        #expect(unknown.error == "chime: --peer must be apscheduler, not 'cron'\n")
        let crash = try chime(binary, ["bench", "--workload", "W3", "--peer", "apscheduler"])
        #expect(crash.status == 2)
        #expect(crash.error == "chime: --peer runs W1 or W2 only (the peer has no durable store to crash or fill)\n")
    }

    @Test func withoutTheHarnessBesideItBenchSaysSoAndOthersStillWork() throws {
        let directory = try TemporaryDirectory(prefix: "bench-launcher")
        let alone = directory.url.appendingPathComponent("chime")
        // A hard link: /proc/self/exe names the link's directory, where no chime-bench is.
        if link(try LocalCluster.locateBinary().path, alone.path) != 0 {
            try FileManager.default.copyItem(at: try LocalCluster.locateBinary(), to: alone)
        }
        let missing = try chime(alone, ["bench", "--workload", "W1"])
        #expect(missing.status == 1)
        #expect(missing.error == "chime: chime bench runs \(directory.url.resolvingSymlinksInPath().path)/chime-bench, which is missing: build it beside chime with 'swift build -c release --product chime-bench'\n")
        #expect(try chime(alone, ["version"]).status == 0)
    }
}
