import Foundation
import Testing

@testable import ChimeCore

/// RFC 5545 §3.3.10 text: parsing, formatting and the errors a bad rule gets.
@Suite struct RecurrenceRuleTextTests {
    @Test func parsesEveryRulePart() throws {
        let rule = try RecurrenceRule(
            parsing:
                "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,12;BYYEARDAY=1,-366;BYMONTHDAY=-1,15;BYDAY=MO,-1FR,+2TU;BYHOUR=9,17;BYMINUTE=0,30;BYSECOND=15;BYSETPOS=1,-1;WKST=SU"
        )
        #expect(rule.frequency == .yearly)
        #expect(rule.interval == 2)
        #expect(rule.count == 10)
        #expect(rule.months == [1, 12])
        #expect(try RecurrenceRule(parsing: "FREQ=YEARLY;BYWEEKNO=20,-1;BYDAY=MO").weekNumbers == [20, -1])
        #expect(rule.daysOfTheYear == [1, -366])
        #expect(rule.daysOfTheMonth == [-1, 15])
        #expect(
            rule.weekdays == [
                .init(.monday), .init(.friday, ordinal: -1), .init(.tuesday, ordinal: 2),
            ])
        #expect(rule.hours == [9, 17])
        #expect(rule.minutes == [0, 30])
        #expect(rule.seconds == [15])
        #expect(rule.setPositions == [1, -1])
        #expect(rule.weekStart == .sunday)
    }

    static let untilForms: [(String, RecurrenceDateTime)] = [
        ("20261231T235959Z", .instant(Date(timeIntervalSince1970: 1_798_761_599))),
        ("20261231T090000", .local(LocalDateTime(year: 2026, month: 12, day: 31, hour: 9))),
        ("20261231", .local(LocalDateTime(year: 2026, month: 12, day: 31, hour: 23, minute: 59, second: 59))),
    ]

    @Test(arguments: untilForms)
    func readsUntilAsUTCLocalOrWholeDay(text: String, expected: RecurrenceDateTime) throws {
        #expect(try RecurrenceRule(parsing: "FREQ=DAILY;UNTIL=\(text)").until == expected)
    }

    static let canonicalForms: [(String, String)] = [
        ("freq=weekly;byday=mo,we;interval=2", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE"),
        ("RRULE:FREQ=DAILY;INTERVAL=1;WKST=MO;", "FREQ=DAILY"),
        ("FREQ=MONTHLY;X-NAME=ignored;BYDAY=-1FR", "FREQ=MONTHLY;BYDAY=-1FR"),
        ("WKST=SU;UNTIL=20261231T235959Z;BYDAY=MO;FREQ=WEEKLY", "FREQ=WEEKLY;UNTIL=20261231T235959Z;BYDAY=MO;WKST=SU"),
        ("FREQ=YEARLY;BYSETPOS=-1;BYMONTH=3;BYDAY=+1SU", "FREQ=YEARLY;BYMONTH=3;BYDAY=1SU;BYSETPOS=-1"),
    ]

    @Test(arguments: canonicalForms)
    func formatsInAFixedOrderAndReadsBack(input: String, canonical: String) throws {
        let rule = try RecurrenceRule(parsing: input)
        #expect(rule.description == canonical)
        #expect(try RecurrenceRule(parsing: canonical) == rule)
    }

    static let refusals: [(String, String)] = [
        ("INTERVAL=2", "FREQ is required"),
        ("FREQ=SECONDLY", "repeats shorter than 60 s are not allowed"),
        ("FREQ=FORTNIGHTLY", "is not one of MINUTELY"),
        ("FREQ=DAILY;BYWHEN=1", "unknown rule part 'BYWHEN'"),
        ("FREQ=DAILY;COUNT=2;COUNT=3", "COUNT is given twice"),
        ("FREQ=DAILY;COUNT", "is not a NAME=VALUE rule part"),
        ("FREQ=DAILY;BYHOUR=", "BYHOUR has no value"),
        ("FREQ=DAILY;INTERVAL=0", "INTERVAL must be at least 1"),
        ("FREQ=DAILY;COUNT=0", "COUNT must be between 1 and 100000"),
        ("FREQ=DAILY;COUNT=ten", "COUNT value 'TEN' is not a whole number"),
        ("FREQ=DAILY;COUNT=3;UNTIL=20261231T000000Z", "give COUNT or UNTIL, not both"),
        ("FREQ=DAILY;UNTIL=20260231T000000Z", "does not exist"),
        ("FREQ=DAILY;UNTIL=2026-12-31", "is not an iCalendar date-time"),
        ("FREQ=YEARLY;BYMONTH=13", "BYMONTH value 13 is out of range; use 1…12"),
        ("FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY value 0 is out of range"),
        ("FREQ=MONTHLY;BYMONTHDAY=-32", "BYMONTHDAY value -32 is out of range"),
        ("FREQ=YEARLY;BYYEARDAY=367", "BYYEARDAY value 367 is out of range"),
        ("FREQ=DAILY;BYHOUR=24", "BYHOUR value 24 is out of range; use 0…23"),
        ("FREQ=DAILY;BYMINUTE=60", "BYMINUTE value 60 is out of range"),
        ("FREQ=DAILY;BYSECOND=60", "BYSECOND value 60 is out of range"),
        ("FREQ=MINUTELY;BYSECOND=0,30", "BYSECOND takes one value"),
        ("FREQ=MONTHLY;BYWEEKNO=20", "BYWEEKNO is only allowed with FREQ=YEARLY"),
        ("FREQ=DAILY;BYYEARDAY=100", "BYYEARDAY is not allowed with FREQ=DAILY"),
        ("FREQ=WEEKLY;BYMONTHDAY=1", "BYMONTHDAY is not allowed with FREQ=WEEKLY"),
        ("FREQ=WEEKLY;BYDAY=2MO", "only MONTHLY and YEARLY rules allow"),
        ("FREQ=YEARLY;BYWEEKNO=1;BYDAY=1MO", "not allowed with BYWEEKNO"),
        ("FREQ=MONTHLY;BYDAY=6MO", "a month has at most 5 of each weekday"),
        ("FREQ=YEARLY;BYDAY=54MO", "a year has at most 53"),
        ("FREQ=MONTHLY;BYDAY=0MO", "the ordinal must be"),
        ("FREQ=MONTHLY;BYDAY=MONDAY", "is not a weekday such as MO"),
        ("FREQ=MONTHLY;BYDAY=XMO", "has a malformed ordinal"),
        ("FREQ=MONTHLY;BYSETPOS=1", "BYSETPOS needs another BYxxx part"),
        ("FREQ=WEEKLY;WKST=XX", "WKST=XX is not a weekday"),
    ]

    @Test(arguments: refusals)
    func refusesWithAPreciseMessage(text: String, fragment: String) {
        let error = #expect(throws: ValidationError.self) { try RecurrenceRule(parsing: text) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.field == "trigger.rrule")
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "no error")")
    }

    static let neverMatching: [(String, String, String)] = [
        ("FREQ=MINUTELY;INTERVAL=60;BYMINUTE=30", "2026-03-02T09:00", "never reaches"),
        ("FREQ=HOURLY;INTERVAL=6;BYHOUR=10", "2026-03-02T09:00", "never reaches"),
        ("FREQ=DAILY;INTERVAL=7;BYDAY=MO", "2026-03-03T09:00", "never reaches"),
        ("FREQ=MONTHLY;INTERVAL=2;BYMONTH=2", "2026-01-15T09:00", "never reaches"),
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "2026-01-15T09:00", "never falls in BYMONTH=2"),
        ("FREQ=HOURLY;BYDAY=MO;BYSETPOS=2", "2026-03-02T09:00", "holds at most 1 instance"),
        ("FREQ=WEEKLY;BYDAY=MO,WE;BYSETPOS=3", "2026-03-02T09:00", "holds at most 2 instance"),
        ("FREQ=DAILY;UNTIL=20260301T090000", "2026-03-02T09:00", "UNTIL 2026-03-01T09:00:00 is before the start 2026-03-02T09:00:00"),
        ("FREQ=DAILY;UNTIL=20260302T075959Z", "2026-03-02T09:00", "is before the start"),
        ("FREQ=MINUTELY;UNTIL=20260302T085959", "2026-03-02T09:00", "can never fire"),
    ]

    @Test(arguments: neverMatching)
    func refusesRulesThatCanNeverMatch(rrule: String, start: String, fragment: String) {
        let error = #expect(throws: ValidationError.self) {
            try makeRuleRecurrence(rrule, from: start, in: "Europe/Berlin")
        }
        #expect(error?.field == "trigger.rrule")
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "no error")")
    }

    @Test func clampingMakesTheThirtiethOfFebruaryReachable() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", from: "2026-01-15T09:00", in: "UTC", monthEnd: .clamp)
        #expect(utcTexts(of: recurrence, count: 3) == [
            "2026-01-15T09:00:00Z", "2026-02-28T09:00:00Z", "2027-02-28T09:00:00Z",
        ])
    }

    @Test func repeatRuleIsTheShortFormOfARule() {
        #expect(RepeatRule(unit: .day, interval: 2).recurrenceRule.description == "FREQ=DAILY;INTERVAL=2")
        #expect(RepeatRule(unit: .minute).recurrenceRule == RecurrenceRule(frequency: .minutely))
        #expect(RepeatRule(unit: .year, interval: 3).recurrenceRule.description == "FREQ=YEARLY;INTERVAL=3")
    }
}
