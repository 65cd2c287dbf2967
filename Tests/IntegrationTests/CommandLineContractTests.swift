import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// The CLI contract of the README: exit 2 for usage errors and 1 for runtime errors, one JSON
/// document on stdout with `--json` (errors included), did-you-mean, a fast unavailable error.
@Suite(.serialized) struct CommandLineContractTests {
    func chime(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try LocalCluster.run(binary: LocalCluster.locateBinary(), arguments, timeout: 20)
    }

    /// A configuration file with only the built-in defaults (no ./config/chime.json).
    func defaultsFile(_ json: String = "{}") throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        try Data(json.utf8).write(to: URL(fileURLWithPath: directory.path("c.json")))
        return (directory, directory.path("c.json"))
    }

    @Test(arguments: [
        (["shedule"], "chime: unknown command 'shedule' (did you mean 'schedule'?); see 'chime --help'\n"),
        (["schedule", "--recipent", "a"], "chime: unknown option --recipent for 'schedule' (did you mean '--recipient'?); see 'chime schedule --help'\n"),
        (["ctl", "stauts"], "chime: unknown ctl command 'stauts' (did you mean 'status'?); expected status, workers, stats, ping, map, dead-letters, retry, delete, snapshot, compact or store\n"),
        (["subscribe", "--topic", "bagde"], "chime: --topic must be fire, badge or action, not 'bagde' (did you mean 'badge'?)\n"),
        (["schedule", "--recipient", "a", "--in", "5x"], "chime: --in: '5x' is not a duration such as 90s, 5m, 1h30m or 500ms: unknown unit 'x'; use w, d, h, m, s or ms\n"),
        (["schedule", "--recipient", "a", "--in", "5s", "--badge", "x"], "chime: --badge must be an integer or +1, not 'x'\n"),
        (["schedule", "--recipient", "a", "--at", "tomorrow"], "chime: --at: 'tomorrow' is not an RFC 3339 date-time such as 2026-12-24T08:00:00Z\n"),
        (["subscribe", "--timeout", "soon"], "chime: --timeout: 'soon' is not a duration such as 90s, 5m, 1h30m or 500ms: expected a number\n"),
        (["version", "extra"], "chime: version takes no arguments\n"),
        (["ctl", "retry", "--all", "x@2026-01-01T00:00:00.000Z"], "chime: ctl retry --all takes no FIRING_ID\n"),
        // A flag's value is never the next flag.
        (["list", "--cursor"], "chime: --cursor needs a value (C)\n"),
        (["list", "--limit", "--all-pages"], "chime: --limit needs a value (N); a value starting with -- is written --limit=N\n"),
        (["schedule", "--recipient", "--in", "5s"], "chime: --recipient needs a value (R); a value starting with -- is written --recipient=R\n"),
        (["ctl", "dead-letters", "--cursor", "--all-pages"], "chime: --cursor needs a value (C); a value starting with -- is written --cursor=C\n"),
        // Issue 42: a bad zone is a usage error with --at as with --in.
        (["schedule", "--recipient", "a", "--at", "2026-12-24T09:00", "--tz", "Mars/Olympus"], "chime: --tz: 'Mars/Olympus' is not an IANA time zone such as Europe/Berlin or UTC\n"),
        (["schedule", "--recipient", "a", "--in", "5m", "--tz", "Mars/Olympus"], "chime: --tz: 'Mars/Olympus' is not an IANA time zone such as Europe/Berlin or UTC\n"),
    ])
    func usageErrorsExitTwoWithSuggestions(arguments: [String], message: String) throws {
        let result = try chime(arguments)
        #expect(result.status == 2)
        #expect(result.error.hasPrefix(message.dropLast()), "\(result.error)")
        #expect(result.output.isEmpty)
    }

    @Test(arguments: [
        (["shedule", "--json"], "usage"),
        (["schedule", "--recipient", "a", "--in", "5x", "--json"], "usage"),
        (["list", "--colour", "--json"], "usage"),
        (["list", "--cursor", "--json"], "usage"),
    ])
    func usageErrorsWithJSONAreOneDocumentOnStdout(arguments: [String], code: String) throws {
        let result = try chime(arguments)
        #expect(result.status == 2)
        #expect(result.error.isEmpty)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(document["ok"] as? Bool == false)
        let error = try #require(document["error"] as? [String: Any])
        #expect(error["code"] as? String == code)
        #expect((error["message"] as? String)?.isEmpty == false)
    }

    @Test func noCoordinatorFailsWithinASecondWithTheEndpointAndAHint() throws {
        let (directory, config) = try defaultsFile()
        _ = directory
        let base = try LocalCluster.freePortBase()
        let started = Date()
        let result = try chime(["ctl", "status", "--config", config, "--port-base", String(base)])
        let seconds = Date().timeIntervalSince(started)
        print(String(format: "chime ctl status with no coordinator failed after %.2f s", seconds))
        #expect(result.status == 1)
        #expect(result.error == "chime: unavailable: nothing is listening at tcp://127.0.0.1:\(base) (connection refused); is a coordinator running? start one with 'chime up'\n")
        #expect(seconds < 1.5)
        let json = try chime(["list", "--json", "--config", config, "--port-base", String(base)])
        #expect(json.status == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(document["ok"] as? Bool == false)
        #expect((document["error"] as? [String: Any])?["code"] as? String == "unavailable")
    }

    @Test func outOfRangeConfigurationIsARuntimeErrorNamingTheKey() throws {
        let (directory, config) = try defaultsFile(#"{"coordinator":{"leaseSeconds":0}}"#)
        _ = directory
        let result = try chime(["ctl", "status", "--config", config, "--json"])
        #expect(result.status == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let error = try #require(document["error"] as? [String: Any])
        #expect(error["code"] as? String == "configuration")
        #expect(error["message"] as? String == "\(config): coordinator.leaseSeconds must be between 0.1 and 86400, not 0")
    }

    @Test func versionHonoursJSON() throws {
        let result = try chime(["version", "--json"])
        #expect(result.status == 0)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(document["ok"] as? Bool == true)
        let version = try #require(document["result"] as? [String: Any])
        #expect((version["version"] as? String)?.isEmpty == false)
        #expect((version["libzmq"] as? String)?.hasPrefix("4.") == true)
        #expect(version["curve"] is Bool)
    }

    @Test func serverErrorsWithJSONAreOneDocumentAndSubscribeCountHoldsWithSince() throws {
        try withLocalCluster(workers: 1) { cluster in
            let missing = try cluster.run(["ack", "nope@2026-01-01T00:00:00.000Z", "--json"])
            #expect(missing.status == 1)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(missing.output.utf8)) as? [String: Any])
            #expect(document["ok"] as? Bool == false)
            #expect((document["error"] as? [String: Any])?["code"] as? String == "not_found")

            for index in 0..<3 {
                #expect(try cluster.run(["schedule", "--id", "c\(index)", "--recipient", "carol", "--in", "0s"]).status == 0)
            }
            let three = try cluster.run(["subscribe", "--since", "0", "--count", "3", "--json", "--timeout", "20s"])
            #expect(three.status == 0, "\(three.error)")
            let one = try cluster.run(["subscribe", "--since", "0", "--count", "1", "--json", "--timeout", "10s"])
            #expect(one.status == 0, "\(one.error)")
            #expect(one.output.split(separator: "\n").count == 1)
            let event = try WireCodec().decode(FireEvent.self, from: Data(one.output.utf8))
            #expect(event.seq == 1)
        }
    }

    @Test func subscribeToADeadEndpointSaysSoOnStandardError() throws {
        let (directory, config) = try defaultsFile()
        _ = directory
        let base = try LocalCluster.freePortBase()
        let started = Date()
        let result = try chime(["subscribe", "--config", config, "--port-base", String(base), "--count", "1", "--timeout", "3s"])
        let lines = result.error.split(separator: "\n").map(String.init)
        #expect(result.status == 1)
        #expect(lines == [
            "chime: waiting for events at tcp://127.0.0.1:\(base + 3), but no coordinator answers: nothing is listening at tcp://127.0.0.1:\(base) (connection refused); is a coordinator running? start one with 'chime up'",
            "chime: timeout: timed out after 0 of 1 events",
        ])
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// Issue 42's small items against a running cluster: `cancel` names unknown ids and exits
    /// 1, `schedule --tz` echoes the local time, `store verify` says the store is in use.
    @Test func cancelOfUnknownIdsScheduleInAZoneAndVerifyOfALiveStore() throws {
        try withLocalCluster(workers: 1, coordinatorArguments: ["--store", "store"]) { cluster in
            let scheduled = try cluster.run([
                "schedule", "--id", "berlin", "--recipient", "ann", "--at", "2030-06-01T09:00", "--tz", "Europe/Berlin",
            ])
            #expect(scheduled.status == 0, "\(scheduled.error)")
            #expect(scheduled.output.hasPrefix(
                "scheduled berlin [pending]: next fire 2030-06-01T07:00:00.000Z = 2030-06-01T09:00:00 Europe/Berlin ("),
                "\(scheduled.output)")

            let mixed = try cluster.run(["cancel", "berlin", "nosuchid", "--recipient", "ann"])
            #expect(mixed.status == 1)
            #expect(mixed.output.hasPrefix("cancelled 1 in "), "\(mixed.output)")
            #expect(mixed.output.hasSuffix(" s: berlin\n"), "\(mixed.output)")
            #expect(mixed.error == "chime: no reminder nosuchid of ann\n")

            let missing = try cluster.run(["cancel", "nosuchid", "other", "nosuchid", "--json"])
            #expect(missing.status == 1)
            #expect(missing.error == "chime: no reminder nosuchid, other\n")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(missing.output.utf8)) as? [String: Any])
            #expect(document["ok"] as? Bool == true)
            #expect((document["result"] as? [String: Any])?["cancelled"] as? [String] == [])

            let store = cluster.directory.path("store")
            let pid = try #require(cluster.pid(of: "coordinator"))
            let verified = try LocalCluster.run(binary: cluster.binary, ["store", "verify", store])
            #expect(verified.status == 0, "\(verified.output)\(verified.error)")
            let first = verified.output.split(separator: "\n").first.map(String.init)
            #expect(first == "store \(store): clean (in use by pid \(pid): a running coordinator may write past what was read)")
            let json = try LocalCluster.run(binary: cluster.binary, ["store", "verify", store, "--json"])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            #expect(report["inUse"] as? Bool == true)
            #expect(report["pid"] as? Int == Int(pid))
        }
    }
}
