import Foundation
import Testing

@testable import ChimeCore

/// One recurrence drawn and expanded by `Tests/interop/rrule_oracle.py` (python-dateutil),
/// with the occurrences Chime must produce.
struct OracleCase: Codable, Sendable {
    var id: Int
    var zone: String
    var start: String
    var rrule: String
    var monthEnd: String
    var rdates: [String]
    var exdates: [String]
    /// The last instant compared (UTC); at most 20 occurrences are.
    var horizon: String
    var expected: [String]?
    var probe: String?
    var probeExpected: String?

    /// The case as one line of JSON, for the record and for `--expand`.
    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The recurrence Chime builds for this case.
    func makeRecurrence() throws -> Recurrence {
        try Recurrence(
            start: .wallClock(try LocalDateTime(parsing: start), zoneIdentifier: zone),
            recurrenceRule: rrule.isEmpty ? nil : try RecurrenceRule(parsing: rrule),
            recurrenceDates: try rdates.map(RecurrenceDateTime.init(parsing:)),
            exceptionDates: try exdates.map(RecurrenceDateTime.init(parsing:)),
            monthEnd: MonthEndPolicy(rawValue: monthEnd) ?? .skip)
    }
}

/// What comparing one case found.
struct OracleComparison {
    /// Occurrences and probes compared.
    var comparedCount = 0
    /// The first difference, described; `nil` when Chime agrees.
    var mismatch: String?
}

/// Runs `Tests/interop/rrule_oracle.py` and compares Chime with its answers.
enum RRuleOracle {
    static let scriptURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("interop/rrule_oracle.py")

    /// Whether `python3` with `dateutil` can run here.
    static let isAvailable: Bool = {
        (try? run(["-c", "import dateutil.rrule, zoneinfo"], input: nil)) != nil
    }()

    /// `count` cases drawn with `seed`.
    static func generate(seed: Int, count: Int) throws -> [OracleCase] {
        try decode(run([scriptURL.path, "--seed", String(seed), "--count", String(count)], input: nil))
    }

    /// The oracle's expansion of hand-made (or simplified) cases.
    static func expand(_ cases: [OracleCase]) throws -> [OracleCase] {
        let input = cases.map(\.json).joined(separator: "\n") + "\n"
        return try decode(run([scriptURL.path, "--expand"], input: Data(input.utf8)))
    }

    /// Compares Chime's occurrences, the probe, and the index contract with the oracle's.
    static func compare(_ oracleCase: OracleCase) -> OracleComparison {
        var comparison = OracleComparison()
        do {
            let recurrence = try oracleCase.makeRecurrence()
            let expected = oracleCase.expected ?? []
            let horizon = try RFC3339.parseInstant(oracleCase.horizon)
            let found = recurrence.occurrences(onOrAfter: .distantPast, through: horizon, limit: 20)
            let actual = found.map { utcText($0.instant) }
            comparison.comparedCount = max(actual.count, expected.count)
            if actual != expected {
                let at = zip(actual, expected).prefix { $0 == $1 }.count
                comparison.mismatch =
                    "occurrence #\(at): expected \(at < expected.count ? expected[at] : "none"), got \(at < actual.count ? actual[at] : "none") (expected \(expected.count), got \(actual.count))"
                return comparison
            }
            for (earlier, later) in zip(found, found.dropFirst()) where earlier.index >= later.index {
                comparison.mismatch = "indices do not increase: \(earlier.index) then \(later.index)"
                return comparison
            }
            // The index contract, on the first few (each check is a full lookup).
            if let wrong = found.prefix(3).first(where: { recurrence.occurrence(at: $0.index) != $0.instant }) {
                comparison.mismatch = "occurrence(at: \(wrong.index)) is not \(utcText(wrong.instant))"
                return comparison
            }
            if let probe = oracleCase.probe {
                comparison.comparedCount += 1
                let answer = recurrence.firstOccurrence(onOrAfter: try RFC3339.parseInstant(probe))
                if answer.map({ utcText($0.instant) }) != oracleCase.probeExpected {
                    comparison.mismatch =
                        "firstOccurrence(onOrAfter: \(probe)) expected \(oracleCase.probeExpected ?? "none"), got \(answer.map { utcText($0.instant) } ?? "none")"
                }
            }
        } catch {
            comparison.mismatch = "Chime refused it: \(error)"
        }
        return comparison
    }

    /// A smaller case that still mismatches: rule parts, dates and options are dropped one
    /// at a time, keeping each drop the oracle and Chime still disagree on.
    static func minimize(_ failing: OracleCase) -> OracleCase {
        var smallest = failing
        for _ in 0..<12 {
            let candidates = simplifications(of: smallest)
            guard !candidates.isEmpty, let expanded = try? expand(candidates),
                let smaller = expanded.first(where: { isStillMismatched(compare($0).mismatch) })
            else { return smallest }
            smallest = smaller
        }
        return smallest
    }

    /// A simplification counts when Chime and the oracle still disagree on a rule Chime
    /// accepts (dropping a part can make a rule invalid, which is no finding).
    private static func isStillMismatched(_ mismatch: String?) -> Bool {
        guard let mismatch else { return false }
        return !mismatch.hasPrefix("Chime refused")
    }

    private static func simplifications(of oracleCase: OracleCase) -> [OracleCase] {
        var result: [OracleCase] = []
        let parts = oracleCase.rrule.split(separator: ";").map(String.init)
        for (index, part) in parts.enumerated() where !part.hasPrefix("FREQ=") {
            var simpler = oracleCase
            var remaining = parts
            remaining.remove(at: index)
            simpler.rrule = remaining.joined(separator: ";")
            result.append(simpler)
            if let equals = part.firstIndex(of: "="), part[equals...].contains(",") {
                var fewer = oracleCase
                var shortened = parts
                shortened[index] = String(part[...equals]) + part[part.index(after: equals)...].split(separator: ",").dropFirst().joined(separator: ",")
                fewer.rrule = shortened.joined(separator: ";")
                result.append(fewer)
            }
        }
        for index in oracleCase.rdates.indices {
            var simpler = oracleCase
            simpler.rdates.remove(at: index)
            result.append(simpler)
        }
        for index in oracleCase.exdates.indices {
            var simpler = oracleCase
            simpler.exdates.remove(at: index)
            result.append(simpler)
        }
        if oracleCase.monthEnd != "skip" {
            var simpler = oracleCase
            simpler.monthEnd = "skip"
            result.append(simpler)
        }
        return result.map { simplified in
            var cleared = simplified
            (cleared.expected, cleared.probe, cleared.probeExpected) = (nil, nil, nil)
            return cleared
        }
    }

    static func utcText(_ instant: Date) -> String {
        String(RFC3339.format(instant).prefix(19)) + "Z"
    }

    private static func decode(_ output: Data) throws -> [OracleCase] {
        let decoder = JSONDecoder()
        return try output.split(separator: UInt8(ascii: "\n")).map { try decoder.decode(OracleCase.self, from: Data($0)) }
    }

    /// How long one oracle run may take before it is stopped (10,000 rules take about 12 s).
    static let deadline: TimeInterval = 180

    /// Runs `python3 arguments…`, feeding `input`, and returns its standard output.
    /// - Throws: when it cannot start, exits non-zero (with its standard error), or outlives
    ///   ``deadline`` (it is then terminated).
    private static func run(_ arguments: [String], input: Data?) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        let errors = Pipe()
        let feed = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input == nil ? FileHandle.nullDevice : feed
        try process.run()
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline, execute: watchdog)
        defer { watchdog.cancel() }
        if let input {
            feed.fileHandleForWriting.write(input)
            try feed.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OracleFailure(message: "python3 \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(errorText)")
        }
        if !errorText.isEmpty { print(errorText.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return data
    }
}

struct OracleFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
