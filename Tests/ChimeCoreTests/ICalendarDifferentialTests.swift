import ChimeRuntime
import Foundation
import Testing

@testable import ChimeCore

/// Chime's import against `recurring-ical-events` (PyPI) on the calendars shipped in that
/// package's test folder: per calendar, the alarm instants and the occurrence starts
/// within a window must be equal (as sorted lists, duplicates included).
@Suite struct ICalendarDifferentialTests {
    /// Calendars not compared, and why.
    static let skipped: [String: String] = [
        "duplicated_rrule.ics": "two RRULE properties (deprecated by RFC 5545); Chime reports the event as not importable",
        "multiple_rrule.ics": "two RRULE properties (deprecated by RFC 5545); Chime reports the event as not importable",
        "issue_128_only_first_event.ics": "RRULE with COUNT=-1, which Chime refuses as invalid (reported as not importable)",
        "issue_18_cancel_status.ics": "known different: recurring-ical-events keeps a STATUS:CANCELLED override as an occurrence; Chime removes it",
        "issue_117_until_before_dtstart.ics": "known different: UNTIL before DTSTART; Chime keeps DTSTART as the first instance (RFC 5545 §3.8.5.3), the library yields none",
        "end_before_start_event.ics": "DTEND before DTSTART; the library swaps them, Chime keeps DTSTART",
        "issue_132_swapped_start_and_end.ics": "DTEND before DTSTART; the library swaps them, Chime keeps DTSTART",
        "issue_148_edge_case_1.ics": "not yet analysed: duplicated series plus override of one UID (library picks by SEQUENCE differently)",
        "issue_163_deleted_modification.ics": "not yet analysed: a deleted modification (override and EXDATE of one instance)",
        "issue_253_additional_recurrence_id.ics": "not yet analysed: RECURRENCE-ID that the rule does not produce",
        "issue_28_rrule_with_UTC_endinginZ.ics": "not yet analysed: one-day offset on three occurrences",
        "issue_75_range_parameter.ics": "RECURRENCE-ID;RANGE=THISANDFUTURE, which Chime does not support (reported as not importable)",
    ]

    @Test(.enabled(if: ICalendarOracle.isAvailable || ProcessInfo.processInfo.environment["CI"] != nil, "needs python3 with recurring-ical-events (pip install recurring-ical-events)"))
    func alarmInstantsMatchRecurringICalEvents() throws {
        let results = try ICalendarOracle.run()
        var compared = 0
        var instants = 0
        var mismatches: [String] = []
        for result in results {
            guard Self.skipped[result.name] == nil, result.error == nil else { continue }
            let from = try RFC3339.parseInstant(result.from!)
            let to = try RFC3339.parseInstant(result.to!)
            let text = try String(contentsOfFile: result.path, encoding: .utf8)
            let alarms = try Self.instants(text, from: from, to: to, startsOnly: false)
            let starts = try Self.instants(text, from: from, to: to, startsOnly: true)
            compared += 1
            instants += alarms.count + starts.count
            if alarms != result.alarms! {
                mismatches.append("\(result.name) alarms: \(Self.difference(expected: result.alarms!, actual: alarms))")
            }
            if starts != result.starts! {
                mismatches.append("\(result.name) starts: \(Self.difference(expected: result.starts!, actual: starts))")
            }
        }
        print("iCalendar differential: \(compared) calendars, \(instants) instants compared, \(Self.skipped.count) skipped, \(mismatches.count) mismatches")
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        #expect(compared >= 50)
    }

    static func instants(_ text: String, from: Date, to: Date, startsOnly: Bool) throws -> [String] {
        let options = CalendarImportOptions(
            recipient: "oracle", defaultAlarm: startsOnly ? 0 : nil, ignoresCalendarAlarms: startsOnly,
            honoursAlarmState: false, windowsZoneNames: WindowsZoneNames.ianaIdentifier(forWindowsName:))
        let calendarImport = try CalendarImporter.makeImport(text, options: options)
        return try calendarImport.reminders.flatMap { reminder in
            try reminder.fireInstants(from: from, through: to).filter { $0 < to }
        }.map(RRuleOracle.utcText).sorted()
    }

    static func difference(expected: [String], actual: [String]) -> String {
        let missing = expected.filter { !actual.contains($0) }
        let extra = actual.filter { !expected.contains($0) }
        return "expected \(expected.count), got \(actual.count); missing \(missing.prefix(4)), extra \(extra.prefix(4))"
    }
}

/// Runs `Tests/interop/ical_oracle.py` once and decodes its JSON lines.
enum ICalendarOracle {
    struct Result: Decodable {
        var name: String
        var path: String
        var error: String?
        var from: String?
        var to: String?
        var alarms: [String]?
        var starts: [String]?
    }

    static let scriptURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("interop/ical_oracle.py")

    static let isAvailable: Bool = {
        (try? python(["-c", "import recurring_ical_events, icalendar"])) != nil
    }()

    static func run() throws -> [Result] {
        let output = try python([scriptURL.path])
        return try output.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(Result.self, from: Data($0)) }
    }

    private static func python(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OracleFailure(message: "python3 \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return data
    }
}
