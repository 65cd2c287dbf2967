import Foundation
import Testing

@testable import ChimeCore

/// The recurrence set of RFC 5545 §3.8.5: DTSTART first, RDATEs added, EXDATEs removed,
/// duplicates once; and what `Occurrence.index` means for each shape.
@Suite struct RecurrenceSetTests {
    static let berlin = "Europe/Berlin"

    @Test func exdatesRemoveInstancesGivenAsInstantsOrWallClockTimes() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=DAILY;COUNT=5", from: "2026-03-27T09:00", in: Self.berlin,
            exdates: ["2026-03-28T08:00:00Z", "2026-03-30T09:00:00"])
        // COUNT bounds the rule before EXDATE removes (March 27–31, minus two).
        #expect(utcTexts(of: recurrence, count: 5) == [
            "2026-03-27T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-31T07:00:00Z",
        ])
    }

    @Test func rdatesAddInstancesAndAGapTimeShiftsLikeAnyOther() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=WEEKLY;COUNT=2", from: "2026-03-23T09:00", in: Self.berlin,
            rdates: ["2026-03-29T02:30:00", "2026-03-25T12:00:00Z"])
        #expect(utcTexts(of: recurrence, count: 5) == [
            "2026-03-23T08:00:00Z", "2026-03-25T12:00:00Z", "2026-03-29T01:30:00Z", "2026-03-30T07:00:00Z",
        ])
    }

    @Test func anRDateOnAnInstanceFiresOnceAndAnExdateBeatsAnRDate() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=DAILY;COUNT=3", from: "2026-06-01T09:00", in: "UTC",
            rdates: ["2026-06-02T09:00:00Z", "2026-06-10T09:00:00Z"], exdates: ["2026-06-10T09:00:00"])
        #expect(utcTexts(of: recurrence, count: 5) == [
            "2026-06-01T09:00:00Z", "2026-06-02T09:00:00Z", "2026-06-03T09:00:00Z",
        ])
    }

    @Test func excludingTheStartLeavesTheRest() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", from: "2026-01-01T09:00", in: "UTC",
            exdates: ["2026-01-01T09:00:00"])
        #expect(utcTexts(of: recurrence, count: 3) == [
            "2026-02-13T09:00:00Z", "2026-03-13T09:00:00Z", "2026-11-13T09:00:00Z",
        ])
    }

    @Test func aOneShotWithRDatesFiresAtEachAndRDatesBeforeTheStartCount() throws {
        let recurrence = try Recurrence(
            start: .instant(try utc("2026-06-01T09:00:00Z")), recurrenceRule: nil,
            recurrenceDates: [.instant(try utc("2026-05-31T09:00:00Z")), .local(try local("2026-06-03T09:00"))])
        let occurrences = firstOccurrences(of: recurrence, count: 4)
        #expect(occurrences.map { RFC3339.format($0.instant) } == [
            "2026-05-31T09:00:00.000Z", "2026-06-01T09:00:00.000Z", "2026-06-03T09:00:00.000Z",
        ])
        // Indices are milliseconds from the earliest RDATE.
        #expect(occurrences.map(\.index) == [0, 86_400_000, 259_200_000])
        #expect(recurrence.indexing == .milliseconds)
    }

    @Test func plainRulesKeepStepIndicesAndOthersCountMilliseconds() throws {
        let plain = try makeRuleRecurrence("FREQ=MONTHLY;COUNT=4", from: "2026-01-31T09:00", in: "UTC")
        #expect(plain.indexing == .steps)
        #expect(firstOccurrences(of: plain, count: 4).map(\.index) == [0, 2, 4, 6])
        let selective = try makeRuleRecurrence("FREQ=WEEKLY;BYDAY=MO,WE", from: "2026-03-02T09:00", in: "UTC")
        #expect(selective.indexing == .milliseconds)
        #expect(firstOccurrences(of: selective, count: 3).map(\.index) == [0, 172_800_000, 604_800_000])
    }

    @Test func occurrenceAtAnIndexAndFromIndexAgreeWithTheWalk() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=9,18", from: "2026-01-30T09:00", in: Self.berlin,
            rdates: ["2026-02-01T12:00:00"], exdates: ["2026-02-27T18:00:00"])
        let walk = firstOccurrences(of: recurrence, count: 12)
        #expect(zip(walk, walk.dropFirst()).allSatisfy { $0.index < $1.index && $0.instant < $1.instant })
        for occurrence in walk {
            #expect(recurrence.occurrence(at: occurrence.index) == occurrence.instant)
            #expect(recurrence.occurrence(at: occurrence.index + 1) == nil)
            #expect(recurrence.firstOccurrence(onOrAfter: .distantPast, fromIndex: occurrence.index) == occurrence)
        }
        #expect(recurrence.firstOccurrence(onOrAfter: walk[3].instant, fromIndex: walk[6].index) == walk[6])
    }

    @Test func rejectsTooManyOrImpossibleDates() {
        let many = Array(repeating: RecurrenceDateTime.local(LocalDateTime(year: 2026, month: 1, day: 1)), count: 1_001)
        let error = #expect(throws: ValidationError.self) {
            try Recurrence(start: .instant(Date(timeIntervalSince1970: 0)), recurrenceRule: nil, recurrenceDates: many)
        }
        #expect(error?.field == "trigger.rdates")
        let impossible = #expect(throws: ValidationError.self) {
            try Recurrence(
                start: .instant(Date(timeIntervalSince1970: 0)), recurrenceRule: nil,
                exceptionDates: [.local(LocalDateTime(year: 2026, month: 2, day: 30))])
        }
        #expect(impossible?.field == "trigger.exdates")
    }

    @Test func absoluteStartsExpandOnUTCFieldsKeepingMilliseconds() throws {
        let recurrence = try Recurrence(
            start: .instant(try utc("2026-03-27T08:00:00.250Z")),
            recurrenceRule: try RecurrenceRule(parsing: "FREQ=WEEKLY;BYDAY=FR,SU;COUNT=3"),
            exceptionDates: [.instant(try utc("2026-03-29T08:00:00.250Z"))])
        #expect(firstOccurrences(of: recurrence, count: 3).map { RFC3339.format($0.instant) } == [
            "2026-03-27T08:00:00.250Z", "2026-04-03T08:00:00.250Z",
        ])
    }
}
