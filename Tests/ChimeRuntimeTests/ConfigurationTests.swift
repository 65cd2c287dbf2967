import Foundation
import Testing

@testable import ChimeRuntime

@Suite struct ConfigurationTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func emptyFileGivesTheDocumentedDefaults() throws {
        let configuration = try ChimeConfiguration.decode(Data("{}".utf8), source: "test")
        #expect(configuration == ChimeConfiguration())
        #expect(configuration.endpoints.control.connect == "tcp://127.0.0.1:7700")
        #expect(configuration.coordinator.leaseSeconds == 10)
        #expect(configuration.heartbeat.intervalMilliseconds == 1000)
    }

    @Test func nestedKeysMergeOverTheDefaults() throws {
        let configuration = try ChimeConfiguration.decode(
            Data(#"{"coordinator":{"maxAttempts":9},"endpoints":{"events":{"bind":"tcp://0.0.0.0:1","connect":"tcp://h:1"}}}"#.utf8),
            source: "test")
        #expect(configuration.coordinator.maxAttempts == 9)
        #expect(configuration.coordinator.leaseSeconds == 10)
        #expect(configuration.endpoints.events.connect == "tcp://h:1")
        #expect(configuration.endpoints.control.connect == "tcp://127.0.0.1:7700")
    }

    @Test(arguments: [
        (#"{"coordinator":{"leaseSecond":3}}"#, "test: unknown key coordinator.leaseSecond"),
        (#"{"heartbeat":5}"#, "test: heartbeat must be a JSON object"),
        ("nope", "test: not valid JSON"),
        (#"{"coordinator":{"maxAttempts":"five"}}"#, "test: wrong type at coordinator.maxAttempts"),
    ])
    func badFilesGiveOneLineErrors(json: String, message: String) {
        #expect {
            _ = try ChimeConfiguration.decode(Data(json.utf8), source: "test")
        } throws: { error in
            (error as? ConfigurationError)?.message.hasPrefix(message) == true
        }
    }

    @Test func portBaseMovesAllFiveEndpoints() {
        var configuration = ChimeConfiguration()
        configuration.useLoopbackPorts(from: 31000)
        let ports = [configuration.endpoints.control, configuration.endpoints.dispatch, configuration.endpoints.results,
                     configuration.endpoints.events, configuration.endpoints.eventsIngest].map(\.bind)
        #expect(ports == (31000...31004).map { "tcp://127.0.0.1:\($0)" })
    }

    @Test(arguments: ["config/chime.json", "deploy/compose/chime.json"])
    func shippedConfigurationFilesLoad(path: String) throws {
        _ = try ChimeConfiguration.load(from: Self.repositoryRoot.appendingPathComponent(path))
    }

    @Test func kubernetesConfigMapUsesKnownKeys() throws {
        let manifest = try String(contentsOf: Self.repositoryRoot.appendingPathComponent("deploy/kubernetes/chime.yaml"), encoding: .utf8)
        let start = try #require(manifest.range(of: "chime.json: |\n"))
        let end = try #require(manifest.range(of: "\n---", range: start.upperBound..<manifest.endIndex))
        let json = String(manifest[start.upperBound..<end.lowerBound])
        let configuration = try ChimeConfiguration.decode(Data(json.utf8), source: "chime.yaml")
        #expect(configuration.endpoints.control.connect == "tcp://chime-coordinator:7700")
    }
}

@Suite struct LimitConfigurationTests {
    @Test func defaultsLimitRemotePeersOnlyAndBoundSubscriberQueues() throws {
        let configuration = try ChimeConfiguration.decode(Data("{}".utf8), source: "test")
        #expect(configuration.control.rateLimit.requestsPerSecond == 100)
        #expect(configuration.control.rateLimit.burst == 200)
        #expect(configuration.control.rateLimit.applyToLoopback == false)
        #expect(configuration.control.rateLimit.maxPeers == 4096)
        #expect(configuration.events.subscriberQueueBytes == 64 * 1024 * 1024)
        #expect(configuration.events.subscriberHighWaterMark == 8065)
    }

    @Test(arguments: [
        (#"{"control":{"rateLimit":{"requestsPerSecond":-1}}}"#, "test: control.rateLimit.requestsPerSecond must be between 0 and 1000000 (0: off), not -1"),
        (#"{"control":{"rateLimit":{"burst":0}}}"#, "test: control.rateLimit.burst must be between 1 and 1000000, not 0"),
        (#"{"control":{"rateLimit":{"maxPeers":2000000}}}"#, "test: control.rateLimit.maxPeers must be between 1 and 1000000, not 2000000"),
        (#"{"events":{"subscriberQueueBytes":1024}}"#, "test: events.subscriberQueueBytes must be between 65536 and 4294967296, not 1024"),
        (#"{"control":{"rateLimit":{"burts":3}}}"#, "test: unknown key control.rateLimit.burts"),
    ])
    func limitsOutOfRangeAreRefused(json: String, message: String) {
        #expect {
            _ = try ChimeConfiguration.decode(Data(json.utf8), source: "test")
        } throws: { error in
            (error as? ConfigurationError)?.message == message
        }
    }

    @Test func aByteBudgetBecomesAHighWaterMarkInMessagesOfTheLargestEvent() throws {
        // 1 MiB / (8 KiB + 128 bytes of frames): a queue of the largest events stays within budget.
        let configuration = try ChimeConfiguration.decode(Data(#"{"events":{"subscriberQueueBytes":1048576}}"#.utf8), source: "test")
        #expect(configuration.events.subscriberHighWaterMark == 126)
        let small = try ChimeConfiguration.decode(
            Data(#"{"events":{"subscriberQueueBytes":1048576,"maxEventBytes":1024}}"#.utf8), source: "test")
        #expect(small.events.subscriberHighWaterMark == 910)
    }
}
