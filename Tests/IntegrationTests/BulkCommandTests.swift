import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// `schedule --file` and `import` over real processes: streamed input, chunked requests, a
/// summary line, item errors by index. 10,000 items by default; `CHIME_BULK_COUNT=100000`
/// runs the issue's 100k form (debug build: about a minute each on a loaded 2-core machine).
@Suite(.serialized) struct BulkCommandTests {
    static let count = Int(ProcessInfo.processInfo.environment["CHIME_BULK_COUNT"] ?? "") ?? 10_000

    func pendingCount(_ cluster: LocalCluster) throws -> Int {
        let status = try cluster.run(["ctl", "status", "--json"])
        let reply = try WireCodec().decode(ControlReply<StatusReport>.self, from: Data(status.output.utf8))
        return reply.result?.reminders["pending"] ?? -1
    }

    /// Runs `arguments` against the cluster, timing it.
    func timed(_ cluster: LocalCluster, _ arguments: [String]) throws -> (status: Int32, output: String, error: String, seconds: Double) {
        let started = Date()
        let result = try cluster.run(arguments, timeout: 600)
        return (result.status, result.output, result.error, Date().timeIntervalSince(started))
    }

    @Test func scheduleFileAndImportSendManyItemsInChunksWithASummary() throws {
        try withLocalCluster(workers: 0, configuration: #"{"store":{"fsync":"never"}}"#) { cluster in
            let file = cluster.directory.path("reminders.json")
            var text = "["
            for index in 0..<Self.count {
                if index > 0 { text += ",\n" }
                text += #"{"id":"bulk-\#(index)","recipient":"u\#(index % 50)","content":{"title":"Reminder \#(index)"},"trigger":{"at":"2030-01-01T00:00:00Z"}}"#
            }
            try Data((text + "]").utf8).write(to: URL(fileURLWithPath: file))
            let scheduled = try timed(cluster, ["schedule", "--file", file, "--chunk", "1000"])
            #expect(scheduled.status == 0, "\(scheduled.error)")
            #expect(scheduled.output.hasPrefix("scheduled \(Self.count), failed 0 in "), "\(scheduled.output)")
            #expect(scheduled.output.split(separator: "\n").count == 1)
            print(String(format: "schedule --file: %d reminders in %.1f s", Self.count, scheduled.seconds))
            #expect(try pendingCount(cluster) == Self.count)

            var calendar = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//chime tests//EN\r\n"
            for index in 0..<Self.count {
                calendar += "BEGIN:VEVENT\r\nUID:ev-\(index)\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Event \(index)\r\n"
                    + "DTSTART:20300102T\(String(format: "%02d%02d", (index / 60) % 24, index % 60))00Z\r\n"
                    + "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n"
            }
            calendar += "END:VCALENDAR\r\n"
            let ics = cluster.directory.path("events.ics")
            try Data(calendar.utf8).write(to: URL(fileURLWithPath: ics))
            let imported = try timed(cluster, ["import", ics, "--recipient", "bob", "--json"])
            #expect(imported.status == 0, "\(imported.error)")
            #expect(imported.error.isEmpty, "with --json nothing goes to stderr: \(imported.error.prefix(300))")
            #expect(imported.output.split(separator: "\n").count == 1)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(imported.output.utf8)) as? [String: Any])
            let result = try #require(document["result"] as? [String: Any])
            #expect(document["ok"] as? Bool == true)
            #expect(result["scheduled"] as? Int == Self.count)
            #expect(result["failed"] as? Int == 0)
            print(String(format: "import: %d events in %.1f s", Self.count, imported.seconds))
            #expect(try pendingCount(cluster) == 2 * Self.count)
        }
    }

    @Test func itemErrorsAreReportedByIndexAndTheRestIsScheduled() throws {
        try withLocalCluster(workers: 0) { cluster in
            let lines = [
                #"{"id":"g0","recipient":"a","trigger":{"in":"1h"}}"#,
                #"{"id":"g1","recipient":"a","trigger":{"at":"2030-01-01T00:00:00Z"},"bogus":1}"#,
                #"{"id":"g2","recipient":"a","trigger":{"in":"5x"}}"#,
                #"{"id":"g3","recipient":"a","trigger":{"at":}}"#,
                #"{"id":"g4","recipient":"a","trigger":{"at":"2030-01-01T00:00:00Z"}}"#,
                // Read as strictly as the coordinator reads it, though the client rewrites `in`.
                #"{"id":"g5","recipient":"a","recipient":"b","trigger":{"in":"1h"}}"#,
            ]
            let file = cluster.directory.path("mixed.ndjson")
            try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
            let human = try cluster.run(["schedule", "--file", file])
            #expect(human.status == 1)
            #expect(human.output.hasPrefix("scheduled 2, failed 4 in "))
            // Items refused locally are reported at once, the coordinator's at the chunk's reply.
            let errors = human.error.split(separator: "\n").filter { $0.hasPrefix("chime: item ") }.sorted()
            #expect(errors == [
                #"chime: item 1: unknown_field: bogus: unknown field "bogus""#,
                "chime: item 2: invalid_argument: trigger.in: '5x' is not a duration such as 90s, 5m, 1h30m or 500ms: unknown unit 'x'; use w, d, h, m, s or ms",
                "chime: item 3: malformed: the message is not valid JSON",
                #"chime: item 5: malformed: the key "recipient" appears twice in one object"#,
            ])
            let json = try cluster.run(["schedule", "--file", file, "--json", "--chunk", "2"])
            #expect(json.status == 1)
            #expect(json.error.isEmpty, "with --json no item line, progress or summary on stderr: \(json.error)")
            #expect(json.output.split(separator: "\n").count == 1)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            #expect(document["ok"] as? Bool == false)
            #expect((document["error"] as? [String: Any])?["code"] as? String == "partial")
            let result = try #require(document["result"] as? [String: Any])
            #expect(result["scheduled"] as? Int == 2)
            #expect((result["errors"] as? [[String: Any]])?.compactMap { $0["index"] as? Int } == [1, 2, 3, 5])
            let cancelled = try cluster.run(["cancel", "--recipient", "a", "--json"])
            #expect(cancelled.status == 0 && cancelled.error.isEmpty)
            let cancelReply = try WireCodec().decode(ControlReply<CancelResult>.self, from: Data(cancelled.output.utf8))
            #expect(cancelReply.result?.cancelled == ["g0", "g4"])

            let notJSON = cluster.directory.path("broken.json")
            try Data("[{}, 3]".utf8).write(to: URL(fileURLWithPath: notJSON))
            let broken = try cluster.run(["schedule", "--file", notJSON])
            #expect(broken.status == 2)
            #expect(broken.error == "chime: \(notJSON): unexpected '3' at line 1, column 6 (byte 6); expected {\n")
        }
    }
}
