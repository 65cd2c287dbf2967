import ChimeCluster
import ChimeCore
import ChimeWire
import Foundation

enum ImportCommand: Command {
    /// Options shared with `chime preview FILE.ics`.
    static let calendarOptions = [
        OptionSpec(name: "recipient", value: "R", help: "Who the reminders are for."),
        OptionSpec(name: "default-alarm", value: "DURATION", help: "Remind events without VALARM this long before their start (0m, 15m)."),
        OptionSpec(name: "include-past", value: nil, help: "Also import alarms whose instants are all past (a past one-shot fires at once); import skips and counts them otherwise."),
    ]

    static let spec = CommandSpec(
        name: "import",
        summary: "Import the alarms of an iCalendar file as reminders (re-importing changes nothing).",
        usage: "chime import FILE.ics --recipient R [--tz ZONE] [--default-alarm D] [--include-past] [--dry-run] [--json]",
        options: calendarOptions + [
            OptionSpec(name: "tz", value: "ZONE", help: "IANA zone of floating times when the file has no X-WR-TIMEZONE (default UTC)."),
            OptionSpec(name: "dry-run", value: nil, help: "Print what would be imported; send nothing."),
            OptionSpec(name: "json", value: nil, help: "Print {\"reminders\", \"skipped\", \"summary\", \"notes\"} (and the reply) as JSON."),
        ] + CommonOptions.specs,
        details: "Each VALARM of a VEVENT or VTODO becomes one reminder with id ics-<hash of UID, RECURRENCE-ID, alarm>;\ncomponents that cannot be imported are listed with the reason and the rest still import. Past alarms,\nalarms acknowledged (ACKNOWLEDGED, X-MOZ-LASTACK) and alarms replaced by a snooze are left out and counted.")

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard let path = arguments.positionals.first, arguments.positionals.count == 1 else {
            throw UsageError("give one FILE.ics")
        }
        guard arguments.value("recipient") != nil else { throw UsageError("--recipient is required") }
        let calendarImport = try makeImport(path: path, arguments, defaultRecipient: nil, skipsPast: !arguments.has("include-past"))
        let json = arguments.has("json")
        var reply: Data?
        var warnings: [String] = []
        if !arguments.has("dry-run"), !calendarImport.reminders.isEmpty {
            let client = try makeControlClient(arguments)
            let (decoded, bytes) = try client.call(ControlRequest(command: .schedule(calendarImport.reminders)), ScheduleResult.self)
            reply = bytes
            warnings = decoded.warnings ?? []
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var object: [String: Any] = [
                "reminders": try JSONSerialization.jsonObject(with: encoder.encode(calendarImport.reminders)),
                "skipped": try JSONSerialization.jsonObject(with: encoder.encode(calendarImport.skipped)),
                "summary": try JSONSerialization.jsonObject(with: encoder.encode(calendarImport.summary)),
                "notes": calendarImport.notes,
            ]
            if let reply { object["reply"] = try JSONSerialization.jsonObject(with: reply) }
            output(jsonLine(object))
            return 0
        }
        let verb = arguments.has("dry-run") ? "to import" : "imported"
        for reminder in calendarImport.reminders {
            var timing: String
            switch reminder.trigger.start {
            case .instant(let date): timing = RFC3339.format(date)
            case .wallClock(let local, let zone): timing = "\(local) \(zone)"
            }
            if let rule = reminder.trigger.recurrenceRule { timing += " RRULE:\(rule)" }
            if let before = reminder.trigger.offset { timing += " before \(DurationParser.format(seconds: before))" }
            output("\(verb) \(reminder.id) \"\(reminder.content.title ?? "")\": \(timing)")
        }
        output(summaryLine(calendarImport, verb: verb, defaultAlarm: arguments.value("default-alarm")))
        for note in calendarImport.notes { output("note: \(note)") }
        reportSkipped(calendarImport.skipped, json: false)
        for warning in warnings {
            FileHandle.standardError.write(Data("chime: warning: \(warning)\n".utf8))
        }
        return 0
    }

    /// `3 reminder(s) imported; left out: 7 past alarm(s) (--include-past imports them), …`.
    static func summaryLine(_ calendarImport: CalendarImport, verb: String, defaultAlarm: String?) -> String {
        let summary = calendarImport.summary
        var parts: [String] = []
        if summary.past > 0 { parts.append("\(summary.past) past alarm(s) (--include-past imports them)") }
        if summary.acknowledged > 0 { parts.append("\(summary.acknowledged) acknowledged alarm(s)") }
        if summary.snoozed > 0 { parts.append("\(summary.snoozed) alarm(s) replaced by their snooze") }
        if !calendarImport.skipped.isEmpty { parts.append("\(calendarImport.skipped.count) component(s) not importable (below)") }
        var line = "\(calendarImport.reminders.count) reminder(s) \(verb) from \(summary.components) event(s)/to-do(s)"
        if summary.withoutAlarms > 0 {
            line += defaultAlarm.map { ", \(summary.withoutAlarms) without VALARM reminded \($0) before" }
                ?? ", \(summary.withoutAlarms) without alarms (--default-alarm D reminds them)"
        }
        return line + (parts.isEmpty ? "" : "; left out: " + parts.joined(separator: ", "))
    }

    /// Reads and converts `path` with the calendar options of `arguments`.
    /// - Throws: `UsageError` for an unreadable file, bad options or text that is not iCalendar.
    static func makeImport(path: String, _ arguments: Arguments, defaultRecipient: String?, skipsPast: Bool) throws -> CalendarImport {
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
        let zone = arguments.value("tz") ?? "UTC"
        _ = try usage { () throws(ValidationError) in try ZoneRules.zone(named: zone) }
        let defaultAlarm = try arguments.value("default-alarm").map { text in
            try usage { () throws(ValidationError) in try Trigger.parseOffset(text) }
        }
        guard let recipient = arguments.value("recipient") ?? defaultRecipient else {
            throw UsageError("--recipient is required")
        }
        let options = CalendarImportOptions(
            recipient: RecipientID(recipient), defaultZone: zone, defaultAlarm: defaultAlarm,
            skipsAlarmsBefore: skipsPast ? Date() : nil)
        return try usage { () throws(ValidationError) in
            try CalendarImporter.makeImport(String(decoding: data, as: UTF8.self), options: options)
        }
    }

    /// Prints skipped components on standard error (one JSON line each with `json`).
    static func reportSkipped(_ skipped: [SkippedComponent], json: Bool) {
        for component in skipped {
            let line = json
                ? jsonLine(["skipped": ["uid": component.uid, "summary": component.summary ?? "", "reason": component.reason]])
                : "skipped \(component.uid) \"\(component.summary ?? "")\": \(component.reason)"
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }
}
