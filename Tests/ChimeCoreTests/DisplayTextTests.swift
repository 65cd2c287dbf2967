import Foundation
import Testing

@testable import ChimeCore

/// The short texts the CLI prints: the REPEAT column of `chime list` and the local column
/// of `chime preview`.
@Suite struct DisplayTextTests {
    @Test func bothCopiesOfARepeatedHourShowTheirOffset() throws {
        let zone = try ZoneRules.zone(named: "Europe/Berlin")
        let first = try RFC3339.parseInstant("2026-10-25T00:00:00Z")
        #expect(ZoneRules.localTextWithOffset(at: first, in: zone) == "2026-10-25T02:00:00+02:00")
        #expect(ZoneRules.localTextWithOffset(at: first.addingTimeInterval(3600), in: zone) == "2026-10-25T02:00:00+01:00")
        let kolkata = try ZoneRules.zone(named: "Asia/Kolkata")
        #expect(ZoneRules.localTextWithOffset(at: first, in: kolkata) == "2026-10-25T05:30:00+05:30")
        let stJohns = try ZoneRules.zone(named: "America/St_Johns")
        #expect(ZoneRules.localTextWithOffset(at: first, in: stJohns) == "2026-10-24T21:30:00-02:30")
        #expect(ZoneRules.localTextWithOffset(at: first, in: try ZoneRules.zone(named: "UTC")) == "2026-10-25T00:00:00+00:00")
    }

    @Test func repeatSummaryNamesRulesAndExtraDates() throws {
        let start = TriggerStart.instant(try RFC3339.parseInstant("2026-01-01T09:00:00Z"))
        let extra = RecurrenceDateTime.instant(try RFC3339.parseInstant("2026-02-01T09:00:00Z"))
        #expect(Trigger(start: start).repeatSummary == "-")
        #expect(Trigger(start: start, repeatRule: RepeatRule(unit: .day, interval: 1)).repeatSummary == "day")
        #expect(Trigger(start: start, repeatRule: RepeatRule(unit: .week, interval: 2)).repeatSummary == "2 weeks")
        #expect(Trigger(start: start, recurrenceDates: [extra]).repeatSummary == "rdates")
        let rule = try RecurrenceRule(parsing: "FREQ=MONTHLY;BYDAY=-1FR")
        #expect(Trigger(start: start, recurrenceRule: rule, recurrenceDates: [extra]).repeatSummary == "rrule+rdates")
    }
}
