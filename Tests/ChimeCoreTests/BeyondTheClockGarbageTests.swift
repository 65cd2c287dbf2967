import ChimeCore
import Foundation
import Testing

/// Outside bytes meet the new decoders (issue 41): damaged binary reminders with every new
/// trigger part, garbage `.ics` calendars, RSCALE rule text and JSON shapes each decode or
/// throw, never trap.
@Suite struct BeyondTheClockGarbageTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
    }

    static let everything = Reminder(
        id: "all", recipient: "r", content: Content(body: "b"),
        trigger: Trigger(
            start: .wallClock(LocalDateTime(year: 2024, month: 2, day: 23, hour: 10), zoneIdentifier: "Asia/Jerusalem"),
            spread: 90, calendars: ["holidays", "weekends"],
            scaledRule: try? ScaledRule(parsing: "RSCALE=HEBREW;FREQ=YEARLY;BYMONTH=5L;BYMONTHDAY=14")))

    static let sunAndRegion = [
        Reminder(id: "s", recipient: "r", content: Content(), trigger: Trigger(
            start: .instant(Trigger.unstarted), sun: SolarTrigger(event: .dusk, depression: 12, offset: -600, place: GeoPoint(latitude: 52.5, longitude: 13.4)))),
        Reminder(id: "g", recipient: "r", content: Content(), trigger: Trigger(
            start: .instant(Trigger.unstarted), region: RegionTrigger(center: GeoPoint(latitude: 52.5, longitude: 13.4), radius: 120, notifyOnExit: false))),
    ]

    @Test func damagedBinaryRemindersDecodeOrThrow() {
        var random = Generator(state: 0x41_2026)
        for reminder in [Self.everything] + Self.sunAndRegion {
            let bytes = reminder.binaryEncoded()
            #expect((try? Reminder(binary: bytes)) == reminder)
            for _ in 0..<3_000 {
                var damaged = bytes
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                if Bool.random(using: &random) { damaged = Array(damaged.prefix(Int.random(in: 0..<damaged.count, using: &random))) }
                _ = try? Reminder(binary: damaged)
                _ = try? Reminder.binarySummary(in: damaged[...])
            }
        }
    }

    @Test func garbageTextMeetsTheParsersAndTheirErrors() {
        var random = Generator(state: 7)
        let alphabet = Array("BEGIN:VCALENDAR\r\nVEVENT DTSTART;VALUE=DATE:2026123TZID=Europe/BerlinRRULE:FREQ=YEARLY;BYMONTH=5L;RSCALE=HEBREW,:;=Z-0{}[]\"".utf8)
        for _ in 0..<3_000 {
            let text = String(decoding: (0..<Int.random(in: 0...120, using: &random)).map { _ in alphabet.randomElement(using: &random)! }, as: UTF8.self)
            _ = try? ExclusionCalendar(ics: text)
            _ = try? ScaledRule(parsing: text)
            _ = try? JSONDecoder().decode(ExclusionCalendar.self, from: Data(text.utf8))
            _ = try? JSONDecoder().decode(Trigger.self, from: Data(text.utf8))
        }
        // Shapes that are almost right are refused with a reason.
        for json in [
            #"{"sun":{"event":"noon","offset":"-"}}"#, #"{"sun":{"event":"noon","depression":-1}}"#,
            #"{"region":{"latitude":1e400,"longitude":0,"radius":5}}"#, #"{"at":"2026-01-01T00:00:00Z","calendars":"holidays"}"#,
            #"{"at":"2026-01-01T00:00:00","timeZone":"UTC","rrule":"RSCALE=CHINESE;FREQ=WEEKLY"}"#,
        ] {
            let decoded = try? JSONDecoder().decode(Trigger.self, from: Data(json.utf8))
            let validated = decoded.flatMap { try? $0.makeRecurrence() }
            #expect(validated == nil, "\(json)")
        }
    }
}
