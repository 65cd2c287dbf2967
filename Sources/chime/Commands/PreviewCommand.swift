import ChimeCore
import ChimeCommandLine
import Foundation

enum PreviewCommand: Command {
    static let spec = CommandSpec(
        name: "preview",
        summary: "List a rule's next occurrences or a calendar's alarm instants (no cluster needed).",
        usage: "chime preview --rrule RULE --start LOCAL --tz ZONE (--count N | --until LOCAL) [--exclude FILE]... [--calendar NAME]... [--json]\n       chime preview --sun EVENT --lat DEGREES --lon DEGREES [--depression D] [--offset SECONDS] [--start TIME] [--tz ZONE] (--count N | --until LOCAL) [--json]\n       chime preview FILE.ics --from TIME --to TIME [--recipient R] [--tz ZONE] [--default-alarm D] [--include-past] [--json]",
        options: [
            OptionSpec(name: "rrule", value: "RULE", help: "An RFC 5545 rule, e.g. 'FREQ=MONTHLY;BYDAY=-1FR'."),
            OptionSpec(name: "start", value: "LOCAL", help: "First occurrence (DTSTART), wall clock in --tz: 2026-01-30T09:00."),
            OptionSpec(name: "count", value: "N", help: "List this many occurrences."),
            OptionSpec(name: "until", value: "LOCAL", help: "List occurrences up to this wall-clock time in --tz."),
            OptionSpec(name: "from", value: "TIME", help: "Window start for FILE.ics: RFC 3339 instant, or wall clock in --tz."),
            OptionSpec(name: "to", value: "TIME", help: "Window end for FILE.ics (inclusive)."),
            OptionSpec(name: "tz", value: "ZONE", help: "IANA zone: of --start/--until; for FILE.ics, of floating times without X-WR-TIMEZONE (default UTC)."),
        ] + beyondTheClockOptions + ImportCommand.calendarOptions + [
            OptionSpec(name: "json", value: nil, help: "One JSON object per line."),
        ])

    static func run(_ arguments: Arguments) throws -> Int32 {
        if let path = arguments.positionals.first {
            guard arguments.positionals.count == 1 else { throw UsageError("give one FILE.ics") }
            guard arguments.value("rrule") == nil else { throw UsageError("give FILE.ics or --rrule, not both") }
            return try previewCalendar(path: path, arguments)
        }
        if let event = arguments.value("sun") { return try previewSun(arguments, event: event) }
        guard let ruleText = arguments.value("rrule") else {
            throw UsageError("give --rrule RULE --start LOCAL --tz ZONE, or FILE.ics --from TIME --to TIME")
        }
        guard let startText = arguments.value("start"), let zone = arguments.value("tz") else {
            throw UsageError("--rrule needs --start LOCAL and --tz ZONE")
        }
        let timeZone = try usage { () throws(ValidationError) in try ZoneRules.zone(named: zone) }
        let rule = try usage { () throws(ValidationError) in try RecurrenceRule(parsing: ruleText) }
        let start = try usage { () throws(ValidationError) in try LocalDateTime(parsing: startText) }
        let recurrence = try usage { () throws(ValidationError) in
            try Recurrence(start: .wallClock(start, zoneIdentifier: zone), recurrenceRule: rule)
        }
        let count = try arguments.integer("count")
        let until = try arguments.value("until").map { text in
            ZoneRules.resolve(try usage { () throws(ValidationError) in try LocalDateTime(parsing: text) }, in: timeZone)
        }
        guard (count == nil) != (until == nil) else { throw UsageError("give --count N or --until LOCAL (one of them)") }
        if let count, count < 1 || count > 100_000 { throw UsageError("--count must be 1 to 100000") }
        let occurrences = recurrence.occurrences(
            onOrAfter: recurrence.firstInstant, through: until, limit: count ?? 100_000)
        // Excluded occurrences are listed, marked with the calendar that excludes them.
        let excluding = try Self.exclusion(arguments, zone: timeZone)
        for (number, occurrence) in occurrences.enumerated() {
            printRow(number: number + 1, instant: occurrence.instant, zone: timeZone, zoneName: zone, exclusion: excluding, json: arguments.has("json"))
        }
        return 0
    }

    private static func previewCalendar(path: String, _ arguments: Arguments) throws -> Int32 {
        guard let fromText = arguments.value("from"), let toText = arguments.value("to") else {
            throw UsageError("FILE.ics needs --from TIME and --to TIME")
        }
        let displayZone = try usage { () throws(ValidationError) in try ZoneRules.zone(named: arguments.value("tz") ?? "UTC") }
        let from = try instant(fromText, zone: displayZone, option: "from")
        let to = try instant(toText, zone: displayZone, option: "to")
        guard from <= to else { throw UsageError("--from must not be after --to") }
        let calendarImport = try ImportCommand.makeImport(
            path: path, arguments, defaultRecipient: "preview", skipsPast: !arguments.has("include-past"))
        var rows: [(instant: Date, reminder: Reminder)] = []
        for reminder in calendarImport.reminders {
            for instant in try reminder.fireInstants(from: from, through: to) { rows.append((instant, reminder)) }
        }
        rows.sort { ($0.instant, $0.reminder.id) < ($1.instant, $1.reminder.id) }
        for row in rows {
            let zoneName = row.reminder.trigger.timeZoneIdentifier ?? arguments.value("tz") ?? "UTC"
            let zone = (try? ZoneRules.zone(named: zoneName)) ?? displayZone
            let local = ZoneRules.localTextWithOffset(at: row.instant, in: zone)
            let utc = RFC3339.format(row.instant)
            let title = row.reminder.content.title ?? ""
            if arguments.has("json") {
                output(jsonLine(["id": row.reminder.id.rawValue, "title": title, "utc": utc, "local": local, "zone": zoneName]))
            } else {
                output("\(utc)  \(local) \(column(zoneName, 20)) \(row.reminder.id)  \(title)")
            }
        }
        ImportCommand.reportSkipped(calendarImport.skipped, json: arguments.has("json"))
        let summary = calendarImport.summary
        let hasAlarms = !calendarImport.reminders.isEmpty || summary.past + summary.acknowledged + summary.snoozed > 0
        if !hasAlarms {
            printError("no_alarms: \(path) has no alarms (\(summary.components) event(s)/to-do(s), \(summary.withoutAlarms) without VALARM; --default-alarm D reminds them)")
            return 1
        }
        if !arguments.has("json") {
            if rows.isEmpty { output("no alarm instants between \(RFC3339.format(from)) and \(RFC3339.format(to))") }
            output(ImportCommand.summaryLine(calendarImport, verb: "to import", defaultAlarm: arguments.value("default-alarm")))
            for note in calendarImport.notes { output("note: \(note)") }
        }
        return 0
    }

    private static func instant(_ text: String, zone: TimeZone, option: String) throws -> Date {
        if let instant = try? RFC3339.parseInstant(text) { return instant }
        if let local = try? LocalDateTime(parsing: text) { return ZoneRules.resolve(local, in: zone) }
        throw UsageError("--\(option) must be an RFC 3339 instant (2026-01-01T00:00:00Z) or a wall-clock time (2026-01-01T00:00)")
    }
}

/// Runs `body`, turning a `ValidationError` into a `UsageError` (exit status 2).
func usage<Value>(_ body: () throws(ValidationError) -> Value) throws(UsageError) -> Value {
    do {
        return try body()
    } catch {
        throw UsageError(error.message)
    }
}
