import Foundation
import Testing

@testable import ChimeCore

/// BYxxx expansion and limits of RFC 5545 §3.3.10 beyond the RFC's own examples: BYSETPOS,
/// ordinal weekdays, week numbers with WKST, COUNT and UNTIL.
@Suite struct RuleExpansionTests {
    /// (rule, start, zone, expected UTC instants); COUNT-bounded, so the list is complete.
    static let cases: [(String, String, String, [String])] = [
        // The last weekday of the month.
        ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=4", "2026-01-30T17:00", "UTC", [
            "2026-01-30T17:00:00Z", "2026-02-27T17:00:00Z", "2026-03-31T17:00:00Z", "2026-04-30T17:00:00Z",
        ]),
        // The first and last Tuesday-or-Thursday of each month.
        ("FREQ=MONTHLY;BYDAY=TU,TH;BYSETPOS=1,-1;COUNT=6", "2026-03-03T08:00", "America/New_York", [
            "2026-03-03T13:00:00Z", "2026-03-31T12:00:00Z", "2026-04-02T12:00:00Z", "2026-04-30T12:00:00Z",
            "2026-05-05T12:00:00Z", "2026-05-28T12:00:00Z",
        ]),
        // BYSETPOS over days × times: the last of 09:00 and 17:00 on Mondays of the week.
        ("FREQ=WEEKLY;BYDAY=MO,FR;BYHOUR=9,17;BYSETPOS=-1;COUNT=3", "2026-03-06T17:00", "UTC", [
            "2026-03-06T17:00:00Z", "2026-03-13T17:00:00Z", "2026-03-20T17:00:00Z",
        ]),
        // The last Friday of every month, across Berlin's switch to summer time.
        ("FREQ=MONTHLY;BYDAY=-1FR;COUNT=5", "2026-01-30T09:00", "Europe/Berlin", [
            "2026-01-30T08:00:00Z", "2026-02-27T08:00:00Z", "2026-03-27T08:00:00Z", "2026-04-24T07:00:00Z",
            "2026-05-29T07:00:00Z",
        ]),
        // The last Friday of the year (ordinal within the year, no BYMONTH).
        ("FREQ=YEARLY;BYDAY=-1FR;COUNT=3", "2026-12-25T09:00", "UTC", [
            "2026-12-25T09:00:00Z", "2027-12-31T09:00:00Z", "2028-12-29T09:00:00Z",
        ]),
        // The second Monday of March (ordinal within the month because of BYMONTH).
        ("FREQ=YEARLY;BYMONTH=3;BYDAY=2MO;COUNT=3", "2026-03-09T09:00", "UTC", [
            "2026-03-09T09:00:00Z", "2027-03-08T09:00:00Z", "2028-03-13T09:00:00Z",
        ]),
        // ISO week 1 (WKST=MO) reaches back into December: 2025-12-29 is in week 1 of 2026.
        ("FREQ=YEARLY;BYWEEKNO=1;BYDAY=MO,SU;COUNT=6;WKST=MO", "2025-01-05T09:00", "UTC", [
            "2025-01-05T09:00:00Z", "2025-12-29T09:00:00Z", "2026-01-04T09:00:00Z", "2027-01-04T09:00:00Z",
            "2027-01-10T09:00:00Z", "2028-01-03T09:00:00Z",
        ]),
        // With weeks from Sunday, week 1 of 2025 is Dec 29 – Jan 4 and of 2026 is Jan 4 – 10.
        ("FREQ=YEARLY;BYWEEKNO=1;BYDAY=MO,SU;COUNT=5;WKST=SU", "2025-01-05T09:00", "UTC", [
            "2025-01-05T09:00:00Z", "2026-01-04T09:00:00Z", "2026-01-05T09:00:00Z", "2027-01-03T09:00:00Z",
            "2027-01-04T09:00:00Z",
        ]),
        // The last ISO week: week 53 of 2026 is Dec 28, 2026 – Jan 3, 2027.
        ("FREQ=YEARLY;BYWEEKNO=-1;BYDAY=FR;COUNT=3", "2026-01-02T09:00", "UTC", [
            "2026-01-02T09:00:00Z", "2027-01-01T09:00:00Z", "2027-12-31T09:00:00Z",
        ]),
        // BYYEARDAY from the end, in a leap and a common year.
        ("FREQ=YEARLY;BYYEARDAY=-1,60;COUNT=4", "2024-02-29T12:00", "UTC", [
            "2024-02-29T12:00:00Z", "2024-12-31T12:00:00Z", "2025-03-01T12:00:00Z", "2025-12-31T12:00:00Z",
        ]),
        // DTSTART is always the first instance and counts towards COUNT, matched or not
        // (2026-03-03 is a Tuesday, not a first Friday).
        ("FREQ=MONTHLY;BYDAY=1FR;COUNT=3", "2026-03-03T09:00", "UTC", [
            "2026-03-03T09:00:00Z", "2026-03-06T09:00:00Z", "2026-04-03T09:00:00Z",
        ]),
        // BYDAY mixing plain and ordinal values selects any of them.
        ("FREQ=MONTHLY;BYDAY=MO,1FR;COUNT=6", "2026-01-01T09:00", "UTC", [
            "2026-01-01T09:00:00Z", "2026-01-02T09:00:00Z", "2026-01-05T09:00:00Z", "2026-01-12T09:00:00Z",
            "2026-01-19T09:00:00Z", "2026-01-26T09:00:00Z",
        ]),
        // BYHOUR/BYMINUTE expand a DAILY rule; BYMONTH limits it.
        ("FREQ=DAILY;BYMONTH=1;BYHOUR=8,20;BYMINUTE=15;COUNT=4", "2026-12-30T08:15", "UTC", [
            "2026-12-30T08:15:00Z", "2027-01-01T08:15:00Z", "2027-01-01T20:15:00Z", "2027-01-02T08:15:00Z",
        ]),
        // An UNTIL at DTSTART leaves DTSTART alone (one before it is refused: RecurrenceRuleTextTests).
        ("FREQ=DAILY;UNTIL=20260303T090000Z", "2026-03-03T09:00", "UTC", ["2026-03-03T09:00:00Z"]),
        // UNTIL is inclusive.
        ("FREQ=WEEKLY;UNTIL=20260317T090000Z", "2026-03-03T09:00", "UTC", [
            "2026-03-03T09:00:00Z", "2026-03-10T09:00:00Z", "2026-03-17T09:00:00Z",
        ]),
    ]

    @Test(arguments: cases)
    func expandsAsRFC5545Says(rrule: String, start: String, zone: String, expected: [String]) throws {
        let recurrence = try makeRuleRecurrence(rrule, from: start, in: zone)
        #expect(utcTexts(of: recurrence, count: expected.count + 1) == expected)
        let listed = recurrence.occurrences(onOrAfter: .distantPast, limit: expected.count + 1)
        #expect(listed == firstOccurrences(of: recurrence, count: expected.count + 1))
    }

    @Test func firstOccurrenceJumpsToYear9000WithoutWalkingAMinutelyRule() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=MINUTELY;INTERVAL=7;BYHOUR=9;BYDAY=MO", from: "1970-01-05T09:00", in: "Europe/Berlin")
        let found = try #require(recurrence.firstOccurrence(onOrAfter: try utc("9000-06-15T12:34:56Z")))
        #expect(try wallTexts(of: recurrence, count: 1, in: "Europe/Berlin") == ["1970-01-05T09:00:00"])
        // 9000-06-16 is a Monday, and 7-minute steps from 1970-01-05T09:00 land on 09:00 that
        // day (the minutes between are a multiple of 7).
        let zone = try ZoneRules.zone(named: "Europe/Berlin")
        #expect(ZoneRules.localDateTime(at: found.instant, in: zone).description == "9000-06-16T09:00:00")
    }

    @Test func countOfAHundredThousandIsResolvedOnceAndStaysCheap() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=DAILY;BYHOUR=9,21;COUNT=100000", from: "2026-01-01T09:00", in: "UTC")
        // Two a day from 2026-01-01: the 100,000th is the evening of day 49,999.
        let last = try #require(recurrence.firstOccurrence(onOrAfter: try utc("2162-11-23T12:00:00Z")))
        #expect(RFC3339.format(last.instant) == "2162-11-23T21:00:00.000Z")
        #expect(recurrence.nextOccurrence(after: last) == nil)
    }
}
