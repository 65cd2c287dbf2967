import Foundation
import Testing

@testable import ChimeCore

/// Median time of one `nextOccurrence(after:)` for common rules. Prints figures and checks
/// only that the walks are right: speed depends on the machine and build (this is a debug
/// build under `swift test`).
@Suite struct RecurrenceBenchmarkTests {
    static let rules: [(name: String, rrule: String, start: String)] = [
        ("daily", "FREQ=DAILY", "2026-01-01T09:00"),
        ("weekly BYDAY=MO,WE,FR", "FREQ=WEEKLY;BYDAY=MO,WE,FR", "2026-01-02T09:00"),
        ("monthly BYDAY=-1FR", "FREQ=MONTHLY;BYDAY=-1FR", "2026-01-30T09:00"),
        ("yearly", "FREQ=YEARLY", "2026-03-29T02:30"),
        ("every 15 minutes", "FREQ=MINUTELY;INTERVAL=15", "2026-01-01T09:00"),
    ]

    /// The median duration of `calls` successive `nextOccurrence(after:)` calls.
    static func medianNextOccurrence(of recurrence: Recurrence, calls: Int) -> Duration {
        let clock = ContinuousClock()
        var durations: [Duration] = []
        var current = recurrence.firstOccurrence(onOrAfter: .distantPast)
        for _ in 0..<calls {
            guard let occurrence = current else { break }
            let started = clock.now
            current = recurrence.nextOccurrence(after: occurrence)
            durations.append(clock.now - started)
        }
        return durations.sorted()[durations.count / 2]
    }

    @Test func printsTheMedianTimeOfNextOccurrence() throws {
        var lines: [String] = []
        for rule in Self.rules {
            let recurrence = try makeRuleRecurrence(rule.rrule, from: rule.start, in: "Europe/Berlin")
            let median = Self.medianNextOccurrence(of: recurrence, calls: 300)
            let microseconds = Double(median.components.attoseconds) / 1e12 + Double(median.components.seconds) * 1e6
            lines.append("\(rule.name): \(String(format: "%.1f", microseconds)) µs")
            #expect(firstOccurrences(of: recurrence, count: 300).count == 300)
        }
        print("median nextOccurrence (Europe/Berlin, 300 calls each): " + lines.joined(separator: "; "))
    }
}
