import Foundation
import Testing

@testable import ChimeCore

/// RRULEs across DST gaps and overlaps (America/New_York 2026: 02:00→03:00 on March 8,
/// 02:00→01:00 on November 1; Australia/Lord_Howe: 02:00→02:30 on October 4), with the
/// exact instants (RFC 5545 §3.3.5 resolution, §3.3.10 expansion).
@Suite struct RuleDSTTests {
    static let newYork = "America/New_York"

    /// (rule, start, expected UTC instants)
    static let wallClockCases: [(String, String, [String])] = [
        // Gap: 02:30 does not exist on March 8 and fires an hour later, at 03:30 EDT.
        ("FREQ=DAILY;COUNT=3", "2026-03-07T02:30", [
            "2026-03-07T07:30:00Z", "2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z",
        ]),
        // Overlap: 01:30 happens twice on November 1 and fires at the first, 01:30 EDT.
        ("FREQ=DAILY;COUNT=3", "2026-10-31T01:30", [
            "2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z",
        ]),
        ("FREQ=WEEKLY;COUNT=3", "2026-03-01T02:30", [
            "2026-03-01T07:30:00Z", "2026-03-08T07:30:00Z", "2026-03-15T06:30:00Z",
        ]),
        ("FREQ=WEEKLY;BYDAY=SU;COUNT=3", "2026-10-18T01:30", [
            "2026-10-18T05:30:00Z", "2026-10-25T05:30:00Z", "2026-11-01T05:30:00Z",
        ]),
        ("FREQ=MONTHLY;BYDAY=2SU;COUNT=3", "2026-02-08T02:30", [
            "2026-02-08T07:30:00Z", "2026-03-08T07:30:00Z", "2026-04-12T06:30:00Z",
        ]),
        ("FREQ=MONTHLY;BYDAY=1SU;COUNT=3", "2026-10-04T01:30", [
            "2026-10-04T05:30:00Z", "2026-11-01T05:30:00Z", "2026-12-06T06:30:00Z",
        ]),
        // Six wall-clock instances, five firings: 02:30 and 03:30 on March 8 are one instant.
        ("FREQ=DAILY;BYHOUR=2,3;BYMINUTE=30;COUNT=6", "2026-03-07T02:30", [
            "2026-03-07T07:30:00Z", "2026-03-07T08:30:00Z", "2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z",
            "2026-03-09T07:30:00Z",
        ]),
        // 02:45 shifts to 03:45 EDT, past 03:10: 03:10 and 03:45 would fire out of order or
        // twice, so only 02:10 (→03:10) and 02:45 (→03:45) fire on March 8.
        ("FREQ=DAILY;BYHOUR=2,3;BYMINUTE=10,45;COUNT=12", "2026-03-07T02:10", [
            "2026-03-07T07:10:00Z", "2026-03-07T07:45:00Z", "2026-03-07T08:10:00Z", "2026-03-07T08:45:00Z",
            "2026-03-08T07:10:00Z", "2026-03-08T07:45:00Z", "2026-03-09T06:10:00Z", "2026-03-09T06:45:00Z",
            "2026-03-09T07:10:00Z", "2026-03-09T07:45:00Z",
        ]),
        // HOURLY with BYHOUR expands on the wall clock: 01:30 fires once, at its first copy.
        ("FREQ=HOURLY;BYHOUR=0,1,2,3;COUNT=4", "2026-11-01T00:30", [
            "2026-11-01T04:30:00Z", "2026-11-01T05:30:00Z", "2026-11-01T07:30:00Z", "2026-11-01T08:30:00Z",
        ]),
        // A local UNTIL compares wall clocks: 02:30 on March 8 is before 03:00 and fires.
        ("FREQ=DAILY;UNTIL=20260308T030000", "2026-03-06T02:30", [
            "2026-03-06T07:30:00Z", "2026-03-07T07:30:00Z", "2026-03-08T07:30:00Z",
        ]),
        // A UTC UNTIL compares instants: the shifted 03:30 EDT (07:30Z) is past 07:29:59Z.
        ("FREQ=DAILY;UNTIL=20260308T072959Z", "2026-03-06T02:30", [
            "2026-03-06T07:30:00Z", "2026-03-07T07:30:00Z",
        ]),
    ]

    @Test(arguments: wallClockCases)
    func wallClockRulesResolveGapsForwardAndOverlapsToTheFirstCopy(rrule: String, start: String, expected: [String])
        throws
    {
        let recurrence = try makeRuleRecurrence(rrule, from: start, in: Self.newYork)
        #expect(utcTexts(of: recurrence, count: expected.count + 1) == expected)
    }

    @Test func lordHoweDailyShiftsByItsThirtyMinuteGap() throws {
        let recurrence = try makeRuleRecurrence("FREQ=DAILY", from: "2026-10-03T02:15", in: "Australia/Lord_Howe")
        #expect(utcTexts(of: recurrence, count: 3) == [
            "2026-10-02T15:45:00Z", "2026-10-03T15:45:00Z", "2026-10-04T15:15:00Z",
        ])
        #expect(try wallTexts(of: recurrence, count: 3, in: "Australia/Lord_Howe") == [
            "2026-10-03T02:15:00", "2026-10-04T02:45:00", "2026-10-05T02:15:00",
        ])
    }

    @Test func elapsedHourlyFiresInBothCopiesOfTheRepeatedHour() throws {
        let recurrence = try makeRuleRecurrence("FREQ=HOURLY;COUNT=4", from: "2026-11-01T00:30", in: Self.newYork)
        #expect(utcTexts(of: recurrence, count: 5) == [
            "2026-11-01T04:30:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-01T07:30:00Z",
        ])
        #expect(try wallTexts(of: recurrence, count: 4, in: Self.newYork) == [
            "2026-11-01T00:30:00", "2026-11-01T01:30:00", "2026-11-01T01:30:00", "2026-11-01T02:30:00",
        ])
    }

    @Test func elapsedMinutelyKeepsItsSpacingThroughTheGap() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=MINUTELY;INTERVAL=30;COUNT=4", from: "2026-03-08T01:00", in: Self.newYork)
        #expect(utcTexts(of: recurrence, count: 5) == [
            "2026-03-08T06:00:00Z", "2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z",
        ])
        #expect(try wallTexts(of: recurrence, count: 4, in: Self.newYork) == [
            "2026-03-08T01:00:00", "2026-03-08T01:30:00", "2026-03-08T03:00:00", "2026-03-08T03:30:00",
        ])
    }

    @Test func apiaDailyFiresOnceForItsSkippedDay() throws {
        // Pacific/Apia skipped 2011-12-30: 09:00 that day reads as 09:00 on the 31st.
        let recurrence = try makeRuleRecurrence("FREQ=DAILY;COUNT=5", from: "2011-12-28T09:00", in: "Pacific/Apia")
        #expect(utcTexts(of: recurrence, count: 5) == [
            "2011-12-28T19:00:00Z", "2011-12-29T19:00:00Z", "2011-12-30T19:00:00Z", "2011-12-31T19:00:00Z",
        ])
    }

    @Test func firstOccurrenceAfterAGapFindsTheShiftedInstance() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=DAILY;BYHOUR=2,3;BYMINUTE=10,45", from: "2026-03-07T02:10", in: Self.newYork)
        // 07:44Z is 03:44 EDT: the next instance is 02:45 shifted to 03:45 EDT.
        #expect(recurrence.firstOccurrence(onOrAfter: try utc("2026-03-08T07:44:00Z"))?.instant
            == (try utc("2026-03-08T07:45:00Z")))
        #expect(recurrence.firstOccurrence(onOrAfter: try utc("2026-03-08T07:45:01Z"))?.instant
            == (try utc("2026-03-09T06:10:00Z")))
    }
}
