import Foundation
import Testing

@testable import ChimeRuntime

@Suite struct ConfigurationRangeTests {
    @Test(arguments: [
        (#"{"coordinator":{"leaseSeconds":0}}"#, "chime.json: coordinator.leaseSeconds must be between 0.1 and 86400, not 0"),
        (#"{"coordinator":{"maxAttempts":0}}"#, "chime.json: coordinator.maxAttempts must be between 1 and 1000, not 0"),
        (#"{"coordinator":{"maxRequestBytes":-1}}"#, "chime.json: coordinator.maxRequestBytes must be between 64 and 1073741824, not -1"),
        (#"{"coordinator":{"misfireThresholdSeconds":-5}}"#, "chime.json: coordinator.misfireThresholdSeconds must be between 0 and 316224000 (0: no limit), not -5"),
        (#"{"heartbeat":{"intervalMilliseconds":1}}"#, "chime.json: heartbeat.intervalMilliseconds must be between 10 and 60000, not 1"),
        (#"{"client":{"retries":1000}}"#, "chime.json: client.retries must be between 0 and 100, not 1000"),
        (#"{"worker":{"capacity":0}}"#, "chime.json: worker.capacity must be between 1 and 1000000, not 0"),
        (#"{"notifications":{"actionTimeLimitSeconds":0}}"#, "chime.json: notifications.actionTimeLimitSeconds must be between 0.001 and 3600, not 0"),
        (#"{"lingerMilliseconds":-1}"#, "chime.json: lingerMilliseconds must be between 0 and 60000, not -1"),
        (#"{"eventHighWaterMark":0}"#, "chime.json: eventHighWaterMark must be between 1 and 10000000, not 0"),
        (#"{"store":{"fsync":"sometimes"}}"#, "chime.json: store.fsync must be always, interval or never, not 'sometimes'"),
    ])
    func outOfRangeValuesAreRefusedNamingTheKeyAndRange(json: String, message: String) {
        #expect {
            _ = try ChimeConfiguration.decode(Data(json.utf8), source: "chime.json")
        } throws: { error in
            (error as? ConfigurationError)?.message == message
        }
    }

    @Test func theDefaultsAndTheBoundsThemselvesAreAccepted() throws {
        try ChimeConfiguration().checkRanges(source: "defaults")
        let bounds = #"{"coordinator":{"leaseSeconds":0.1,"maxAttempts":1000},"client":{"retries":0},"store":{"segmentBytes":64}}"#
        let configuration = try ChimeConfiguration.decode(Data(bounds.utf8), source: "bounds")
        #expect(configuration.coordinator.leaseSeconds == 0.1)
        #expect(configuration.client.retries == 0)
    }

    @Test func everyNumericKeyHasARange() throws {
        let defaults = try JSONSerialization.jsonObject(with: JSONEncoder().encode(ChimeConfiguration())) as? [String: Any] ?? [:]
        func numericKeys(_ object: [String: Any], prefix: String) -> [String] {
            object.flatMap { key, value -> [String] in
                let path = prefix.isEmpty ? key : "\(prefix).\(key)"
                if let nested = value as? [String: Any] { return numericKeys(nested, prefix: path) }
                guard let number = value as? NSNumber else { return [] }
                // JSONSerialization reads true/false as NSNumber too, of type "c".
                return String(cString: number.objCType) == "c" ? [] : [path]
            }
        }
        let ranged = Set(ChimeConfiguration().keyRanges.map(\.key))
        #expect(Set(numericKeys(defaults, prefix: "")) == ranged)
    }
}
