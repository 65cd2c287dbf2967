import Foundation
import Testing

@testable import ChimeCore

/// The time edges of issue 24, item 10: the end of year 9999 and rules whose BYWEEKNO or
/// BYYEARDAY contradicts BYMONTH.
@Suite struct TimeEdgeTests {
    @Test func aDailySeriesInLosAngelesEndsAtTheLastRepresentableInstant() throws {
        // 9999-12-31T23:30 in Los Angeles is 10000-01-01T07:30Z: the series ends before it
        // (formerly clamped to 9999-12-31T23:59:59.999Z and left pending).
        let recurrence = try makeRuleRecurrence(
            "FREQ=DAILY", from: "9999-12-30T23:30", in: "America/Los_Angeles", exdates: ["9999-12-30T23:30:00"])
        #expect(recurrence.firstOccurrence(onOrAfter: .distantPast) == nil)
        #expect(recurrence.occurrences(onOrAfter: .distantPast, limit: 5).isEmpty)
        let kept = try makeRuleRecurrence("FREQ=DAILY", from: "9999-12-30T23:30", in: "America/Los_Angeles")
        #expect(utcTexts(of: kept, count: 5) == ["9999-12-31T07:30:00Z"])
    }

    static let contradictions: [(String, String)] = [
        ("FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO;BYMONTH=6", "BYWEEKNO=53 never falls in BYMONTH=6"),
        ("FREQ=YEARLY;BYWEEKNO=20;BYMONTH=1", "BYWEEKNO=20 never falls in BYMONTH=1"),
        ("FREQ=YEARLY;BYYEARDAY=200;BYMONTH=1", "BYYEARDAY=200 never falls in BYMONTH=1"),
        ("FREQ=YEARLY;BYYEARDAY=-1;BYMONTH=6", "BYYEARDAY=-1 never falls in BYMONTH=6"),
    ]

    @Test(arguments: contradictions)
    func refusesWeekAndYearDaysOutsideTheirMonths(rrule: String, message: String) {
        let error = #expect(throws: ValidationError.self) {
            try makeRuleRecurrence(rrule, from: "2026-01-05T09:00", in: "UTC")
        }
        #expect(error?.field == "trigger.rrule")
        #expect(error?.message.hasSuffix(message) == true, "\(error?.message ?? "no error")")
    }

    static let reachable: [String] = [
        "FREQ=YEARLY;BYWEEKNO=1;BYMONTH=12",  // week 1 may start on 29 December
        "FREQ=YEARLY;BYWEEKNO=53;BYMONTH=1",  // week 53 may end on 3 January
        "FREQ=YEARLY;BYWEEKNO=-1;BYMONTH=12",
        "FREQ=YEARLY;BYYEARDAY=60;BYMONTH=2,3",  // 29 February or 1 March
        "FREQ=YEARLY;BYYEARDAY=-307;BYMONTH=2",  // 28 or 29 February
        "FREQ=YEARLY;BYWEEKNO=9;BYMONTH=2,3",
    ]

    @Test(arguments: reachable)
    func acceptsWeekAndYearDaysThatCanFallInTheirMonths(rrule: String) throws {
        _ = try makeRuleRecurrence(rrule, from: "2026-01-05T09:00", in: "UTC")
    }
}
