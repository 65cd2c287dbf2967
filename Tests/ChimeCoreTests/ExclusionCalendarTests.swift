import ChimeCore
import Foundation
import Testing

/// Exclusion calendars: days, yearly days, weekdays and ranges, evaluated in the recipient's
/// zone, across DST changes and zone changes; the recurrence skips what they exclude.
@Suite struct ExclusionCalendarTests {
    static func instant(_ text: String) throws -> Date { try RFC3339.parseInstant(text) }

    static let holidays: ExclusionCalendar = {
        let json = #"{"dates":["2026-12-25","2027-03-28"],"yearly":["01-01"],"weekdays":["SU"],"ranges":[{"from":"2026-12-30T18:00:00","to":"2026-12-31T06:00:00"},{"from":"2027-01-05T00:00:00Z","to":"2027-01-05T12:00:00Z"}]}"#
        return try! JSONDecoder().decode(ExclusionCalendar.self, from: Data(json.utf8))
    }()

    @Test func aDailyReminderSkipsExcludedDaysInItsRecipientsZone() throws {
        let berlin = try ZoneRules.zone(named: "Europe/Berlin")
        let trigger = Trigger(
            start: .wallClock(LocalDateTime(year: 2026, month: 12, day: 24, hour: 9), zoneIdentifier: "Europe/Berlin"),
            repeatRule: RepeatRule(unit: .day, interval: 1), calendars: ["holidays"])
        let recurrence = try trigger.makeRecurrence(
            place: nil, exclusion: OccurrenceExclusion(calendars: [("holidays", Self.holidays)], zone: berlin))
        let days = recurrence.occurrences(onOrAfter: try Self.instant("2026-12-24T00:00:00Z"), limit: 10).map {
            ZoneRules.localDateTime(at: $0.instant, in: berlin).description
        }
        // 25th a date, 27th and 3rd Sundays, 1st yearly, 5th 09:00 CET inside the UTC range.
        #expect(days == [
            "2026-12-24T09:00:00", "2026-12-26T09:00:00", "2026-12-28T09:00:00", "2026-12-29T09:00:00",
            "2026-12-30T09:00:00", "2026-12-31T09:00:00", "2027-01-02T09:00:00", "2027-01-04T09:00:00",
            "2027-01-06T09:00:00", "2027-01-07T09:00:00",
        ])
        // firstOccurrence skips the same ones.
        let next = recurrence.firstOccurrence(onOrAfter: try Self.instant("2026-12-25T00:00:00Z"))
        #expect(next.map { ZoneRules.localDateTime(at: $0.instant, in: berlin).description } == "2026-12-26T09:00:00")
    }

    @Test func theWallClockRangeFollowsTheZoneAcrossAnOvernightWindow() throws {
        let tokyo = try ZoneRules.zone(named: "Asia/Tokyo")
        let hourly = Trigger(start: .instant(try Self.instant("2026-12-30T00:00:00Z")), repeatRule: RepeatRule(unit: .hour, interval: 1))
        let recurrence = try hourly.makeRecurrence(
            place: nil, exclusion: OccurrenceExclusion(calendars: [("holidays", Self.holidays)], zone: tokyo))
        // 18:00–06:00 Tokyo on Dec 30/31 is 09:00–21:00 UTC on Dec 30.
        let hours = recurrence.occurrences(onOrAfter: try Self.instant("2026-12-30T07:00:00Z"), limit: 4).map { RFC3339.format($0.instant) }
        #expect(hours == ["2026-12-30T07:00:00.000Z", "2026-12-30T08:00:00.000Z", "2026-12-30T21:00:00.000Z", "2026-12-30T22:00:00.000Z"])
    }

    @Test func aDayExcludedOnTheDSTChangeEndsAtTheNextLocalMidnight() throws {
        // 2027-03-28 is the spring-forward Sunday in Berlin (23 hours long) and a listed date.
        let berlin = try ZoneRules.zone(named: "Europe/Berlin")
        let noon = try Self.instant("2027-03-28T10:00:00Z")
        let found = try #require(Self.holidays.exclusion(at: noon, in: berlin))
        #expect(found.reason == "date 2027-03-28")
        #expect(found.until == (try Self.instant("2027-03-28T22:00:00Z")), "midnight CEST after the 23-hour day")
        // The same instant in New York is 06:00 on Sunday the 28th: a Sunday there too.
        let newYork = try ZoneRules.zone(named: "America/New_York")
        #expect(Self.holidays.exclusion(at: noon, in: newYork)?.reason == "date 2027-03-28")
        // A zone change moves the excluded day: Christmas in Auckland ends before it starts in Honolulu.
        let christmasEvening = try Self.instant("2026-12-25T11:30:00Z")
        #expect(Self.holidays.exclusion(at: christmasEvening, in: try ZoneRules.zone(named: "Pacific/Auckland")) == nil)
        #expect(Self.holidays.exclusion(at: christmasEvening, in: try ZoneRules.zone(named: "Pacific/Honolulu"))?.reason == "date 2026-12-25")
    }

    @Test func calendarsComeFromICSFiles() throws {
        let ics = """
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            BEGIN:VEVENT\r
            UID:1\r
            DTSTART;VALUE=DATE:20261225\r
            DTEND;VALUE=DATE:20261227\r
            SUMMARY:Christmas\r
            END:VEVENT\r
            BEGIN:VEVENT\r
            UID:2\r
            DTSTART;VALUE=DATE:20270101\r
            RRULE:FREQ=YEARLY\r
            SUMMARY:New year\r
            END:VEVENT\r
            BEGIN:VEVENT\r
            UID:3\r
            DTSTART;TZID=Europe/Berlin:20261101T020000\r
            DTEND;TZID=Europe/Berlin:20261101T040000\r
            SUMMARY:Maintenance\r
            END:VEVENT\r
            END:VCALENDAR\r

            """
        let calendar = try ExclusionCalendar(ics: ics)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(calendar), as: UTF8.self)
        #expect(json == #"{"dates":["2026-12-25","2026-12-26"],"ranges":[{"from":"2026-11-01T01:00:00.000Z","to":"2026-11-01T03:00:00.000Z"}],"yearly":["01-01"]}"#)
        #expect(throws: ValidationError.self) { try ExclusionCalendar(ics: "not a calendar") }
    }

    @Test func malformedCalendarsAreRefused() {
        for bad in [
            #"{"dates":["2026-02-30"]}"#, #"{"yearly":["13-01"]}"#, #"{"weekdays":["XX"]}"#, #"{"colour":1}"#,
        ] {
            #expect(throws: (any Error).self, "\(bad)") { try JSONDecoder().decode(ExclusionCalendar.self, from: Data(bad.utf8)) }
        }
        let backwards = ExclusionCalendar(ranges: [ExclusionRange(from: .instant(Date(timeIntervalSince1970: 10)), to: .instant(Date(timeIntervalSince1970: 5)))])
        #expect(throws: ValidationError.self) { try backwards.validate() }
        #expect(throws: ValidationError.self) { try Trigger.validateCalendarName("no spaces", field: "f") }
    }
}
