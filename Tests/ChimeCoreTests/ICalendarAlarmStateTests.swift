import ChimeRuntime
import Foundation
import Testing

@testable import ChimeCore

/// Calendar import against what calendar clients record and write: past alarms, RFC 9074
/// acknowledgement and snooze, Thunderbird's X-MOZ-* state, Windows zone names and custom
/// VTIMEZONE rules. Fixtures follow RFC 9074 §6–7 and the shapes Outlook and Thunderbird export.
@Suite struct ICalendarAlarmStateTests {
    static func calendar(_ body: String) -> String {
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n\(body)END:VCALENDAR\r\n"
    }

    static func instant(_ text: String) throws -> Date { try RFC3339.parseInstant(text) }

    /// The import at `now` (past alarms skipped unless `now` is nil) and its fire instants until 2030.
    static func run(_ text: String, now: String?, defaultAlarm: Double? = nil) throws -> (CalendarImport, [String]) {
        let options = CalendarImportOptions(
            recipient: "r", defaultAlarm: defaultAlarm, skipsAlarmsBefore: try now.map(instant),
            windowsZoneNames: WindowsZoneNames.ianaIdentifier(forWindowsName:))
        let result = try CalendarImporter.makeImport(text, options: options)
        let fires = try result.reminders.flatMap { reminder in
            try reminder.fireInstants(from: try instant(now ?? "1970-01-01T00:00:00Z"), through: try instant("2030-01-01T00:00:00Z"))
        }.map(RRuleOracle.utcText).sorted()
        return (result, fires)
    }

    /// RFC 9074 §7.1's shape: an event at 09:00Z with a 15-minute alarm the user snoozed at
    /// 08:45 for five minutes (the original acknowledged, a snooze alarm at 08:50).
    static let snoozedEvent = calendar("""
        BEGIN:VEVENT\r\nUID:snoozed\r\nDTSTART:20260604T090000Z\r\nDTEND:20260604T100000Z\r\nSUMMARY:Meeting\r
        BEGIN:VALARM\r\nUID:8297C37D-BA2D-4476-91AE-C1EAA364F8E1\r\nTRIGGER:-PT15M\r\nACTION:DISPLAY\r
        DESCRIPTION:Event reminder\r\nACKNOWLEDGED:20260604T084500Z\r\nEND:VALARM\r
        BEGIN:VALARM\r\nUID:DE7B5C34-83FF-47FE-BE9E-FF41AE6DD097\r\nTRIGGER;VALUE=DATE-TIME:20260604T085000Z\r
        RELATED-TO;RELTYPE=SNOOZE:8297C37D-BA2D-4476-91AE-C1EAA364F8E1\r\nACTION:DISPLAY\r
        DESCRIPTION:Event reminder\r\nEND:VALARM\r\nEND:VEVENT\r\n
        """)

    @Test func pastAlarmsAreLeftOutAndCountedUnlessIncluded() throws {
        let text = Self.calendar("""
            BEGIN:VEVENT\r\nUID:old\r\nDTSTART:20220101T090000Z\r\nBEGIN:VALARM\r\nTRIGGER:-PT1H\r\nEND:VALARM\r\nEND:VEVENT\r
            BEGIN:VEVENT\r\nUID:oldseries\r\nDTSTART:20220101T090000Z\r\nRRULE:FREQ=DAILY;COUNT=3\r
            BEGIN:VALARM\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r
            BEGIN:VEVENT\r\nUID:yearly\r\nDTSTART:20220101T090000Z\r\nRRULE:FREQ=YEARLY\r
            BEGIN:VALARM\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r
            BEGIN:VEVENT\r\nUID:soon\r\nDTSTART:20261224T090000Z\r\nBEGIN:VALARM\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r
            BEGIN:VEVENT\r\nUID:plain\r\nDTSTART:20261224T090000Z\r\nEND:VEVENT\r\n
            """)
        let (skipping, fires) = try Self.run(text, now: "2026-12-01T12:00:00Z")
        #expect(fires.prefix(2) == ["2026-12-24T08:45:00Z", "2027-01-01T09:00:00Z"])
        #expect(skipping.reminders.count == 2, "the coming one-shot and the yearly series")
        #expect(skipping.summary.past == 2)
        #expect(skipping.summary.components == 5)
        #expect(skipping.summary.withoutAlarms == 1)
        let (including, _) = try Self.run(text, now: nil)
        #expect(including.reminders.count == 4)
        #expect(including.summary.past == 0)
        let (defaulted, _) = try Self.run(text, now: "2026-12-01T12:00:00Z", defaultAlarm: 600)
        #expect(defaulted.reminders.count == 3, "the event without VALARM gets the default alarm")
    }

    @Test func rfc9074SnoozeAlarmReplacesTheAcknowledgedOriginal() throws {
        let (before, fires) = try Self.run(Self.snoozedEvent, now: "2026-06-04T08:46:00Z")
        #expect(fires == ["2026-06-04T08:50:00Z"])
        #expect(before.summary.snoozed == 1)
        #expect(before.summary.acknowledged == 0)
        // Without the past cut-off the original (08:45) still does not fire: it is acknowledged.
        let (all, allFires) = try Self.run(Self.snoozedEvent, now: nil)
        #expect(allFires == ["2026-06-04T08:50:00Z"])
        #expect(all.summary.snoozed == 1)
    }

    @Test func snoozeReplacesTheOriginalEvenWithoutAcknowledged() throws {
        let text = Self.snoozedEvent.replacingOccurrences(of: "ACKNOWLEDGED:20260604T084500Z\r\n", with: "")
        let (result, fires) = try Self.run(text, now: "2026-06-04T08:00:00Z")
        #expect(fires == ["2026-06-04T08:50:00Z"])
        #expect(result.summary.snoozed == 1)
    }

    @Test func acknowledgedAtOrAfterTheInstantIsNotFiredAndEarlierIs() throws {
        func event(_ acknowledged: String) -> String {
            Self.calendar("""
                BEGIN:VEVENT\r\nUID:a\r\nDTSTART:20261224T090000Z\r
                BEGIN:VALARM\r\nTRIGGER:-PT15M\r\nACKNOWLEDGED:\(acknowledged)\r\nEND:VALARM\r\nEND:VEVENT\r\n
                """)
        }
        let (equal, equalFires) = try Self.run(event("20261224T084500Z"), now: nil)
        #expect(equalFires.isEmpty, "RFC 9074 §6.1: greater than or equal to the trigger time")
        #expect(equal.summary.acknowledged == 1)
        let (_, earlierFires) = try Self.run(event("20261224T084459Z"), now: nil)
        #expect(earlierFires == ["2026-12-24T08:45:00Z"])
    }

    @Test func acknowledgedRecurringAlarmFiresOnlyLaterOccurrences() throws {
        let text = Self.calendar("""
            BEGIN:VEVENT\r\nUID:daily\r\nDTSTART;TZID=Europe/Berlin:20261221T090000\r\nRRULE:FREQ=DAILY;COUNT=5\r
            BEGIN:VALARM\r\nTRIGGER:-PT10M\r\nACKNOWLEDGED:20261223T080000Z\r\nEND:VALARM\r\nEND:VEVENT\r\n
            """)
        // 08:50 Berlin = 07:50Z; the 21st–23rd are acknowledged, even those after "now".
        let (result, fires) = try Self.run(text, now: "2026-12-20T00:00:00Z")
        #expect(fires == ["2026-12-24T07:50:00Z", "2026-12-25T07:50:00Z"])
        #expect(result.reminders.first?.trigger.exceptionDates.count == 3)
        let (allAcknowledged, none) = try Self.run(
            text.replacingOccurrences(of: "20261223T080000Z", with: "20261230T000000Z"), now: "2026-12-20T00:00:00Z")
        #expect(none.isEmpty)
        #expect(allAcknowledged.summary.acknowledged == 1)
    }

    /// Thunderbird writes acknowledgement and snooze on the VEVENT, not the VALARM.
    @Test func thunderbirdLastAckAndSnoozeTimeMeanTheSame() throws {
        let acknowledged = Self.calendar("""
            BEGIN:VEVENT\r\nUID:tb1\r\nX-MOZ-LASTACK:20261224T084600Z\r\nDTSTART:20261224T090000Z\r
            BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r
            BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT\r\n
            """)
        let (ackResult, ackFires) = try Self.run(acknowledged, now: nil)
        #expect(ackFires == ["2026-12-24T08:55:00Z"])
        #expect(ackResult.summary.acknowledged == 1)
        let snoozed = Self.calendar("""
            BEGIN:VEVENT\r\nUID:tb2\r\nX-MOZ-LASTACK:20261224T084600Z\r\nX-MOZ-SNOOZE-TIME:20261224T085100Z\r
            DTSTART:20261224T090000Z\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r
            BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT\r\n
            """)
        let (snoozeResult, snoozeFires) = try Self.run(snoozed, now: "2026-12-24T08:47:00Z")
        #expect(snoozeFires == ["2026-12-24T08:51:00Z", "2026-12-24T08:55:00Z"])
        #expect(snoozeResult.summary.snoozed == 1)
        #expect(snoozeResult.reminders.count == 2)
        // Re-importing gives the snooze the same id.
        let (again, _) = try Self.run(snoozed, now: "2026-12-24T08:47:00Z")
        #expect(again.reminders.map(\.id) == snoozeResult.reminders.map(\.id))
    }

    @Test func thunderbirdExportWithLastAckAfterTheAlarmIsNotFired() throws {
        // The event of recurring-ical-events' alarm_15_min_before_event_snoozed.ics (Thunderbird 128).
        let text = Self.calendar("""
            BEGIN:VEVENT\r\nUID:a26289e0-8739-488b-b706-77c9364193c1\r\nSUMMARY:event\r
            X-MOZ-LASTACK:20241002T120844Z\r\nDTSTART;TZID=Europe/London:20241002T110000\r
            DTEND;TZID=Europe/London:20241002T120000\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r
            END:VALARM\r\nEND:VEVENT\r\n
            """)
        let (result, fires) = try Self.run(text, now: nil)
        #expect(fires.isEmpty)
        #expect(result.summary.acknowledged == 1)
    }

    @Test(arguments: [
        ("W. Europe Standard Time", "2026-07-01T07:00:00Z"),
        ("Eastern Standard Time", "2026-07-01T13:00:00Z"),
        ("AUS Eastern Standard Time", "2026-06-30T23:00:00Z"),
        ("India Standard Time", "2026-07-01T03:30:00Z"),
    ])
    func windowsZoneNamesMapThroughCLDR(name: String, expected: String) throws {
        #expect(WindowsZoneNames.isAvailable)
        let text = Self.calendar("""
            BEGIN:VEVENT\r\nUID:w\r\nDTSTART;TZID=\(name):20260701T090000\r\nBEGIN:VALARM\r\nTRIGGER:PT0S\r\nEND:VALARM\r
            END:VEVENT\r\n
            """)
        let (result, fires) = try Self.run(text, now: nil)
        #expect(fires == [expected])
        #expect(result.skipped.isEmpty)
    }

    @Test func outlookVTimeZoneWithAWindowsNameFollowsItsIANAZone() throws {
        let text = Self.calendar("""
            BEGIN:VTIMEZONE\r\nTZID:W. Europe Standard Time\r\nBEGIN:STANDARD\r\nDTSTART:16010101T030000\r
            TZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\r\nEND:STANDARD\r
            BEGIN:DAYLIGHT\r\nDTSTART:16010101T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r
            RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r
            BEGIN:VEVENT\r\nUID:o\r\nDTSTART;TZID=W. Europe Standard Time:20261023T090000\r\nRRULE:FREQ=DAILY;COUNT=3\r
            BEGIN:VALARM\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n
            """)
        let (result, fires) = try Self.run(text, now: nil)
        #expect(fires == ["2026-10-23T06:45:00Z", "2026-10-24T06:45:00Z", "2026-10-25T07:45:00Z"], "across the DST end")
        #expect(result.reminders.first?.trigger.timeZoneIdentifier == "Europe/Berlin")
        #expect(result.notes == ["time zone 'W. Europe Standard Time' read as Europe/Berlin (Windows name, CLDR windowsZones)"])
    }

    @Test func customVTimeZoneRulesAreCarriedByTheIANAZoneThatAgrees() throws {
        let text = Self.calendar("""
            BEGIN:VTIMEZONE\r\nTZID:Company Time\r\nBEGIN:STANDARD\r\nDTSTART:19671029T020000\r
            TZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500\r\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\nEND:STANDARD\r
            BEGIN:DAYLIGHT\r\nDTSTART:19870405T020000\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400\r
            RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r
            BEGIN:VEVENT\r\nUID:c\r\nDTSTART;TZID=Company Time:20261030T090000\r\nRRULE:FREQ=WEEKLY;COUNT=2\r
            BEGIN:VALARM\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n
            """)
        let (result, fires) = try Self.run(text, now: nil)
        #expect(fires == ["2026-10-30T13:00:00Z", "2026-11-06T14:00:00Z"])
        #expect(result.skipped.isEmpty)
        let zone = try #require(result.reminders.first?.trigger.timeZoneIdentifier)
        #expect(result.notes == ["time zone 'Company Time' read as \(zone), whose offsets equal its VTIMEZONE rules"])
    }

    @Test func fixedOffsetVTimeZoneIsRead() throws {
        let text = Self.calendar("""
            BEGIN:VTIMEZONE\r\nTZID:GMT +0530 (Standard)\r\nBEGIN:STANDARD\r\nDTSTART:16010101T000000\r
            TZOFFSETFROM:+0530\r\nTZOFFSETTO:+0530\r\nEND:STANDARD\r\nEND:VTIMEZONE\r
            BEGIN:VEVENT\r\nUID:f\r\nDTSTART;TZID=GMT +0530 (Standard):20261201T100000\r
            BEGIN:VALARM\r\nTRIGGER:-PT30M\r\nEND:VALARM\r\nEND:VEVENT\r\n
            """)
        let (result, fires) = try Self.run(text, now: nil)
        #expect(fires == ["2026-12-01T04:00:00Z"])
        #expect(result.skipped.isEmpty)
    }

    @Test func vTimeZoneRulesNoIANAZoneFollowsStillPlaceOneShots() throws {
        // Daylight time from the 2nd Sunday of February to the 1st Sunday of June: no real zone.
        let definition = """
            BEGIN:VTIMEZONE\r\nTZID:Odd\r\nBEGIN:STANDARD\r\nDTSTART:20000604T030000\r\nTZOFFSETFROM:+0300\r
            TZOFFSETTO:+0200\r\nRRULE:FREQ=YEARLY;BYMONTH=6;BYDAY=1SU\r\nEND:STANDARD\r\nBEGIN:DAYLIGHT\r
            DTSTART:20000213T020000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0300\r\nRRULE:FREQ=YEARLY;BYMONTH=2;BYDAY=2SU\r
            END:DAYLIGHT\r\nEND:VTIMEZONE\r\n
            """
        let text = Self.calendar(definition + """
            BEGIN:VEVENT\r\nUID:one\r\nDTSTART;TZID=Odd:20260301T090000\r\nEND:VEVENT\r
            BEGIN:VEVENT\r\nUID:two\r\nDTSTART;TZID=Odd:20260701T090000\r\nEND:VEVENT\r
            BEGIN:VEVENT\r\nUID:series\r\nDTSTART;TZID=Odd:20260701T090000\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n
            """)
        let (result, fires) = try Self.run(text, now: nil, defaultAlarm: 0)
        #expect(fires == ["2026-03-01T06:00:00Z", "2026-07-01T07:00:00Z"])
        #expect(result.skipped.map(\.uid) == ["series"])
        #expect(result.notes == ["time zone 'Odd' read by its own VTIMEZONE rules (no IANA zone agrees with them)"])
    }

    @Test func unknownZoneNamesAreStillReported() throws {
        let text = Self.calendar("BEGIN:VEVENT\r\nUID:u\r\nDTSTART;TZID=Mars Standard Time:20260101T090000\r\nEND:VEVENT\r\n")
        let (result, _) = try Self.run(text, now: nil, defaultAlarm: 0)
        #expect(result.skipped.map(\.reason) == [
            "time zone 'Mars Standard Time' is neither an IANA zone, a Windows zone name, nor a VTIMEZONE Chime can read"
        ])
    }
}

/// What a skipped component echoes back is bounded, whatever the calendar holds.
@Suite struct SkippedComponentEchoTests {
    @Test func aHugeSummaryUIDAndZoneAreEchoedCutTo200And400Scalars() throws {
        let summary = String(repeating: "S", count: 2 << 20)
        let uid = String(repeating: "u", count: 1000)
        let zone = String(repeating: "z", count: 5000)
        let text = ICalendarAlarmStateTests.calendar(
            "BEGIN:VEVENT\r\nUID:\(uid)\r\nSUMMARY:\(summary)\r\nDTSTART;TZID=\(zone):20260101T090000\r\nEND:VEVENT\r\n")
        let (result, _) = try ICalendarAlarmStateTests.run(text, now: nil, defaultAlarm: 0)
        #expect(result.skipped.count == 1)
        let skipped = try #require(result.skipped.first)
        #expect(skipped.summary == String(repeating: "S", count: 200) + "…")
        #expect(skipped.uid == String(repeating: "u", count: 200) + "…")
        #expect(skipped.reason == "time zone '" + String(repeating: "z", count: 389) + "…")
    }

    @Test(arguments: [
        ("", 3, ""), ("abc", 3, "abc"), ("abcd", 3, "abc…"), ("e\u{301}e\u{301}", 3, "e\u{301}e…"), ("ab", 0, "…"),
    ])
    func boundedCutsAtScalars(text: String, limit: Int, expected: String) {
        #expect(SkippedComponent.bounded(text, to: limit) == expected)
        #expect(SkippedComponent.bounded(text, to: limit).unicodeScalars.count <= limit + 1)
    }
}
