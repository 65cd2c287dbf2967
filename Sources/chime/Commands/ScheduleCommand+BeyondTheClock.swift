import ChimeCommandLine
import ChimeCore
import Foundation

/// `chime schedule --sun …`, `--region …` and `--calendar NAME` (issue 41).
extension ScheduleCommand {
    static let beyondTheClockOptions = [
        OptionSpec(name: "sun", value: "EVENT", help: "Fire daily at sunrise, sunset, dawn, dusk or noon (--at optional: the day it starts)."),
        OptionSpec(name: "lat", value: "DEGREES", help: "--sun: the place's latitude (without --lat/--lon: the recipient's last reported place); --region: the centre's."),
        OptionSpec(name: "lon", value: "DEGREES", help: "--sun or --region: longitude."),
        OptionSpec(name: "depression", value: "D", help: "--sun dawn|dusk: civil (default), nautical, astronomical or degrees."),
        OptionSpec(name: "sun-offset", value: "SECONDS", help: "--sun: seconds added to the moment (negative: before)."),
        OptionSpec(name: "region", value: "RADIUS", help: "Fire when the recipient enters/leaves the circle of RADIUS metres around --lat/--lon, not at a time."),
        OptionSpec(name: "on", value: "entry|exit|both", help: "--region: which crossings fire (default both)."),
        OptionSpec(name: "every-crossing", value: nil, help: "--region: fire on every crossing (default: the first only, as iOS)."),
        OptionSpec(name: "calendar", value: "NAME", help: "Skip what this shared exclusion calendar excludes (chime calendar set).", repeats: true),
    ]

    /// Whether the flags describe a trigger that needs no `--at` (sun or region).
    static func needsNoStart(_ arguments: Arguments) -> Bool {
        arguments.value("sun") != nil || arguments.value("region") != nil
    }

    /// Adds the sun, the region and the calendars the flags give to `trigger`.
    static func addBeyondTheClock(_ arguments: Arguments, to trigger: inout Trigger) throws {
        func degrees(_ name: String) throws -> Double? {
            guard let text = arguments.value(name) else { return nil }
            guard let value = Double(text), value.isFinite else { throw UsageError("--\(name) must be degrees, not '\(text)'") }
            return value
        }
        let latitude = try degrees("lat")
        let longitude = try degrees("lon")
        if (latitude == nil) != (longitude == nil) { throw UsageError("give --lat and --lon together") }
        let place = latitude.flatMap { lat in longitude.map { GeoPoint(latitude: lat, longitude: $0) } }
        if let name = arguments.value("sun") {
            guard let event = SolarTrigger.Event(rawValue: name) else { throw UsageError("--sun must be sunrise, sunset, dawn, dusk or noon") }
            var depression = SolarTrigger.civil
            switch arguments.value("depression") {
            case nil, "civil": break
            case "nautical": depression = 12
            case "astronomical": depression = 18
            case let text?:
                guard let value = Double(text) else { throw UsageError("--depression is civil, nautical, astronomical or degrees") }
                depression = value
            }
            let offset = try arguments.value("sun-offset").map { text -> Double in
                guard let value = Double(text) else { throw UsageError("--sun-offset must be seconds") }
                return value
            } ?? 0
            trigger.sun = SolarTrigger(event: event, depression: depression, offset: offset, place: place)
        }
        if let text = arguments.value("region") {
            guard let radius = Double(text) else { throw UsageError("--region takes a radius in metres") }
            guard let place else { throw UsageError("--region needs --lat and --lon (the centre)") }
            let on = arguments.value("on") ?? "both"
            guard ["entry", "exit", "both"].contains(on) else { throw UsageError("--on must be entry, exit or both") }
            trigger.region = RegionTrigger(
                center: place, radius: radius, notifyOnEntry: on != "exit", notifyOnExit: on != "entry",
                triggersOnce: !arguments.has("every-crossing"))
        }
        trigger.calendars = arguments.all("calendar")
    }
}
