import ChimeCore
import Foundation

/// Prints µs per encode and decode and bytes per reminder for the binary form of a one-shot
/// reminder with a 100-byte body, beside `JSONEncoder` and `JSONDecoder` on the same reminder.
func runCodecBenchmark(iterations: Int) throws {
    let reminder = Reminder(
        id: "reminder-000001", recipient: "user-0001", content: Content(body: String(repeating: "a", count: 100)),
        trigger: Trigger(start: .instant(Date(timeIntervalSinceReferenceDate: 820_000_000.25))))
    let binary = reminder.binaryEncoded()
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
    let json = try encoder.encode(reminder)
    guard try Reminder(binary: binary) == reminder, try decoder.decode(Reminder.self, from: json) == reminder else {
        fatalError("the benchmark reminder does not round-trip")
    }
    print(
        "one-shot, 100-byte body: binary \(binary.count) bytes (array capacity \(binary.capacity)), JSON \(json.count) bytes"
    )

    // Summed results keep the optimizer from dropping the work.
    var checksum = 0
    let jsonIterations = max(1, iterations / 10)
    func report(_ name: String, _ count: Int, _ body: () throws -> Void) rethrows {
        _ = try seconds(body)  // warm-up
        let elapsed = try seconds(body)
        print(
            String(
                format: "%@ %8.3f µs", name.padding(toLength: 24, withPad: " ", startingAt: 0),
                elapsed / Double(count) * 1e6))
    }
    report("binary encode", iterations) {
        for _ in 0..<iterations { checksum &+= reminder.binaryEncoded().count }
    }
    try report("binary decode", iterations) {
        for _ in 0..<iterations { checksum &+= try Reminder(binary: binary).content.body?.utf8.count ?? 0 }
    }
    try report("binary recipient only", iterations) {
        for _ in 0..<iterations { checksum &+= try Reminder.binaryRecipient(in: binary[...]).rawValue.utf8.count }
    }
    try report("JSONEncoder encode", jsonIterations) {
        for _ in 0..<jsonIterations { checksum &+= try encoder.encode(reminder).count }
    }
    try report("JSONDecoder decode", jsonIterations) {
        for _ in 0..<jsonIterations {
            checksum &+= try decoder.decode(Reminder.self, from: json).content.body?.utf8.count ?? 0
        }
    }
    print("checksum \(checksum)")
}
