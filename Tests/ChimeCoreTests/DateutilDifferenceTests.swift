import Foundation
import Testing

@testable import ChimeCore

/// Where Chime deliberately differs from python-dateutil's `rrule`, and the minimized
/// cases the differential test (`DateutilDifferentialTests`) found, each with the instants
/// RFC 5545 gives. Week numbers were checked against a brute-force ISO-style numbering
/// (Python's `date.isocalendar()` for WKST=MO).
@Suite struct DateutilDifferenceTests {
    /// dateutil requires a day to match both the plain and the ordinal BYDAY values, so
    /// `BYDAY=MO,1FR` never matches there; RFC 5545 lists days, any of which selects.
    @Test func mixedPlainAndOrdinalWeekdaysSelectAnyOfThem() throws {
        let recurrence = try makeRuleRecurrence("FREQ=MONTHLY;BYDAY=MO,1FR", from: "2026-01-02T09:00", in: "UTC")
        #expect(utcTexts(of: recurrence, count: 6) == [
            "2026-01-02T09:00:00Z", "2026-01-05T09:00:00Z", "2026-01-12T09:00:00Z", "2026-01-19T09:00:00Z",
            "2026-01-26T09:00:00Z", "2026-02-02T09:00:00Z",
        ])
    }

    /// Seed 20260501, case 1082, minimized: dateutil puts 2022-01-01 and 01-02 in week 53
    /// (it sizes 2021 with 2022's length); they are in ISO week 52 of 2021.
    @Test func weekFiftyThreeIsOnlyInLongISOYears() throws {
        let recurrence = try makeRuleRecurrence("FREQ=YEARLY;BYWEEKNO=53", from: "2019-08-07T20:00", in: "Australia/Lord_Howe")
        #expect(try wallTexts(of: recurrence, count: 10, in: "Australia/Lord_Howe") == [
            "2019-08-07T20:00:00", "2020-12-28T20:00:00", "2020-12-29T20:00:00", "2020-12-30T20:00:00",
            "2020-12-31T20:00:00", "2021-01-01T20:00:00", "2021-01-02T20:00:00", "2021-01-03T20:00:00",
            "2026-12-28T20:00:00", "2026-12-29T20:00:00",
        ])
    }

    /// Seed 20260502, case 2708, minimized: with weeks from Saturday, 2026-01-01 and 01-02
    /// are in week 52 of 2025, which dateutil misses for the same reason.
    @Test func weekFiftyTwoReachesIntoJanuaryWithSaturdayWeeks() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=YEARLY;BYWEEKNO=52;BYDAY=TH,FR;WKST=SA", from: "2025-01-01T09:00", in: "UTC")
        #expect(utcTexts(of: recurrence, count: 6) == [
            "2025-01-01T09:00:00Z", "2026-01-01T09:00:00Z", "2026-01-02T09:00:00Z", "2026-12-31T09:00:00Z",
            "2027-01-01T09:00:00Z", "2027-12-30T09:00:00Z",
        ])
    }

    /// Seed 20260502, case 3364, minimized: -53 is week 1 of a 53-week year, which for 2026
    /// starts on 2025-12-29; dateutil never numbers next year's days from the end.
    @Test func weekMinusFiftyThreeStartsInTheDecemberBefore() throws {
        let recurrence = try makeRuleRecurrence("FREQ=YEARLY;BYWEEKNO=-53", from: "2025-06-01T09:00", in: "UTC")
        #expect(utcTexts(of: recurrence, count: 10) == [
            "2025-06-01T09:00:00Z", "2025-12-29T09:00:00Z", "2025-12-30T09:00:00Z", "2025-12-31T09:00:00Z",
            "2026-01-01T09:00:00Z", "2026-01-02T09:00:00Z", "2026-01-03T09:00:00Z", "2026-01-04T09:00:00Z",
            "2031-12-29T09:00:00Z", "2031-12-30T09:00:00Z",
        ])
    }

    /// Seed 20260501, case 3979, minimized: dateutil's first week starts at DTSTART, so
    /// BYSETPOS=1 picks Sunday June 1st; RFC 5545 counts within the whole week, whose first
    /// instance (Wednesday May 28th) is before DTSTART, so the next one is June 4th.
    @Test func weeklySetPositionsCountFromTheStartOfTheWeek() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=WEEKLY;BYDAY=WE,FR,SU;BYSETPOS=1", from: "2014-05-31T02:45", in: "UTC")
        #expect(utcTexts(of: recurrence, count: 3) == [
            "2014-05-31T02:45:00Z", "2014-06-04T02:45:00Z", "2014-06-11T02:45:00Z",
        ])
    }

    /// dateutil leaves out a DTSTART its rule does not produce; RFC 5545 §3.8.5.3 makes it
    /// the first instance, counted by COUNT.
    @Test func anUnmatchedStartIsTheFirstInstanceAndCounts() throws {
        let recurrence = try makeRuleRecurrence("FREQ=WEEKLY;BYDAY=FR;COUNT=2", from: "2026-03-03T09:00", in: "UTC")
        #expect(utcTexts(of: recurrence, count: 3) == ["2026-03-03T09:00:00Z", "2026-03-06T09:00:00Z"])
    }

    /// Seed 3, case 1295 (found when the oracle stopped after 60 dateutil results, all
    /// dropped): DTSTART 02:59 is in the gap and fires at 03:59 EDT, so 03:00–03:59 fire
    /// no later than it and are dropped; the next instance is 01:00 the next day.
    @Test func minutelyStartedInAGapDropsTheHourItWasShiftedInto() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=MINUTELY;BYHOUR=1,2,3", from: "2028-03-12T02:59", in: "America/New_York")
        #expect(utcTexts(of: recurrence, count: 3) == [
            "2028-03-12T07:59:00Z", "2028-03-13T05:00:00Z", "2028-03-13T05:01:00Z",
        ])
    }

    /// Elapsed time (deliberate): MINUTELY and HOURLY without BYxxx keep their spacing where
    /// dateutil's wall-clock expansion would name 02:00 twice or skip it.
    @Test func subDailyRulesWithoutSelectorsRunOnElapsedTime() throws {
        let fallBack = try makeRuleRecurrence(
            "FREQ=MINUTELY;INTERVAL=30;COUNT=4", from: "2026-11-01T01:00", in: "America/New_York")
        #expect(utcTexts(of: fallBack, count: 4) == [
            "2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z",
        ])
        let wallClock = try makeRuleRecurrence(
            "FREQ=MINUTELY;INTERVAL=30;BYHOUR=1,2;COUNT=4", from: "2026-11-01T01:00", in: "America/New_York")
        #expect(utcTexts(of: wallClock, count: 4) == [
            "2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z",
        ])
    }
}
