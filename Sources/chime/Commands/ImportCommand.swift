import ChimeCore
import ChimeRuntime
import ChimeWire
import ChimeCommandLine
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
            OptionSpec(name: "json", value: nil, help: "Print {\"ok\",\"result\":{\"scheduled\",\"failed\",\"errors\",\"skipped\",\"summary\",\"notes\",…}} (with --dry-run: \"reminders\" instead of the counts)."),
        ] + BulkOptions.specs + CommonOptions.specs,
        details: "Each VALARM of a VEVENT or VTODO becomes one reminder with id ics-<hash of UID, RECURRENCE-ID, alarm>;\ncomponents that cannot be imported are listed with the reason and the rest still import. Past alarms,\nalarms acknowledged (ACKNOWLEDGED, X-MOZ-LASTACK) and alarms replaced by a snooze are left out and counted.\nThe reminders are sent in chunks as 'schedule --file' sends them (progress, summary, item errors by index).")

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard let path = arguments.positionals.first, arguments.positionals.count == 1 else {
            throw UsageError("give one FILE.ics")
        }
        guard arguments.value("recipient") != nil else { throw UsageError("--recipient is required") }
        let calendarImport = try makeImport(path: path, arguments, defaultRecipient: nil, skipsPast: !arguments.has("include-past"))
        let json = arguments.has("json")
        let isDryRun = arguments.has("dry-run")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var calendarObject: [String: Any] = [
            "skipped": try JSONSerialization.jsonObject(with: encoder.encode(calendarImport.skipped)),
            "summary": try JSONSerialization.jsonObject(with: encoder.encode(calendarImport.summary)),
            "notes": calendarImport.notes,
        ]
        // Printed before sending: the bulk summary line then says what was scheduled.
        let verb = "to import"
        if isDryRun {
            if json {
                calendarObject["reminders"] = try JSONSerialization.jsonObject(with: encoder.encode(calendarImport.reminders))
                output(jsonLine(["ok": true, "result": calendarObject]))
                return 0
            }
            for reminder in calendarImport.reminders { output("\(verb) \(reminder.id) \"\(reminder.content.title ?? "")\": \(timing(of: reminder))") }
        }
        if !json {
            output(summaryLine(calendarImport, verb: verb, defaultAlarm: arguments.value("default-alarm")))
            for note in calendarImport.notes { output("note: \(note)") }
            reportSkipped(calendarImport.skipped, json: false)
        }
        if isDryRun { return 0 }
        let run = try BulkRun(arguments, verb: "scheduled")
        let total = Double(max(1, calendarImport.reminders.count))
        for (index, reminder) in calendarImport.reminders.enumerated() {
            run.scheduler.noteRead(items: index + 1, fraction: Double(index + 1) / total)
            try run.scheduler.add(reminder, index: index)
        }
        return try run.finish(extra: json ? calendarObject : [:])
    }

    /// `2030-10-27T01:30:00 Europe/Berlin RRULE:FREQ=HOURLY;COUNT=3 before 15m`.
    static func timing(of reminder: Reminder) -> String {
        var timing: String
        switch reminder.trigger.start {
        case .instant(let date): timing = RFC3339.format(date)
        case .wallClock(let local, let zone): timing = "\(local) \(zone)"
        }
        if let rule = reminder.trigger.recurrenceRule { timing += " RRULE:\(rule)" }
        if let before = reminder.trigger.offset { timing += " before \(DurationParser.format(seconds: before))" }
        return timing
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
            skipsAlarmsBefore: skipsPast ? Date() : nil, windowsZoneNames: WindowsZoneNames.ianaIdentifier(forWindowsName:))
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
            StandardStreams.writeError(line + "\n")
        }
    }
}
