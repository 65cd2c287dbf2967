import ChimeTestSupport
import Foundation
import Testing

/// The `cluster` section is checked when a coordinator or worker starts: a map that leaves a
/// slot unowned or owns one twice, or a shard that is not in it, stops the start with a clear
/// error and the configuration-error status (1); a missing choice of shard is a usage error (2).
@Suite struct ShardConfigurationTests {
    static func endpoints(_ port: Int) -> String {
        #"{"control": "tcp://127.0.0.1:\#(port)", "dispatch": "tcp://127.0.0.1:\#(port + 1)", "results": "tcp://127.0.0.1:\#(port + 2)", "events": "tcp://127.0.0.1:\#(port + 3)", "eventsIngest": "tcp://127.0.0.1:\#(port + 4)"}"#
    }

    static func configuration(_ first: [Int], _ second: [Int]) -> String {
        #"{"http": {"listen": "off"}, "cluster": {"mapEpoch": 1, "shards": [{"id": 0, "slots": [[\#(first[0]), \#(first[1])]], "endpoints": \#(endpoints(7700))}, {"id": 1, "slots": [[\#(second[0]), \#(second[1])]], "endpoints": \#(endpoints(7710))}]}}"#
    }

    func chime(_ arguments: [String], configuration: String) throws -> (status: Int32, output: String, error: String) {
        let directory = try TemporaryDirectory(prefix: "shard-config")
        let path = directory.path("chime.json")
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: path))
        return try LocalCluster.run(binary: LocalCluster.locateBinary(), arguments + ["--config", path], timeout: 20)
    }

    @Test(arguments: [
        ([0, 2047], [2049, 4095], "chime: cluster.shards: slot 2048 is owned by no shard\n"),
        ([0, 2100], [2048, 4095], "chime: cluster.shards[1].slots[0]: slot 2048 is owned by shards 0 and 1\n"),
        ([0, 2047], [2048, 4096], "chime: cluster.shards[1].slots[0]: slot range [2048, 4096] is not within 0…4095\n"),
    ])
    func aMapWithAGapOrAnOverlapStopsTheStart(first: [Int], second: [Int], message: String) throws {
        for command in [["coordinator", "--store", "none", "--shard", "0"], ["worker"]] {
            let result = try chime(command, configuration: Self.configuration(first, second))
            #expect(result.status == 1, "\(command)")
            #expect(result.error == message, "\(command)")
        }
    }

    @Test func aCoordinatorMustChooseAShardOfTheMap() throws {
        let valid = Self.configuration([0, 2047], [2048, 4095])
        let unchosen = try chime(["coordinator", "--store", "none"], configuration: valid)
        #expect(unchosen.status == 2)
        #expect(unchosen.error == "chime: the cluster has 2 shards: choose one with --shard ID, CHIME_SHARD or --shard-from-hostname\n")
        let missing = try chime(["coordinator", "--store", "none", "--shard", "5"], configuration: valid)
        #expect(missing.status == 1)
        #expect(missing.error == "chime: cluster: there is no shard 5 (shards: 0, 1)\n")
        let garbage = try chime(["coordinator", "--store", "none", "--shard", "two"], configuration: valid)
        #expect(garbage.status == 2)
        #expect(garbage.error == "chime: --shard must be a shard id (0 or more), not 'two'\n")
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
        if host.range(of: #"-[0-9]+$"#, options: .regularExpression) == nil {
            let fromHost = try chime(["coordinator", "--store", "none", "--shard-from-hostname"], configuration: valid)
            #expect(fromHost.status == 2)
            #expect(fromHost.error.hasPrefix("chime: --shard-from-hostname: host name '"))
        }
    }

    @Test func aShardChosenWithoutAClusterSectionIsRefused() throws {
        let result = try chime(["coordinator", "--store", "none", "--shard", "3"], configuration: #"{"http": {"listen": "off"}}"#)
        #expect(result.status == 2)
        #expect(result.error == "chime: shard 3 was chosen, but the configuration has no cluster section (one coordinator is shard 0)\n")
    }
}
