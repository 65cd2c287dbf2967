import Foundation
import Testing

@testable import ChimeCore

@Suite struct ICalendarImportTests {
    static func calendar(_ body: String, header: String = "") -> String {
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n\(header)\(body)END:VCALENDAR\r\n"
    }

    static func fires(_ text: String, zone: String = "UTC", defaultAlarm: Double? = nil) throws -> [String] {
        let result = try CalendarImporter.makeImport(
            text, options: CalendarImportOptions(recipient: "r", defaultZone: zone, defaultAlarm: defaultAlarm))
        return try result.reminders.flatMap { reminder in
            try reminder.fireInstants(from: .distantPast, through: try RFC3339.parseInstant("2030-01-01T00:00:00Z"))
        }.map(RRuleOracle.utcText).sorted()
    }

    @Test func unfoldsLinesAndReadsQuotedParametersAndEscapes() throws {
        let text = "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:Lunch\\, then\n  coffee\\; \\\\ and\\ntalk\nATTENDEE;CN=\"Doe, J\";ROLE=A,B:mailto:j@x\nX-UNKNOWN;FOO=bar:whatever\nEND:VEVENT\nEND:VCALENDAR"
        let event = try #require(try ICalendarParser.parse(text).first?.components.first)
        #expect(event.property("SUMMARY")?.text == "Lunch, then coffee; \\ and\ntalk")
        #expect(event.property("ATTENDEE")?.parameters["CN"] == ["Doe, J"])
        #expect(event.property("ATTENDEE")?.parameters["ROLE"] == ["A", "B"])
        #expect(event.property("ATTENDEE")?.value == "mailto:j@x")
        #expect(event.property("X-UNKNOWN")?.value == "whatever")
    }

    @Test func relativeAlarmBeforeStartInIANAZone() throws {
        let text = Self.calendar(
            "BEGIN:VEVENT\r\nUID:a\r\nSUMMARY:S\r\nDTSTART;TZID=Europe/Berlin:20260324T090000\r\nRRULE:FREQ=WEEKLY;COUNT=2\r\nBEGIN:VALARM\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n")
        // The second week crosses into CEST (2026-03-29).
        #expect(try Self.fires(text) == ["2026-03-24T07:45:00Z", "2026-03-31T06:45:00Z"])
    }

    @Test func alarmRelatedToEndRepeatAndAbsolute() throws {
        let text = Self.calendar(
            """
            BEGIN:VEVENT\r\nUID:b\r\nDTSTART:20260101T100000Z\r\nDTEND:20260101T110000Z\r
            BEGIN:VALARM\r\nTRIGGER;RELATED=END:-PT10M\r\nEND:VALARM\r
            BEGIN:VALARM\r\nTRIGGER:-P1D\r\nREPEAT:2\r\nDURATION:PT1H\r\nEND:VALARM\r
            BEGIN:VALARM\r\nTRIGGER;VALUE=DATE-TIME:20251231T120000Z\r\nEND:VALARM\r
            END:VEVENT\r\n
            """)
        #expect(
            try Self.fires(text) == [
                "2025-12-31T10:00:00Z", "2025-12-31T11:00:00Z", "2025-12-31T12:00:00Z", "2025-12-31T12:00:00Z",
                "2026-01-01T10:50:00Z",
            ])
    }

    @Test func overrideReplacesAndCancellationRemovesAnOccurrence() throws {
        let text = Self.calendar(
            """
            BEGIN:VEVENT\r\nUID:c\r\nDTSTART:20260105T090000Z\r\nRRULE:FREQ=DAILY;COUNT=4\r
            BEGIN:VALARM\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r
            BEGIN:VEVENT\r\nUID:c\r\nRECURRENCE-ID:20260106T090000Z\r\nDTSTART:20260106T150000Z\r
            BEGIN:VALARM\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r
            BEGIN:VEVENT\r\nUID:c\r\nRECURRENCE-ID:20260107T090000Z\r\nDTSTART:20260107T090000Z\r\nSTATUS:CANCELLED\r\nEND:VEVENT\r\n
            """)
        #expect(try Self.fires(text) == ["2026-01-05T09:00:00Z", "2026-01-06T15:00:00Z", "2026-01-08T09:00:00Z"])
    }

    @Test func allDayAndFloatingUseXWRTimeZone() throws {
        let text = Self.calendar(
            "BEGIN:VEVENT\nUID:d\nDTSTART;VALUE=DATE:20260701\nEND:VEVENT\nBEGIN:VEVENT\nUID:e\nDTSTART:20260701T090000\nEND:VEVENT\n",
            header: "X-WR-TIMEZONE:America/New_York\n")
        #expect(try Self.fires(text, defaultAlarm: 0) == ["2026-07-01T04:00:00Z", "2026-07-01T13:00:00Z"])
        #expect(try Self.fires(text) == [])
    }

    @Test func unknownTimeZoneIsReportedAndTheRestImports() throws {
        let text = Self.calendar(
            "BEGIN:VEVENT\nUID:f\nSUMMARY:Bad\nDTSTART;TZID=Nowhere Standard:20260101T090000\nEND:VEVENT\nBEGIN:VEVENT\nUID:g\nDTSTART:20260101T090000Z\nEND:VEVENT\n")
        let result = try CalendarImporter.makeImport(
            text, options: CalendarImportOptions(recipient: "r", defaultAlarm: 900))
        #expect(result.reminders.count == 1)
        #expect(result.skipped.map(\.uid) == ["f"])
        #expect(result.skipped.first?.reason.contains("Nowhere Standard") == true)
    }

    @Test func reminderIDsAreStableAndSafe() throws {
        let text = Self.calendar("BEGIN:VEVENT\nUID:h@example.com\nDTSTART:20260101T090000Z\nBEGIN:VALARM\nTRIGGER:-PT5M\nEND:VALARM\nEND:VEVENT\n")
        let options = CalendarImportOptions(recipient: "r")
        let first = try CalendarImporter.makeImport(text, options: options).reminders.map(\.id)
        let second = try CalendarImporter.makeImport(text, options: options).reminders.map(\.id)
        #expect(first == second)
        #expect(first.allSatisfy { $0.rawValue.hasPrefix("ics-") && $0.rawValue.count == 20 })
    }

    @Test func keepsCalendarZoneAfterByteOrderMark() throws {
        let text = "\u{FEFF}" + Self.calendar(
            "BEGIN:VEVENT\r\nUID:bom\r\nDTSTART:20261210T090000\r\nBEGIN:VALARM\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n",
            header: "X-WR-TIMEZONE:America/Chicago\r\n")
        // 09:00 floating in Chicago (CST, UTC−6) less 15 minutes; read in UTC it was 08:45Z.
        #expect(try Self.fires(text) == ["2026-12-10T14:45:00Z"])
        let roots = try ICalendarParser.parse(text)
        #expect(roots.map(\.name) == ["VCALENDAR"])
        #expect(roots.first?.property("X-WR-TIMEZONE")?.value == "America/Chicago")
    }

    @Test func dateExceptionRemovesTimedOccurrencesOnThatLocalDay() throws {
        // 20:00 in Chicago is 02:00Z the next day: the DATE is matched on the event's own clock.
        let text = Self.calendar(
            """
            BEGIN:VEVENT\r\nUID:exdate-day\r\nDTSTART;TZID=America/Chicago:20261207T200000\r
            RRULE:FREQ=DAILY;COUNT=4\r\nEXDATE;VALUE=DATE:20261208\r
            BEGIN:VALARM\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n
            """)
        #expect(try Self.fires(text) == ["2026-12-08T02:00:00Z", "2026-12-10T02:00:00Z", "2026-12-11T02:00:00Z"])
    }

    @Test func dateExceptionOfUTCSeriesUsesCalendarZone() throws {
        let text = Self.calendar(
            """
            BEGIN:VEVENT\r\nUID:exdate-utc\r\nDTSTART:20261207T030000Z\r
            RRULE:FREQ=HOURLY;INTERVAL=12;COUNT=4\r\nEXDATE;VALUE=DATE:20261207,20261209\r
            BEGIN:VALARM\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n
            """, header: "X-WR-TIMEZONE:America/Chicago\r\n")
        // 03:00Z Dec 7 is Dec 6 in Chicago; 15:00Z Dec 7 and 03:00Z Dec 8 are Dec 7 there.
        #expect(try Self.fires(text) == ["2026-12-07T03:00:00Z", "2026-12-08T15:00:00Z"])
    }
}
