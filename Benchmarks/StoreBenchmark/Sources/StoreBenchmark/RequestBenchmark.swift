import ChimeCore
import ChimeWire
import Foundation

/// Prints µs per reminder for decoding a 1,000-reminder `schedule` request with `JSONDecoder`
/// (`WireCodec.decode`), with `ControlRequest(fastJSON:)`, and through
/// `WireCodec.decodeRequest` (fast path first), for two shapes: what `chime bench --workload W4`
/// sends (`Ingestor.requestBody`: id, recipient, a 100-byte body, an `at` instant) and a richer
/// reminder (title, sound, badge, userInfo, a floating start with an RRULE, remind-before, nag).
func runRequestBenchmark(iterations: Int) throws {
    let codec = WireCodec()
    let body = String(repeating: "Chime benchmark body. ", count: 5).prefix(100)
    let shapes: [(name: String, reminder: (Int) -> String)] = [
        (
            "W4 one-shot",
            { id in
                let at = RFC3339.format(Date(timeIntervalSince1970: 1_800_000_000 + Double(id) * 0.037))
                return #"{"id":"\#(id)","recipient":"user-\#(id % 1000)","content":{"body":"\#(body)"},"#
                    + #""trigger":{"at":"\#(at)"}}"#
            }
        ),
        (
            "rich",
            { id in
                #"{"id":"standup-\#(id)","recipient":"team-\#(id % 50)","content":{"title":"Stand-up \u2615","#
                    + #""body":"Room 4, \"north\" wing\n\#(body)","sound":"default","badge":"+1","#
                    + #""userInfo":{"room":4,"tags":["daily","team"],"score":0.75,"remote":false}},"#
                    + #""trigger":{"at":"2026-12-24T09:00:00","timeZone":"Europe/Berlin","#
                    + #""rrule":"FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR","before":"5m","misfire":"skip"},"#
                    + #""nag":{"count":3,"interval":600}}"#
            }
        ),
    ]
    for shape in shapes {
        let text = #"{"op":"schedule","requestId":"bench-0","reminders":["#
            + (0..<1000).map(shape.reminder).joined(separator: ",") + "]}"
        let data = Data(text.utf8)
        let expected = try codec.decode(ControlRequest.self, from: data)
        guard ControlRequest(fastJSON: data) == expected else {
            fatalError("the fast path misreads the \(shape.name) request")
        }
        print("\(shape.name): 1,000 reminders, \(data.count) bytes")

        // Summed counts keep the optimizer from dropping the work.
        var checksum = 0
        func reminderCount(_ request: ControlRequest?) -> Int {
            if case .schedule(let reminders)? = request?.command { return reminders.count }
            return 0
        }
        // The fastest of five rounds: the least disturbed by other work on the machine.
        func report(_ name: String, _ body: () throws -> Void) rethrows -> Double {
            try body()  // warm-up
            var elapsed = Double.infinity
            for _ in 0..<5 { elapsed = min(elapsed, try seconds(body)) }
            let microsecondsPerReminder = elapsed / Double(iterations * 1000) * 1e6
            print(
                String(
                    format: "  %@ %8.3f µs per reminder", name.padding(toLength: 28, withPad: " ", startingAt: 0),
                    microsecondsPerReminder))
            return microsecondsPerReminder
        }
        let slow = try report("JSONDecoder (decode)") {
            for _ in 0..<iterations { checksum &+= reminderCount(try codec.decode(ControlRequest.self, from: data)) }
        }
        let fast = report("ControlRequest(fastJSON:)") {
            for _ in 0..<iterations { checksum &+= reminderCount(ControlRequest(fastJSON: data)) }
        }
        _ = try report("WireCodec.decodeRequest") {
            for _ in 0..<iterations { checksum &+= reminderCount(try codec.decodeRequest(data)) }
        }
        print(String(format: "  speed-up %.1f×, checksum %d", slow / fast, checksum))
    }
}
