import ChimeCore
import ChimeWire
import ChimeCommandLine
import Foundation

enum ScheduleCommand: Command {
    static let spec = CommandSpec(
        name: "schedule",
        summary: "Schedule a reminder (or replace one with the same --id).",
        usage: "chime schedule --recipient R (--at TIME [--tz ZONE] | --in DURATION) [content options]\n       chime schedule --recipient R (--sun EVENT [--lat D --lon D] | --region RADIUS --lat D --lon D [--on entry|exit|both]) [--calendar NAME]...\n       chime schedule --file REMINDERS.json",
        options: [
            OptionSpec(name: "id", value: "ID", help: "Reminder id (default: generated). An existing id is replaced."),
            OptionSpec(name: "recipient", value: "R", help: "Who the reminder is for (fire events go to topic fire.R)."),
            OptionSpec(name: "at", value: "TIME", help: "RFC 3339 instant (2026-12-24T08:00:00Z), or wall clock (2026-12-24T09:00) with --tz."),
            OptionSpec(name: "in", value: "DURATION", help: "Relative to now: 90s, 5m, 2h, 1d, 1h30m."),
            OptionSpec(name: "tz", value: "ZONE", help: "IANA zone (Europe/Berlin): --at is a floating wall-clock time in it."),
            OptionSpec(name: "repeat", value: "UNIT", help: "minute, hour, day, week, month or year."),
            OptionSpec(name: "every", value: "N", help: "Repeat every N units (default 1)."),
            OptionSpec(name: "rrule", value: "RULE", help: "An RFC 5545 rule, e.g. 'FREQ=WEEKLY;BYDAY=MO,WE' or 'FREQ=MONTHLY;BYDAY=-1FR'."),
            OptionSpec(name: "rdate", value: "TIME", help: "An extra occurrence (RFC 3339, or wall clock with --tz).", repeats: true),
            OptionSpec(name: "exdate", value: "TIME", help: "A removed occurrence (RFC 3339, or wall clock with --tz).", repeats: true),
            OptionSpec(name: "month-end", value: "skip|clamp", help: "Monthly on the 29th-31st: skip shorter months (RFC 5545, default) or clamp to their last day."),
            OptionSpec(name: "title", value: "TEXT", help: "Alert title."),
            OptionSpec(name: "body", value: "TEXT", help: "Alert body."),
            OptionSpec(name: "action", value: "TEXT", help: "Alert action title."),
            OptionSpec(name: "launch-image", value: "NAME", help: "Launch image name."),
            OptionSpec(name: "sound", value: "NAME", help: "'default' or a sound name (none when absent)."),
            OptionSpec(name: "badge", value: "N|+1", help: "Badge: N>0 sets, 0 leaves, N<0 clears; +1 counts delivered, unhandled firings."),
            OptionSpec(name: "before", value: "DURATION", help: "Remind this long before the event (5m, 1h, 1d); repeats apply to the event time."),
            OptionSpec(name: "spread", value: "DURATION", help: "Delay each firing by a fixed [0, DURATION) derived from its firing id (at most 1d), so a burst is spread."),
            OptionSpec(name: "nag", value: "N", help: "Alert again up to N times unless handled (with --nag-every)."),
            OptionSpec(name: "nag-every", value: "DURATION", help: "Time between nags (at least 1m; default 10m)."),
            OptionSpec(name: "misfire", value: "POLICY", help: "fireOnce (default), skip or fireAll: occurrences missed while no coordinator ran."),
            OptionSpec(name: "misfire-threshold", value: "DURATION", help: "Skip missed occurrences older than this instead of firing them late."),
            OptionSpec(name: "user-info", value: "JSON", help: "userInfo as a JSON object."),
            OptionSpec(name: "category", value: "ID", help: "Category identifier."),
            OptionSpec(name: "thread", value: "ID", help: "Thread identifier."),
            OptionSpec(name: "subtitle", value: "TEXT", help: "Alert subtitle (a line under the title)."),
            OptionSpec(name: "interruption-level", value: "LEVEL", help: "passive, active (default), timeSensitive or critical; a level the recipient has not granted is delivered as active."),
            OptionSpec(name: "relevance-score", value: "X", help: "Rank among the recipient's notifications in a summary, 0 to 1."),
            OptionSpec(name: "target-content-id", value: "ID", help: "The window or content the notification opens (targetContentIdentifier)."),
            OptionSpec(name: "filter-criteria", value: "TEXT", help: "The Focus filter criteria that let it through (filterCriteria)."),
            OptionSpec(name: "no-action", value: nil, help: "Show no action button (hasAction false)."),
            OptionSpec(name: "unhandled", value: "POLICY", help: "stack (default), replace or skip: what an occurrence does while the previous one is still unhandled on the delivered list."),
            OptionSpec(name: "collapse-key", value: "KEY", help: "A delivered firing of the recipient with the same key leaves the delivered list when this one is delivered (APNs/FCM collapse)."),
            OptionSpec(name: "attachment", value: "ID,URL,TYPE,SIZE", help: "A file shown with it, fetched by the device: an identifier, an https URL, a MIME type or UTI (image/png, audio/mpeg, video/mp4…) and its size in bytes (images ≤ 10 MiB, audio ≤ 5 MiB, movies ≤ 50 MiB); repeatable, at most 10.", repeats: true),
            OptionSpec(name: "title-key", value: "KEY", help: "Localizable title: a key of notifications.stringsDirectory's tables, resolved in the recipient's locale when it fires (--title is the fallback)."),
            OptionSpec(name: "title-arg", value: "TEXT", help: "An argument of --title-key's format (%@, %1$@), in order; repeatable.", repeats: true),
            OptionSpec(name: "body-key", value: "KEY", help: "Localizable body, as --title-key (--body is the fallback)."),
            OptionSpec(name: "body-arg", value: "TEXT", help: "An argument of --body-key's format, in order; repeatable.", repeats: true),
            OptionSpec(name: "sound-volume", value: "X", help: "Play --sound as a critical sound at this volume, 0 to 1 (when delivered at the critical level)."),
            OptionSpec(name: "throttled", value: "POLICY", help: "hold (default), coalesce or drop: what an occurrence does when the recipient's throttle has no room (coalesce: into this reminder's firing already waiting; coalesced and dropped ones are recorded as suppressed)."),
            OptionSpec(name: "disabled", value: nil, help: "Schedule with the switch off."),
            OptionSpec(name: "file", value: "PATH", help: "JSON array or NDJSON of reminders (wire shape; a trigger may use \"in\": \"5s\" instead of \"at\"); '-' reads stdin. Streamed and sent in chunks."),
        ] + beyondTheClockOptions + BulkOptions.specs + [
            OptionSpec(name: "json", value: nil, help: "Print the coordinator's JSON reply (with --file: {\"ok\",\"result\":{\"scheduled\",\"failed\",\"errors\",…}})."),
        ] + CommonOptions.specs,
        details: """
            With --file, reminders are read one at a time and sent in requests of at most --chunk reminders
            (and half of coordinator.maxRequestBytes, at most 4 MiB), each with its own requestId: a retried
            chunk is applied once, but the file as a whole is not atomic. A reminder the coordinator refuses
            is reported with its 0-based index in the file and the rest go on; exit 1
            when any failed. Progress on standard error (a bar on a terminal); one summary line at the end.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        if let path = arguments.value("file") {
            return try scheduleFile(path: path, arguments)
        }
        let reminders = [try reminderFromFlags(arguments)]
        let client = try makeControlClient(arguments)
        let (reply, raw) = try client.call(
            ControlRequest(command: .schedule(reminders)), ScheduleResult.self)
        if arguments.has("json") {
            printJSON(raw)
            return 0
        }
        // --tz was checked when the reminder was built.
        let zone = arguments.value("tz").flatMap { try? ZoneRules.zone(named: $0) }
        for item in reply.result?.scheduled ?? [] {
            let when = item.nextFireAt.map { "next fire \(RFC3339.format($0))\(localTime($0, in: zone)) (\(relative($0)))" } ?? "no occurrence left"
            output("\(item.replaced ? "replaced" : "scheduled") \(item.id) [\(item.state.rawValue)]: \(when)")
        }
        for warning in reply.warnings ?? [] {
            FileHandle.standardError.write(Data("chime: warning: \(warning)\n".utf8))
        }
        return 0
    }

    /// ` = 2026-12-24T09:00:00 Europe/Berlin`: `instant` on the wall clock of `--tz`, or nothing
    /// without one.
    static func localTime(_ instant: Date, in zone: TimeZone?) -> String {
        guard let zone else { return "" }
        return " = \(ZoneRules.localDateTime(at: instant, in: zone)) \(zone.identifier)"
    }

    /// `schedule --file`: streams the file into chunked requests.
    static func scheduleFile(path: String, _ arguments: Arguments) throws -> Int32 {
        let flagged = ["recipient", "at", "in", "id", "title", "body"].filter { arguments.value($0) != nil }
        if let first = flagged.first { throw UsageError("--file takes the reminders from the file; remove --\(first)") }
        let run = try BulkRun(arguments, verb: "scheduled")
        let now = Date()
        try ReminderFile.forEach(path: path, now: now) { index, item, fraction in
            run.scheduler.noteRead(items: index + 1, fraction: fraction)
            switch item {
            case .success(let json): try run.scheduler.add(json: json, id: "", index: index)
            case .failure(let error): run.scheduler.fail(index: index, id: nil, error)
            }
        }
        return try run.finish()
    }

    static func reminderFromFlags(_ arguments: Arguments) throws -> Reminder {
        guard let recipient = arguments.value("recipient") else {
            throw UsageError("--recipient is required (or use --file)")
        }
        let start: TriggerStart
        switch (arguments.value("at"), arguments.value("in")) {
        case (nil, nil) where needsNoStart(arguments):
            start = .instant(Trigger.unstarted)
        case (nil, nil):
            throw UsageError("give --at TIME or --in DURATION")
        case (.some, .some):
            throw UsageError("give either --at or --in, not both")
        case (let at?, nil):
            if let zone = arguments.value("tz") {
                // Checked here as with --in, so a bad zone is a usage error (exit 2) either way.
                _ = try Arguments.parse(zone, flag: "tz") { name throws(ValidationError) in try ZoneRules.zone(named: name) }
                start = .wallClock(try Arguments.parse(at, flag: "at") { text throws(ValidationError) in try LocalDateTime(parsing: text) }, zoneIdentifier: zone)
            } else {
                start = .instant(try Arguments.parse(at, flag: "at") { text throws(ValidationError) in try RFC3339.parseInstant(text) })
            }
        case (nil, let duration?):
            let instant = Date().addingTimeInterval(try Arguments.seconds(duration, flag: "in"))
            guard instant <= RFC3339.supportedInstants.upperBound else {
                throw UsageError("--in: '\(duration)' from now is after 9999-12-31T23:59:59.999Z, the latest instant")
            }
            if let zone = arguments.value("tz") {
                let timeZone = try Arguments.parse(zone, flag: "tz") { name throws(ValidationError) in try ZoneRules.zone(named: name) }
                start = .wallClock(ZoneRules.localDateTime(at: instant, in: timeZone), zoneIdentifier: zone)
            } else {
                start = .instant(instant)
            }
        }
        var repeatRule: RepeatRule?
        if let unitName = arguments.value("repeat") {
            guard let unit = RepeatUnit(rawValue: unitName) else {
                throw UsageError("--repeat must be one of \(RepeatUnit.allCases.map(\.rawValue).joined(separator: ", ")), not '\(unitName)'")
            }
            repeatRule = RepeatRule(unit: unit, interval: try arguments.integer("every") ?? 1)
        } else if arguments.value("every") != nil {
            throw UsageError("--every needs --repeat UNIT")
        }
        var recurrenceRule: RecurrenceRule?
        var scaledRule: ScaledRule?
        if let text = arguments.value("rrule"), ScaledRule.isScaled(text) {
            if repeatRule != nil { throw UsageError("give --repeat or --rrule, not both") }
            scaledRule = try Arguments.parse(text, flag: "rrule") { rule throws(ValidationError) in try ScaledRule(parsing: rule) }
        } else if let text = arguments.value("rrule") {
            if repeatRule != nil { throw UsageError("give --repeat or --rrule, not both") }
            recurrenceRule = try Arguments.parse(text, flag: "rrule") { rule throws(ValidationError) in try RecurrenceRule(parsing: rule) }
        }
        func dates(_ name: String) throws -> [RecurrenceDateTime] {
            try arguments.all(name).map { text in
                do {
                    return try WireCodec().decode(RecurrenceDateTime.self, from: try JSONEncoder().encode(text))
                } catch let error as WireError {
                    throw UsageError("--\(name): \(error.message)")
                }
            }
        }
        var monthEnd = MonthEndPolicy.skip
        if let text = arguments.value("month-end") {
            guard let policy = MonthEndPolicy(rawValue: text) else { throw UsageError("--month-end must be skip or clamp") }
            monthEnd = policy
        }
        var userInfo: [String: PropertyListValue]?
        if let json = arguments.value("user-info") {
            do {
                userInfo = try JSONDecoder().decode([String: PropertyListValue].self, from: Data(json.utf8))
            } catch {
                throw UsageError("--user-info must be a JSON object of property-list values (no null)")
            }
        }
        let content = Content(
            title: arguments.value("title"), body: arguments.value("body"), action: arguments.value("action"),
            launchImage: arguments.value("launch-image"), sound: arguments.value("sound"),
            badgeChange: try arguments.value("badge").map { text in
                do { return try BadgeChange(parsing: text) } catch { throw UsageError("--badge must be an integer or +1, not '\(text)'") }
            },
            userInfo: userInfo, category: arguments.value("category"), threadId: arguments.value("thread"),
            subtitle: arguments.value("subtitle"), interruptionLevel: try interruptionLevel(arguments),
            relevanceScore: try relevanceScore(arguments), targetContentIdentifier: arguments.value("target-content-id"),
            filterCriteria: arguments.value("filter-criteria"), hasAction: !arguments.has("no-action"),
            unhandled: try unhandledPolicy(arguments), collapseKey: arguments.value("collapse-key"),
            attachments: try attachments(arguments), titleKey: arguments.value("title-key"),
            titleArgs: arguments.all("title-arg").isEmpty ? nil : arguments.all("title-arg"), bodyKey: arguments.value("body-key"),
            bodyArgs: arguments.all("body-arg").isEmpty ? nil : arguments.all("body-arg"), soundVolume: try soundVolume(arguments),
            throttled: try throttledPolicy(arguments))
        var misfire: MisfirePolicy?
        if let name = arguments.value("misfire") {
            guard let policy = MisfirePolicy(rawValue: name) else {
                throw UsageError("--misfire must be fireOnce, skip or fireAll, not '\(name)'")
            }
            misfire = policy
        }
        var nag: NagPolicy?
        if let count = try arguments.integer("nag") {
            nag = NagPolicy(count: count, interval: try arguments.seconds("nag-every") ?? 600)
        } else if arguments.value("nag-every") != nil {
            throw UsageError("--nag-every needs --nag N")
        }
        var trigger = Trigger(
            start: start, repeatRule: repeatRule, recurrenceRule: recurrenceRule,
            recurrenceDates: try dates("rdate"), exceptionDates: try dates("exdate"), monthEnd: monthEnd,
            offset: try arguments.parsed("before") { text throws(ValidationError) in try Trigger.parseOffset(text) },
            misfire: misfire, misfireThreshold: try arguments.seconds("misfire-threshold"),
            spread: try arguments.parsed("spread") { text throws(ValidationError) in try Trigger.parseSpread(text) },
            scaledRule: scaledRule)
        try addBeyondTheClock(arguments, to: &trigger)
        return Reminder(
            id: ReminderID(arguments.value("id") ?? ""), recipient: RecipientID(recipient), content: content,
            trigger: trigger, enabled: !arguments.has("disabled"), nag: nag)
    }
}
