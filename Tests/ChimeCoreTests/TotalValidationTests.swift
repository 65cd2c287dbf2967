import Foundation
import Testing

@testable import ChimeCore

/// Values that used to trap or pass silently (issue 12): each is now a `ValidationError` with
/// an exact code and field, or a value.
@Suite struct TotalValidationTests {
    static let start = TriggerStart.instant(Date(timeIntervalSince1970: 1_798_099_200))  // 2026-12-24T08:00:00Z

    @Test(arguments: RepeatUnit.allCases)
    func refusesARepeatIntervalNearIntMax(unit: RepeatUnit) {
        let trigger = Trigger(start: Self.start, repeatRule: RepeatRule(unit: unit, interval: .max))
        let error = #expect(throws: ValidationError.self) { try trigger.makeRecurrence() }
        #expect(error?.code == .invalidArgument)
        #expect(error?.field == "trigger.repeat.interval")
        #expect(error?.message == "the repeat interval must be at most 999999999, not 9223372036854775807")
    }

    @Test(arguments: RepeatUnit.allCases)
    func buildsTheLargestRepeatIntervalWithoutOverflow(unit: RepeatUnit) throws {
        let trigger = Trigger(start: Self.start, repeatRule: RepeatRule(unit: unit, interval: RecurrenceRule.maximumInterval))
        let recurrence = try trigger.makeRecurrence()
        let first = try #require(recurrence.firstOccurrence(onOrAfter: Date(timeIntervalSince1970: 0), fromIndex: 0))
        #expect(first.instant == Date(timeIntervalSince1970: 1_798_099_200))
        // Every unit's second step lies past 9999 except minutes (about 1,900 years on).
        let second = recurrence.nextOccurrence(after: first)
        #expect((second != nil) == (unit == .minute))
    }

    @Test func refusesAnRRuleIntervalAboveNineDigitsAndTheMostNegativeByValue() {
        var rule = RecurrenceRule(frequency: .minutely, interval: 1_000_000_000)
        #expect(throws: ValidationError(.invalidArgument, "")) { try rule.validate() }
        rule = RecurrenceRule(frequency: .monthly)
        rule.daysOfTheMonth = [Int.min]
        let error = #expect(throws: ValidationError.self) { try rule.validate() }
        #expect(error?.field == "trigger.rrule")
        #expect(error?.message == "BYMONTHDAY value -9223372036854775808 is out of range; use 1…31 or -1…-31")
    }

    @Test(arguments: [
        ("0000-01-01T00:00:00Z", "'0000-01-01T00:00:00Z' does not exist: year 0 is outside 0001–9999"),
        ("2016-12-31T23:59:60Z",
         "'2016-12-31T23:59:60Z' does not exist: second 60 is outside 00–59 (leap seconds are not supported)"),
        ("0001-01-01T00:30:00+01:00", "'0001-01-01T00:30:00+01:00' is outside years 0001–9999 once its offset is applied"),
        ("9999-12-31T23:30:00-01:00", "'9999-12-31T23:30:00-01:00' is outside years 0001–9999 once its offset is applied"),
    ])
    func refusesInstantsOutsideYearsOneToNineThousandNineHundredNinetyNine(text: String, message: String) {
        let error = #expect(throws: ValidationError.self) { try RFC3339.parseInstant(text) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == message)
    }

    @Test func refusesAWallClockYearZero() {
        let error = #expect(throws: ValidationError.self) { try LocalDateTime(parsing: "0000-06-01T09:00") }
        #expect(error?.message == "'0000-06-01T09:00' does not exist: year 0 is outside 0001–9999")
    }

    @Test func refusesAFloatingTimeThatResolvesPastTheYear9999() throws {
        let late = try LocalDateTime(parsing: "9999-12-31T23:00:00")
        let west = Trigger(start: .wallClock(late, zoneIdentifier: "America/Los_Angeles"))
        let error = #expect(throws: ValidationError.self) { try west.makeRecurrence() }
        #expect(error?.code == .invalidArgument)
        #expect(error?.field == "trigger.at")
        #expect(error?.message == "9999-12-31T23:00:00 in America/Los_Angeles is outside years 0001–9999 in UTC")
        // East of UTC the same wall clock is still in 9999 and keeps its exact instant.
        let east = Trigger(start: .wallClock(late, zoneIdentifier: "Asia/Tokyo"))
        #expect(RFC3339.format(try east.makeRecurrence().firstInstant) == "9999-12-31T14:00:00.000Z")
    }

    @Test func refusesAFloatingRDateThatResolvesBeforeTheYearOne() throws {
        let start = try LocalDateTime(parsing: "2026-12-24T09:00:00")
        let early = try LocalDateTime(parsing: "0001-01-01T00:10:00")
        let trigger = Trigger(
            start: .wallClock(start, zoneIdentifier: "Asia/Tokyo"), recurrenceDates: [.local(early)])
        let error = #expect(throws: ValidationError.self) { try trigger.makeRecurrence() }
        #expect(error?.field == "trigger.rdates")
        #expect(error?.message == "0001-01-01T00:10:00 is outside years 0001–9999 in UTC")
    }

    @Test func refusesNagsMoreThanAYearApart() {
        let error = #expect(throws: ValidationError.self) { try NagPolicy(count: 3, interval: 1e300).validate() }
        #expect(error?.field == "nag.interval")
        #expect(error?.code == .invalidArgument)
    }

    @Test func refusesAnICalendarDurationBeyondTenThousandYears() {
        let error = #expect(throws: ValidationError.self) {
            try ICalendarDuration.parseSeconds("P99999999999999999999W")
        }
        #expect(error?.message == "'P99999999999999999999W' is longer than 10,000 years")
        #expect((try? ICalendarDuration.parseSeconds("-P520000W")) == -314_496_000_000)
    }

    @Test func latenessRecorderDropsNonFiniteSamples() {
        var recorder = LatenessRecorder(capacity: 4)
        recorder.record(milliseconds: .nan)
        recorder.record(milliseconds: .infinity)
        #expect(recorder.summary() == nil)
        recorder.record(milliseconds: 2)
        #expect(recorder.summary() == LatenessSummary(count: 1, p50: 2, p99: 2, max: 2))
    }

    @Test(arguments: [
        ("contents", ["id", "recipient", "content", "trigger"], "content"),
        ("recipent", ["ids", "recipient", "match", "all"], "recipient"),
        ("TimeZone", ["at", "timeZone"], "timeZone"),
        ("xyz", ["id", "recipient"], nil),
        ("at2", ["at", "timeZone"], nil),
    ] as [(String, [String], String?)])
    func suggestsTheClosestKnownField(key: String, candidates: [String], suggestion: String?) {
        #expect(UnknownFieldError.closest(to: key, among: candidates) == suggestion)
    }
}
