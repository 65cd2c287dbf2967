import Foundation
import Testing
import ChimeTestSupport

@testable import ChimeRuntime

/// The `cluster` section: a shard map with per-shard bind addresses, selected by shard id.
@Suite struct ClusterConfigurationTests {
    static let twoShards = #"""
        {"cluster": {"mapEpoch": 3, "shards": [
          {"id": 0, "slots": [[0, 2047]],
           "endpoints": {"control": "tcp://c-0.chime:7700", "dispatch": "tcp://c-0.chime:7701", "results": "tcp://c-0.chime:7702",
                         "events": "tcp://c-0.chime:7703", "eventsIngest": "tcp://c-0.chime:7704"},
           "bind": {"control": "tcp://0.0.0.0:7700", "dispatch": "tcp://0.0.0.0:7701", "results": "tcp://0.0.0.0:7702",
                    "events": "tcp://0.0.0.0:7703", "eventsIngest": "tcp://0.0.0.0:7704"},
           "http": "0.0.0.0:7705"},
          {"id": 1, "slots": [[2048, 4095]],
           "endpoints": {"control": "tcp://127.0.0.1:7710", "dispatch": "tcp://127.0.0.1:7711", "results": "tcp://127.0.0.1:7712",
                         "events": "tcp://127.0.0.1:7713", "eventsIngest": "tcp://127.0.0.1:7714"}}]}}
        """#

    @Test func noClusterSectionMeansNoShards() throws {
        let configuration = try ChimeConfiguration.decode(Data("{}".utf8), source: "test")
        #expect(!configuration.cluster.isConfigured)
        #expect(configuration.cluster.slotCount == 4096)
    }

    @Test func aShardIsSelectedWithItsBindAndConnectAddresses() throws {
        let configuration = try ChimeConfiguration.decode(Data(Self.twoShards.utf8), source: "test")
        #expect(configuration.cluster.mapEpoch == 3)
        #expect(configuration.cluster.shards.map(\.id) == [0, 1])
        let zero = try configuration.selectingShard(0)
        #expect(zero.endpoints.control.bind == "tcp://0.0.0.0:7700")
        #expect(zero.endpoints.control.connect == "tcp://c-0.chime:7700")
        #expect(zero.endpoints.eventsIngest.bind == "tcp://0.0.0.0:7704")
        #expect(zero.http.listen == "0.0.0.0:7705")
        let one = try configuration.selectingShard(1)
        #expect(one.endpoints.results.bind == "tcp://127.0.0.1:7712")
        #expect(one.endpoints.results.connect == "tcp://127.0.0.1:7712")
        #expect(one.http.listen == "127.0.0.1:7705")
        #expect(throws: ConfigurationError.self) { try configuration.selectingShard(2) }
    }

    @Test func theMapRefreshIntervalDefaultsToFiveSecondsAndIsRangeChecked() throws {
        #expect(try ChimeConfiguration.decode(Data("{}".utf8), source: "test").cluster.mapRefreshSeconds == 5)
        let set = try ChimeConfiguration.decode(Data(#"{"cluster": {"mapRefreshSeconds": 0.5}}"#.utf8), source: "test")
        #expect(set.cluster.mapRefreshSeconds == 0.5)
        do {
            let zero = try ChimeConfiguration.decode(Data(#"{"cluster": {"mapRefreshSeconds": 0}}"#.utf8), source: "test")
            try zero.checkRanges(source: "test")
            Issue.record("a map refresh interval of 0 was accepted")
        } catch {
            #expect(error.message == "test: cluster.mapRefreshSeconds must be between 0.1 and 3600, not 0")
        }
    }

    @Test func anUnknownKeyInAShardIsRefusedByName() {
        let typo = Self.twoShards.replacingOccurrences(of: #""http": "0.0.0.0:7705""#, with: #""htp": "0.0.0.0:7705""#)
        do {
            _ = try ChimeConfiguration.decode(Data(typo.utf8), source: "test")
            Issue.record("decoded a shard with an unknown key")
        } catch {
            #expect(error.message.contains("unknown key htp"), "\(error.message)")
        }
    }

    /// Garbage: 300 seeded mutations of a valid cluster section (bytes replaced, dropped or
    /// duplicated) each decode to a configuration or a `ConfigurationError`, never a trap.
    @Test func mutatedClusterSectionsDecodeOrFailCleanly() {
        var random = SeededRandomNumberGenerator(seed: 26)
        let original = Array(Self.twoShards.utf8)
        let alphabet = Array(#"{}[]":,0123456789-eE.abcz \u"#.utf8)
        var decoded = 0
        var refused = 0
        for _ in 0..<300 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[index] = alphabet.randomElement(using: &random) ?? 0
                case 1: bytes.remove(at: index)
                default: bytes.insert(bytes[index], at: index)
                }
            }
            do {
                let configuration = try ChimeConfiguration.decode(Data(bytes), source: "fuzz")
                for shard in configuration.cluster.shards { _ = try? configuration.selectingShard(shard.id) }
                decoded += 1
            } catch {
                #expect(error.message.hasPrefix("fuzz: "), "\(error.message)")
                refused += 1
            }
        }
        #expect(decoded + refused == 300)
        #expect(refused > 0)
    }
}
