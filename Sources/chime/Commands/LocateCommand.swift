import ChimeClient
import ChimeCommandLine
import ChimeCore
import ChimeWire
import Foundation

/// `chime locate RECIPIENT --lat … --lon … [--accuracy M] [--at T]`: a location report.
enum LocateCommand: Command {
    static let spec = CommandSpec(
        name: "locate",
        summary: "Report where a recipient is: region reminders fire on crossings; sun reminders follow the place.",
        usage: "chime locate RECIPIENT --lat DEGREES --lon DEGREES [--accuracy METRES] [--at TIME] [--json]",
        options: [
            OptionSpec(name: "lat", value: "DEGREES", help: "Latitude, -90 to 90 (north positive)."),
            OptionSpec(name: "lon", value: "DEGREES", help: "Longitude, -180 to 180 (east positive)."),
            OptionSpec(name: "accuracy", value: "METRES", help: "How accurate the place is (default 0): the edge's hysteresis, at most half a region's radius."),
            OptionSpec(name: "at", value: "TIME", help: "When the recipient was there (RFC 3339; default now); reports at or before the last one are ignored."),
            jsonOption,
        ] + CommonOptions.specs)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 1 else { throw UsageError("name one RECIPIENT") }
        func degrees(_ name: String) throws -> Double {
            guard let text = arguments.value(name) else { throw UsageError("--\(name) DEGREES is required") }
            guard let value = Double(text), value.isFinite else { throw UsageError("--\(name) must be a number of degrees, not '\(text)'") }
            return value
        }
        let point = GeoPoint(latitude: try degrees("lat"), longitude: try degrees("lon"))
        var accuracy = 0.0
        if let text = arguments.value("accuracy") {
            guard let value = Double(text), value.isFinite, value >= 0 else { throw UsageError("--accuracy must be metres ≥ 0") }
            accuracy = value
        }
        let at = try arguments.value("at").map { text in
            try Arguments.parse(text, flag: "at") { text throws(ValidationError) in try RFC3339.parseInstant(text) }
        }
        let recipient = RecipientID(arguments.positionals[0])
        let request = ControlRequest(command: .trigger(.locate(recipient, point: point, accuracy: accuracy, at: at)))
        let (reply, raw) = try makeControlClient(arguments).call(request, LocateResult.self)
        guard !arguments.has("json"), let result = reply.result else { printJSON(raw); return 0 }
        guard result.accepted else {
            output("\(recipient): ignored (not later than its last report)")
            return 0
        }
        output("\(recipient): at \(point.latitude), \(point.longitude)" + (result.crossings.isEmpty ? ", no crossing" : ""))
        for crossing in result.crossings {
            output("  \(crossing.crossing.rawValue) \(crossing.id)" + (crossing.firingId.map { ": fired \($0)" } ?? ""))
        }
        return 0
    }
}

/// `chime calendar set|delete|list|show`: the shared exclusion calendars.
enum CalendarCommand: Command {
    static let spec = CommandSpec(
        name: "calendar",
        summary: "Shared exclusion calendars (holidays, weekends, windows) that reminders name in trigger.calendars.",
        usage: """
            chime calendar set NAME (--ics FILE | --file FILE.json | [--date YYYY-MM-DD]... [--yearly MM-DD]... [--weekdays SA,SU] [--range FROM/TO]...) [--description TEXT] [--json]
                   chime calendar delete NAME [--json]
                   chime calendar list [--json]
                   chime calendar show NAME [--json]
            """,
        options: [
            OptionSpec(name: "ics", value: "FILE", help: "Take the days and ranges from an iCalendar file's events."),
            OptionSpec(name: "file", value: "FILE", help: "The calendar as JSON: {dates, yearly, weekdays, ranges, description}."),
            OptionSpec(name: "date", value: "YYYY-MM-DD", help: "An excluded day (in each recipient's zone).", repeats: true),
            OptionSpec(name: "yearly", value: "MM-DD", help: "A day excluded every year.", repeats: true),
            OptionSpec(name: "weekdays", value: "LIST", help: "Weekdays excluded every week: MO,TU,WE,TH,FR,SA,SU."),
            OptionSpec(name: "range", value: "FROM/TO", help: "An excluded range, TO exclusive: wall clock (recipient's zone) or RFC 3339 instants.", repeats: true),
            OptionSpec(name: "description", value: "TEXT", help: "What the calendar is for."),
            jsonOption,
        ] + CommonOptions.specs,
        details: """
            Calendars belong to the cluster: set and delete go to every shard (one requestId, applied
            once by each); a shard that did not answer is reported, and the same command again
            completes it. A reminder may name a calendar only once its shard holds it.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard let verb = arguments.positionals.first else { throw UsageError("give set, delete, list or show") }
        let client = try makeControlClient(arguments)
        let json = arguments.has("json")
        switch verb {
        case "set":
            guard arguments.positionals.count == 2 else { throw UsageError("calendar set needs one NAME") }
            let calendar = try makeCalendar(arguments)
            let replies = try client.setCalendar(arguments.positionals[1], calendar)
            if !json {
                for (shard, result) in replies.results {
                    output("shard \(shard): \(result.name) set, \(result.reminders) reminder(s) re-planned")
                }
            }
            return finishGathered(CalendarsResult(calendars: replies.results.map(\.result)), partial: replies.partialError, json: json)
        case "delete":
            guard arguments.positionals.count == 2 else { throw UsageError("calendar delete needs one NAME") }
            let replies = try client.deleteCalendar(arguments.positionals[1])
            if !json { for (shard, result) in replies.results { output("shard \(shard): \(result.name) deleted") } }
            return finishGathered(CalendarsResult(calendars: replies.results.map(\.result)), partial: replies.partialError, json: json)
        case "list", "show":
            let name = verb == "show" ? arguments.positionals.dropFirst().first : nil
            if verb == "show", name == nil { throw UsageError("calendar show needs a NAME") }
            let replies = try client.calendars(named: name)
            var merged: [String: CalendarResult] = [:]
            for (_, result) in replies.results {
                for calendar in result.calendars {
                    var entry = merged[calendar.name] ?? CalendarResult(name: calendar.name, calendar: calendar.calendar, reminders: 0)
                    entry.reminders += calendar.reminders
                    merged[calendar.name] = entry
                }
            }
            let result = CalendarsResult(calendars: merged.keys.sorted().compactMap { merged[$0] })
            if !json {
                for calendar in result.calendars {
                    output("\(calendar.name): \(calendar.reminders) reminder(s)" + (calendar.calendar?.description.map { " — \($0)" } ?? ""))
                    if verb == "show", let body = calendar.calendar {
                        output(String(decoding: WireCodec().encode(body), as: UTF8.self))
                    }
                }
            }
            return finishGathered(result, partial: replies.partialError, json: json)
        default:
            throw UsageError("give set, delete, list or show, not '\(verb)'")
        }
    }

    /// The calendar the options describe.
    static func makeCalendar(_ arguments: Arguments) throws -> ExclusionCalendar {
        if let path = arguments.value("ics") {
            guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
            var calendar = try Arguments.parse(String(decoding: data, as: UTF8.self), flag: "ics") { text throws(ValidationError) in
                try ExclusionCalendar(ics: text)
            }
            calendar.description = arguments.value("description") ?? calendar.description
            return calendar
        }
        if let path = arguments.value("file") {
            guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
            do {
                return try WireCodec().decode(ExclusionCalendar.self, from: data)
            } catch {
                throw UsageError("\(path): \(error.message)")
            }
        }
        var object: [String: Any] = [:]
        if !arguments.all("date").isEmpty { object["dates"] = arguments.all("date") }
        if !arguments.all("yearly").isEmpty { object["yearly"] = arguments.all("yearly") }
        if let days = arguments.value("weekdays") { object["weekdays"] = days.split(separator: ",").map(String.init) }
        if !arguments.all("range").isEmpty {
            object["ranges"] = try arguments.all("range").map { text -> [String: String] in
                let parts = text.split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == 2 else { throw UsageError("--range is FROM/TO, not '\(text)'") }
                return ["from": String(parts[0]), "to": String(parts[1])]
            }
        }
        if let description = arguments.value("description") { object["description"] = description }
        guard !object.isEmpty else { throw UsageError("give --ics, --file or at least one --date, --yearly, --weekdays or --range") }
        do {
            let calendar = try WireCodec().decode(ExclusionCalendar.self, from: try JSONSerialization.data(withJSONObject: object))
            try calendar.validate()
            return calendar
        } catch let error as WireError {
            throw UsageError(error.message)
        } catch let error as ValidationError {
            throw UsageError(error.message)
        }
    }
}
