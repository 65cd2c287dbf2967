import Foundation
import Testing

@testable import ChimeCore

/// One-shots, instant starts, index search and validation of `Recurrence`.
@Suite struct RecurrenceTests {
    @Test func oneShotHasOnlyIndexZero() throws {
        let recurrence = try makeInstantRecurrence("2026-12-24T08:00:00Z", every: nil)
        let start = try utc("2026-12-24T08:00:00Z")
        #expect(recurrence.occurrence(at: 0) == start)
        #expect(recurrence.occurrence(at: 1) == nil)
        #expect(recurrence.occurrence(at: -1) == nil)
        #expect(recurrence.firstOccurrence(onOrAfter: start) == Occurrence(index: 0, instant: start))
        #expect(recurrence.firstOccurrence(onOrAfter: start.addingTimeInterval(0.001)) == nil)
        #expect(recurrence.nextOccurrence(after: Occurrence(index: 0, instant: start)) == nil)
    }

    @Test func instantStartDailyRepeatsOnUTCFieldsKeepingMilliseconds() throws {
        #expect(
            try formattedOccurrences(of: makeInstantRecurrence("2026-03-28T08:00:00.250Z", every: .day), count: 3) == [
                "2026-03-28T08:00:00.250Z", "2026-03-29T08:00:00.250Z", "2026-03-30T08:00:00.250Z",
            ])
    }

    @Test func instantStartMonthlyOnThirtyFirstSkipsShortMonths() throws {
        let occurrences = firstOccurrences(
            of: try makeInstantRecurrence("2026-01-31T12:00:00Z", every: .month), count: 7)
        #expect(occurrences.map(\.index) == [0, 2, 4, 6, 7, 9, 11])
        #expect(
            occurrences.map { RFC3339.format($0.instant) } == [
                "2026-01-31T12:00:00.000Z", "2026-03-31T12:00:00.000Z", "2026-05-31T12:00:00.000Z",
                "2026-07-31T12:00:00.000Z", "2026-08-31T12:00:00.000Z", "2026-10-31T12:00:00.000Z",
                "2026-12-31T12:00:00.000Z",
            ])
    }

    @Test func instantStartHourlyRepeatsOnElapsedTime() throws {
        #expect(
            try formattedOccurrences(
                of: makeInstantRecurrence("2026-03-29T00:30:00Z", every: .hour, interval: 2), count: 3) == [
                    "2026-03-29T00:30:00.000Z", "2026-03-29T02:30:00.000Z", "2026-03-29T04:30:00.000Z",
                ])
    }

    @Test func sequenceEndsInYearNineThousandNineHundredNinetyNine() throws {
        #expect(
            try formattedOccurrences(of: makeInstantRecurrence("9998-06-01T00:00:00Z", every: .year), count: 5) == [
                "9998-06-01T00:00:00.000Z", "9999-06-01T00:00:00.000Z",
            ])
    }

    @Test func firstOccurrenceJumpsMillionsOfMinutelyStepsWithoutIterating() throws {
        let recurrence = try makeInstantRecurrence("1970-01-01T00:00:00Z", every: .minute)
        let found = try #require(recurrence.firstOccurrence(onOrAfter: try utc("9000-06-15T12:34:56Z")))
        #expect(RFC3339.format(found.instant) == "9000-06-15T12:35:00.000Z")
        #expect(found.index == Int(found.instant.timeIntervalSince1970) / 60)
    }

    @Test func firstOccurrenceFindsAMonthlyWallClockOccurrenceYearsAhead() throws {
        let recurrence = try makeWallClockRecurrence("2026-01-31T09:00", "Europe/Berlin", every: .month)
        let found = recurrence.firstOccurrence(onOrAfter: try utc("2040-02-15T00:00:00Z"))
        #expect(found == Occurrence(index: 170, instant: try utc("2040-03-31T07:00:00Z")))
    }

    @Test func firstOccurrenceIncludesAnExactMatchAndHonoursFromIndex() throws {
        let recurrence = try makeWallClockRecurrence("2026-03-27T09:00", "Europe/Berlin", every: .day)
        let exact = try utc("2026-03-29T07:00:00Z")
        #expect(recurrence.firstOccurrence(onOrAfter: exact)?.index == 2)
        #expect(recurrence.firstOccurrence(onOrAfter: exact.addingTimeInterval(0.001))?.index == 3)
        #expect(recurrence.firstOccurrence(onOrAfter: .distantPast, fromIndex: 5)?.index == 5)
        #expect(recurrence.firstOccurrence(onOrAfter: exact, fromIndex: 1)?.index == 2)
    }

    /// Recurrences with skipped indices, zone gaps and elapsed-time steps.
    static let bruteForceCases: [(String, String, RepeatUnit, Int)] = [
        ("2011-12-20T09:00", "Pacific/Apia", .day, 1),
        ("2026-01-31T09:00", "Europe/Berlin", .month, 1),
        ("2024-02-29T02:30", "Europe/Berlin", .year, 1),
        ("2026-03-29T02:30", "Europe/Berlin", .day, 3),
        ("2026-10-25T01:00", "Europe/Berlin", .hour, 7),
        ("2026-10-04T02:15", "Australia/Lord_Howe", .week, 1),
        ("2026-03-08T02:00", "America/New_York", .minute, 45),
        ("2026-01-31T23:59:59", "UTC", .month, 5),
    ]

    @Test(arguments: bruteForceCases)
    func firstOccurrenceMatchesALinearScanOfIndices(start: String, zone: String, unit: RepeatUnit, interval: Int)
        throws
    {
        let recurrence = try makeWallClockRecurrence(start, zone, every: unit, interval: interval)
        let reference = (0..<400).compactMap { index in
            recurrence.occurrence(at: index).map { Occurrence(index: index, instant: $0) }
        }
        #expect(zip(reference, reference.dropFirst()).allSatisfy { $0.instant < $1.instant })
        #expect(firstOccurrences(of: recurrence, count: reference.count) == reference)
        let span = reference[reference.count - 1].instant.timeIntervalSince(reference[0].instant)
        var generator = SeededGenerator(seed: UInt64(interval) * 7919)
        for _ in 0..<300 {
            let target = reference[0].instant.addingTimeInterval(Double.random(in: -3600...span, using: &generator))
            let fromIndex = Int.random(in: 0..<5, using: &generator)
            let expected = reference.first { $0.index >= fromIndex && $0.instant >= target }
            #expect(recurrence.firstOccurrence(onOrAfter: target, fromIndex: fromIndex) == expected)
        }
    }

    @Test func rejectsUnknownZonesAndIntervalsBelowOne() throws {
        let zoneError = #expect(throws: ValidationError.self) {
            try Recurrence(start: .wallClock(try local("2026-12-24T09:00"), zoneIdentifier: "CEST"), rule: nil)
        }
        #expect(zoneError?.code == .unknownTimeZone)
        #expect(zoneError?.field == "trigger.timeZone")
        let intervalError = #expect(throws: ValidationError.self) {
            try Recurrence(start: .instant(try utc("2026-12-24T08:00:00Z")), rule: RepeatRule(unit: .day, interval: 0))
        }
        #expect(intervalError?.code == .invalidArgument)
        #expect(intervalError?.field == "trigger.repeat.interval")
        #expect(throws: ValidationError(.invalidArgument, "")) {
            try Recurrence(
                start: .wallClock(LocalDateTime(year: 2026, month: 2, day: 30, hour: 9), zoneIdentifier: "UTC"),
                rule: nil)
        }
    }

    @Test func repeatRuleDecodesWithDefaultInterval() throws {
        let decoder = JSONDecoder()
        #expect(try decoder.decode(RepeatRule.self, from: Data(#"{"unit":"day"}"#.utf8)) == RepeatRule(unit: .day))
        #expect(
            try decoder.decode(RepeatRule.self, from: Data(#"{"unit":"week","interval":2}"#.utf8))
                == RepeatRule(unit: .week, interval: 2))
        #expect(throws: DecodingError.self) {
            try decoder.decode(RepeatRule.self, from: Data(#"{"unit":"fortnight"}"#.utf8))
        }
        let encoded = try JSONEncoder().encode(RepeatRule(unit: .month, interval: 3))
        #expect(try decoder.decode(RepeatRule.self, from: encoded) == RepeatRule(unit: .month, interval: 3))
    }
}
