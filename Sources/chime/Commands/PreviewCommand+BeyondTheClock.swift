import ChimeClient
import ChimeCommandLine
import ChimeCore
import ChimeWire
import Foundation

/// `chime preview --sun …` and the exclusion calendars in a preview (issue 41).
extension PreviewCommand {
    static let beyondTheClockOptions = [
        OptionSpec(name: "sun", value: "EVENT", help: "List the sun's daily moment instead of a rule: sunrise, sunset, dawn, dusk or noon (with --lat, --lon)."),
        OptionSpec(name: "lat", value: "DEGREES", help: "The place's latitude for --sun."),
        OptionSpec(name: "lon", value: "DEGREES", help: "The place's longitude for --sun."),
        OptionSpec(name: "depression", value: "D", help: "For dawn and dusk: civil (default), nautical, astronomical or degrees."),
        OptionSpec(name: "offset", value: "SECONDS", help: "For --sun: seconds added to the moment (negative: before)."),
        OptionSpec(name: "exclude", value: "FILE", help: "Mark the occurrences an exclusion calendar (.ics or JSON) excludes, evaluated in --tz.", repeats: true),
        OptionSpec(name: "calendar", value: "NAME", help: "Mark the occurrences the cluster's calendar NAME excludes (asks the cluster), evaluated in --tz.", repeats: true),
    ]

    /// The exclusion the `--exclude` files and `--calendar` names describe, in `zone`; `nil`
    /// when none is given.
    static func exclusion(_ arguments: Arguments, zone: TimeZone) throws -> OccurrenceExclusion? {
        var calendars: [(name: String, calendar: ExclusionCalendar)] = []
        for path in arguments.all("exclude") {
            guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
            let text = String(decoding: data, as: UTF8.self)
            if path.lowercased().hasSuffix(".ics") {
                calendars.append((path, try usage { () throws(ValidationError) in try ExclusionCalendar(ics: text) }))
            } else {
                do {
                    calendars.append((path, try WireCodec().decode(ExclusionCalendar.self, from: data)))
                } catch {
                    throw UsageError("\(path): \(error.message)")
                }
            }
        }
        let names = arguments.all("calendar")
        if !names.isEmpty {
            let replies = try makeControlClient(arguments).calendars()
            for name in names {
                guard let found = replies.results.lazy.flatMap(\.result.calendars).first(where: { $0.name == name }), let calendar = found.calendar else {
                    throw UsageError("the cluster has no calendar \(name)")
                }
                calendars.append((name, calendar))
            }
        }
        return calendars.isEmpty ? nil : OccurrenceExclusion(calendars: calendars, zone: zone)
    }

    /// Prints one occurrence row, marked when `exclusion` excludes it.
    static func printRow(number: Int, instant: Date, zone: TimeZone, zoneName: String, exclusion: OccurrenceExclusion?, json: Bool) {
        let local = ZoneRules.localTextWithOffset(at: instant, in: zone)
        let utc = RFC3339.format(instant)
        let excluded = exclusion?.exclusion(at: instant)
        if json {
            var fields: [String: Any] = ["n": number, "local": local, "utc": utc, "zone": zoneName]
            if let excluded { fields["excluded"] = ["calendar": excluded.calendar, "reason": excluded.reason] }
            output(jsonLine(fields))
        } else {
            let mark = excluded.map { "   excluded by \($0.calendar): \($0.reason)" } ?? ""
            output("\(column(String(number), 6))\(local) \(zoneName)   \(utc)\(mark)")
        }
    }

    /// `chime preview --sun EVENT --lat … --lon … (--count N | --until TIME)`: the moments.
    static func previewSun(_ arguments: Arguments, event name: String) throws -> Int32 {
        guard let event = SolarTrigger.Event(rawValue: name) else {
            throw UsageError("--sun must be sunrise, sunset, dawn, dusk or noon, not '\(name)'")
        }
        guard let latitude = arguments.value("lat").flatMap(Double.init), let longitude = arguments.value("lon").flatMap(Double.init) else {
            throw UsageError("--sun needs --lat DEGREES and --lon DEGREES")
        }
        var depression = SolarTrigger.civil
        if let text = arguments.value("depression") {
            switch text {
            case "civil": depression = 6
            case "nautical": depression = 12
            case "astronomical": depression = 18
            default:
                guard let degrees = Double(text) else { throw UsageError("--depression is civil, nautical, astronomical or degrees") }
                depression = degrees
            }
        }
        let offset = try arguments.value("offset").map { text -> Double in
            guard let seconds = Double(text) else { throw UsageError("--offset must be seconds") }
            return seconds
        } ?? 0
        let zoneName = arguments.value("tz") ?? "UTC"
        let zone = try usage { () throws(ValidationError) in try ZoneRules.zone(named: zoneName) }
        let from = try arguments.value("start").map { text in
            if let instant = try? RFC3339.parseInstant(text) { return instant }
            return ZoneRules.resolve(try usage { () throws(ValidationError) in try LocalDateTime(parsing: text) }, in: zone)
        } ?? Date()
        let sun = SolarTrigger(event: event, depression: depression, offset: offset, place: GeoPoint(latitude: latitude, longitude: longitude))
        let trigger = Trigger(start: .instant(from), sun: sun)
        let recurrence = try usage { () throws(ValidationError) in try trigger.makeRecurrence() }
        let count = try arguments.integer("count")
        let until = try arguments.value("until").map { text in
            ZoneRules.resolve(try usage { () throws(ValidationError) in try LocalDateTime(parsing: text) }, in: zone)
        }
        guard (count == nil) != (until == nil) else { throw UsageError("give --count N or --until LOCAL (one of them)") }
        if let count, count < 1 || count > 100_000 { throw UsageError("--count must be 1 to 100000") }
        let excluding = try Self.exclusion(arguments, zone: zone)
        for (number, occurrence) in recurrence.occurrences(onOrAfter: from, through: until, limit: count ?? 100_000).enumerated() {
            printRow(number: number + 1, instant: occurrence.instant, zone: zone, zoneName: zoneName, exclusion: excluding, json: arguments.has("json"))
        }
        return 0
    }
}
