import Foundation
import Testing

@testable import ChimeCore

/// Wall-clock repeats across DST gaps and overlaps, skipped days and short months (RFC 5545
/// §3.3.5, §3.3.10), with the exact UTC instants they fire at.
@Suite struct WallClockRecurrenceTests {
    @Test func dailyBerlinReminderStaysAtNineAcrossDST() throws {
        #expect(
            try formattedOccurrences(
                of: makeWallClockRecurrence("2026-03-27T09:00", "Europe/Berlin", every: .day), count: 4) == [
                    "2026-03-27T08:00:00.000Z", "2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z",
                    "2026-03-30T07:00:00.000Z",
                ])
        #expect(
            try formattedOccurrences(
                of: makeWallClockRecurrence("2026-10-24T09:00", "Europe/Berlin", every: .day), count: 3) == [
                    "2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z", "2026-10-26T08:00:00.000Z",
                ])
    }

    @Test func dailyAtTwoThirtyFiresAtThreeThirtyOnSpringForwardDay() throws {
        let recurrence = try makeWallClockRecurrence("2026-03-28T02:30", "Europe/Berlin", every: .day)
        #expect(
            formattedOccurrences(of: recurrence, count: 3) == [
                "2026-03-28T01:30:00.000Z", "2026-03-29T01:30:00.000Z", "2026-03-30T00:30:00.000Z",
            ])
        let zone = try ZoneRules.zone(named: "Europe/Berlin")
        #expect(
            recurrence.occurrence(at: 1).map { ZoneRules.localDateTime(at: $0, in: zone).description }
                == "2026-03-29T03:30:00")
    }

    @Test func dailyInOverlapFiresOnceAtTheFirstCopy() throws {
        #expect(
            try formattedOccurrences(
                of: makeWallClockRecurrence("2026-10-24T02:30", "Europe/Berlin", every: .day), count: 3) == [
                    "2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z",
                ])
    }

    @Test func hourlyAcrossBerlinFallBackFiresInBothCopiesOfTheRepeatedHour() throws {
        let recurrence = try makeWallClockRecurrence("2026-10-25T01:30", "Europe/Berlin", every: .hour)
        let zone = try ZoneRules.zone(named: "Europe/Berlin")
        let occurrences = firstOccurrences(of: recurrence, count: 4)
        #expect(
            occurrences.map { RFC3339.format($0.instant) } == [
                "2026-10-24T23:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-25T01:30:00.000Z",
                "2026-10-25T02:30:00.000Z",
            ])
        #expect(
            occurrences.map { ZoneRules.localDateTime(at: $0.instant, in: zone).description } == [
                "2026-10-25T01:30:00", "2026-10-25T02:30:00", "2026-10-25T02:30:00", "2026-10-25T03:30:00",
            ])
    }

    @Test func minutelyAcrossSpringForwardKeepsSixtySecondSpacing() throws {
        let recurrence = try makeWallClockRecurrence("2026-03-29T01:58", "Europe/Berlin", every: .minute)
        let zone = try ZoneRules.zone(named: "Europe/Berlin")
        let occurrences = firstOccurrences(of: recurrence, count: 4)
        #expect(
            occurrences.map { RFC3339.format($0.instant) } == [
                "2026-03-29T00:58:00.000Z", "2026-03-29T00:59:00.000Z", "2026-03-29T01:00:00.000Z",
                "2026-03-29T01:01:00.000Z",
            ])
        #expect(
            occurrences.map { ZoneRules.localDateTime(at: $0.instant, in: zone).description } == [
                "2026-03-29T01:58:00", "2026-03-29T01:59:00", "2026-03-29T03:00:00", "2026-03-29T03:01:00",
            ])
    }

    @Test func weeklyKeepsWeekdayAndLocalTime() throws {
        #expect(
            try formattedOccurrences(
                of: makeWallClockRecurrence("2026-03-23T09:00", "Europe/Berlin", every: .week), count: 3) == [
                    "2026-03-23T08:00:00.000Z", "2026-03-30T07:00:00.000Z", "2026-04-06T07:00:00.000Z",
                ])
        #expect(
            try formattedOccurrences(
                of: makeWallClockRecurrence("2026-03-23T09:00", "Europe/Berlin", every: .week, interval: 2), count: 3)
                == [
                    "2026-03-23T08:00:00.000Z", "2026-04-06T07:00:00.000Z", "2026-04-20T07:00:00.000Z",
                ])
    }

    @Test func monthlyOnThirtyFirstSkipsShortMonths() throws {
        let recurrence = try makeWallClockRecurrence("2026-01-31T09:00", "Europe/Berlin", every: .month)
        let occurrences = firstOccurrences(of: recurrence, count: 8)
        #expect(occurrences.map(\.index) == [0, 2, 4, 6, 7, 9, 11, 12])
        #expect(
            occurrences.map { RFC3339.format($0.instant) } == [
                "2026-01-31T08:00:00.000Z", "2026-03-31T07:00:00.000Z", "2026-05-31T07:00:00.000Z",
                "2026-07-31T07:00:00.000Z", "2026-08-31T07:00:00.000Z", "2026-10-31T08:00:00.000Z",
                "2026-12-31T08:00:00.000Z", "2027-01-31T08:00:00.000Z",
            ])
        #expect(recurrence.occurrence(at: 1) == nil)
    }

    @Test func yearlyOnFebruaryTwentyNinthFiresOnlyInLeapYears() throws {
        #expect(
            try formattedOccurrences(
                of: makeWallClockRecurrence("2024-02-29T09:00", "Europe/Berlin", every: .year), count: 3) == [
                    "2024-02-29T08:00:00.000Z", "2028-02-29T08:00:00.000Z", "2032-02-29T08:00:00.000Z",
                ])
        let acrossCentury = firstOccurrences(
            of: try makeWallClockRecurrence("2096-02-29T09:00", "UTC", every: .year), count: 2)
        #expect(acrossCentury.map(\.index) == [0, 8])
        #expect(
            acrossCentury.map { RFC3339.format($0.instant) } == [
                "2096-02-29T09:00:00.000Z", "2104-02-29T09:00:00.000Z",
            ])
    }

    @Test func lordHoweDailyShiftsByThirtyMinuteGap() throws {
        #expect(
            try formattedOccurrences(
                of: makeWallClockRecurrence("2026-10-03T02:15", "Australia/Lord_Howe", every: .day), count: 3) == [
                    "2026-10-02T15:45:00.000Z", "2026-10-03T15:45:00.000Z", "2026-10-04T15:15:00.000Z",
                ])
        #expect(
            try formattedOccurrences(
                of: makeWallClockRecurrence("2026-04-04T01:45", "Australia/Lord_Howe", every: .day), count: 3) == [
                    "2026-04-03T14:45:00.000Z", "2026-04-04T14:45:00.000Z", "2026-04-05T15:15:00.000Z",
                ])
    }

    @Test func apiaDailySkipsTheRepeatedInstantOfTheMissingDay() throws {
        let recurrence = try makeWallClockRecurrence("2011-12-28T09:00", "Pacific/Apia", every: .day)
        let occurrences = firstOccurrences(of: recurrence, count: 5)
        #expect(occurrences.map(\.index) == [0, 1, 2, 4, 5])
        #expect(
            occurrences.map { RFC3339.format($0.instant) } == [
                "2011-12-28T19:00:00.000Z", "2011-12-29T19:00:00.000Z", "2011-12-30T19:00:00.000Z",
                "2011-12-31T19:00:00.000Z", "2012-01-01T19:00:00.000Z",
            ])
        #expect(recurrence.occurrence(at: 3) == nil)
    }
}
