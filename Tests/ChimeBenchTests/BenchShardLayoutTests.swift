import ChimeRuntime
import ChimeWire
import Foundation
import Testing

@testable import ChimeBench

/// The sharded bench cluster's pure parts: the map on port blocks, the generated
/// configuration, the split of the plan by shard and the warm-up recipients. Expected
/// shards come from the Python client's independent CRC-32C (clients/python/chime_client).
@Suite struct BenchShardLayoutTests {
    @Test func mapSplitsTheSlotsEvenlyOnBlocksOfTenPorts() throws {
        let map = BenchShardLayout.map(shards: 4, base: 30_000)
        try map.validate()
        #expect(map.mapEpoch == 1 && map.slotCount == 4096)
        #expect(map.shards.map(\.id) == [0, 1, 2, 3])
        let expected: [[ShardMap.SlotRange]] = [
            [ShardMap.SlotRange(0, 1023)], [ShardMap.SlotRange(1024, 2047)], [ShardMap.SlotRange(2048, 3071)],
            [ShardMap.SlotRange(3072, 4095)],
        ]
        #expect(map.shards.map(\.slots) == expected)
        #expect(map.shards[2].endpoints == ShardMap.Endpoints(
            control: "tcp://127.0.0.1:30020", dispatch: "tcp://127.0.0.1:30021", results: "tcp://127.0.0.1:30022",
            events: "tcp://127.0.0.1:30023", eventsIngest: "tcp://127.0.0.1:30024"))
    }

    @Test func configurationKeepsTheGivenKeysAndAddsTheClusterSection() throws {
        let map = BenchShardLayout.map(shards: 2, base: 41_000)
        let given = Data(#"{"store":{"fsync":"interval"},"cluster":{"shards":[]}}"#.utf8)
        let data = try BenchShardLayout.configuration(given, map: map)
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((root["store"] as? [String: Any])?["fsync"] as? String == "interval")
        let clusterData = try JSONSerialization.data(withJSONObject: try #require(root["cluster"]))
        let cluster = try JSONDecoder().decode(ChimeConfiguration.Cluster.self, from: clusterData)
        #expect(cluster.mapEpoch == 1 && cluster.slotCount == 4096)
        #expect(cluster.shards.map(\.id) == [0, 1])
        #expect(cluster.shards.map(\.slots) == [[[0, 2047]], [[2048, 4095]]])
        #expect(cluster.shards.map(\.http) == ["127.0.0.1:41005", "127.0.0.1:41015"])
        #expect(cluster.shards[1].endpoints.control == "tcp://127.0.0.1:41010")
        #expect(cluster.shards[1].endpoints.eventsIngest == "tcp://127.0.0.1:41014")
        #expect(cluster.shards.allSatisfy { $0.bind == nil })
    }

    @Test func httpOffStaysOffOnEveryShard() throws {
        let data = try BenchShardLayout.configuration(
            Data(#"{"http":{"listen":"off"}}"#.utf8), map: BenchShardLayout.map(shards: 3, base: 50_000))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let shards = try #require((root["cluster"] as? [String: Any])?["shards"] as? [[String: Any]])
        #expect(shards.map { $0["http"] as? String } == ["off", "off", "off"])
    }

    @Test(arguments: ["[]", "3", "not json", ""])
    func aConfigurationThatIsNotAnObjectIsRefused(_ text: String) {
        #expect(throws: BenchError.self) {
            try BenchShardLayout.configuration(Data(text.utf8), map: BenchShardLayout.map(shards: 2, base: 30_000))
        }
    }

    @Test func partitionSendsEachIdToItsRecipientsShard() throws {
        let names = (0..<1000).map { "bench-\($0)" }
        let two = try BenchShardLayout.partition(count: 10_000, recipients: names, map: BenchShardLayout.map(shards: 2, base: 30_000))
        #expect(two.map(\.count) == [5000, 5000])
        let four = try BenchShardLayout.partition(count: 10_000, recipients: names, map: BenchShardLayout.map(shards: 4, base: 30_000))
        #expect(four.map(\.count) == [2300, 2700, 2300, 2700])
        let eight = try BenchShardLayout.partition(count: 10_000, recipients: names, map: BenchShardLayout.map(shards: 8, base: 30_000))
        #expect(eight.map(\.count) == [1150, 1150, 1350, 1350, 1150, 1150, 1350, 1350])
        // bench-0 … bench-3 have slots 1103, 1868, 1208, 1979 (shard 1 of 4); bench-4 … 7: 848, 83, 935, 164 (shard 0).
        #expect(Array(four[1].prefix(4)) == [0, 1, 2, 3])
        #expect(Array(four[0].prefix(4)) == [4, 5, 6, 7])
        #expect(four.allSatisfy { $0 == $0.sorted() })
        #expect(Set(four.joined()).count == 10_000 && four.joined().allSatisfy { (0..<10_000).contains($0) })
    }

    @Test func oneRecipientOrOneShardKeepsThePlanInOneLane() throws {
        let map = BenchShardLayout.map(shards: 4, base: 30_000)
        let lanes = try BenchShardLayout.partition(count: 7, recipients: ["bench-5"], map: map)
        #expect(lanes == [[0, 1, 2, 3, 4, 5, 6], [], [], []])
        #expect(throws: BenchError.self) { try BenchShardLayout.partition(count: 7, recipients: [], map: map) }
        let partial = ShardMap(mapEpoch: 1, slotCount: 4096, shards: [map.shards[0]])
        #expect(throws: BenchError.self) { try BenchShardLayout.partition(count: 2, recipients: ["bench-0"], map: partial) }
    }

    @Test func warmUpRecipientsLandOnEachShard() throws {
        #expect(try BenchShardLayout.recipients(onEachShardOf: BenchShardLayout.map(shards: 4, base: 30_000), prefix: "bench-warmup")
            == ["bench-warmup-0", "bench-warmup-4", "bench-warmup-8", "bench-warmup-18"])
        #expect(try BenchShardLayout.recipients(onEachShardOf: BenchShardLayout.map(shards: 8, base: 30_000), prefix: "bench-warmup")
            == ["bench-warmup-1", "bench-warmup-0", "bench-warmup-4", "bench-warmup-5", "bench-warmup-9", "bench-warmup-8",
                "bench-warmup-18", "bench-warmup-19"])
    }

    @Test func requestBodiesCarryALanesIdsInOrder() {
        let shape = Ingestor.ReminderShape(recipient: { "bench-\($0 % 1000)" }, content: { _ in "{}" })
        let dues = [0.5, 1.0, 1.5, 2.0]
        let body = Ingestor.requestBody(requestId: "bench-1-0", ids: [3, 1][...], dues: dues, shape: shape)
        #expect(String(decoding: body, as: UTF8.self) == #"{"op":"schedule","requestId":"bench-1-0","reminders":["#
            + #"{"id":"3","recipient":"bench-3","content":{},"trigger":{"at":"1970-01-01T00:00:02.000Z"}},"#
            + #"{"id":"1","recipient":"bench-1","content":{},"trigger":{"at":"1970-01-01T00:00:01.000Z"}}]}"#)
        let one = Ingestor.requestBody(requestId: "bench-0", ids: [2][...], dues: dues, shape: shape)
        #expect(String(decoding: one, as: UTF8.self) == #"{"op":"schedule","requestId":"bench-0","reminder":"#
            + #"{"id":"2","recipient":"bench-2","content":{},"trigger":{"at":"1970-01-01T00:00:01.500Z"}}}"#)
    }

    @Test func recipientsDefaultToTodaysOnOneShardAndSpreadOnSeveral() {
        var settings = BenchSettings(workload: .w1, count: 10)
        #expect(settings.defaultRecipients == 1 && settings.recipientNames == ["bench"])
        settings.shards = 2
        #expect(settings.defaultRecipients == 1000 && settings.recipientNames.prefix(2) == ["bench-0", "bench-1"])
        settings.recipients = 3
        #expect(settings.recipientNames == ["bench-0", "bench-1", "bench-2"])
        let w4 = BenchSettings(workload: .w4, count: 10)
        #expect(w4.defaultRecipients == 1000 && w4.recipientNames.last == "user-999")
    }

    @Test func portBlocksAvoidTheEphemeralRange() throws {
        #expect(BenchShardLayout.ephemeralPortRange(parsing: "32768\t60999\n") == 32768..<61000)
        #expect(BenchShardLayout.ephemeralPortRange(parsing: "1024 1024") == 1024..<1025)
        for garbage in ["", "32768", "a b", "60999 32768", "1 2 3", "1 9223372036854775807"] {
            #expect(BenchShardLayout.ephemeralPortRange(parsing: garbage) == nil)
        }
        let base = try #require(BenchShardLayout.freeBase(count: 80))
        if let ephemeral = BenchShardLayout.ephemeralPortRange(), ephemeral.lowerBound > 20_100 {
            #expect(!ephemeral.overlaps(base..<(base + 80)))
        }
    }

    @Test func peaksArePerCoordinator() {
        #expect(RSSSampler.elementwiseMax([5, 1], [2, 7, 3]) == [5, 7, 3])
        #expect(RSSSampler.elementwiseMax([], []) == [])
        #expect(RSSSampler.residentBytes(of: 0) == nil && RSSSampler.proportionalBytes(of: -1) == nil)
    }
}
