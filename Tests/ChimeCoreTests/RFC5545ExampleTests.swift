import Foundation
import Testing

@testable import ChimeCore

/// One example of RFC 5545 §3.8.5.3: a DTSTART in America/New_York, an RRULE, EXDATEs, and
/// the instants the RFC lists.
struct RFC5545Example: Sendable, CustomTestStringConvertible {
    var name: String
    var start: String
    var rrule: String
    var exdates: [String]
    var expected: [String]

    init(_ name: String, start: String, rrule: String, exdates: [String] = [], expected: [String]) {
        self.name = name
        self.start = start
        self.rrule = rrule
        self.exdates = exdates
        self.expected = expected
    }

    var testDescription: String { name }

    /// Whether the rule has COUNT or UNTIL, so the list is complete.
    var isBounded: Bool { rrule.contains("COUNT=") || rrule.contains("UNTIL=") }
}

/// Every recurrence example of RFC 5545 §3.8.5.3, occurrence by occurrence.
@Suite struct RFC5545ExampleTests {
    static let newYork = "America/New_York"

    @Test(arguments: RFC5545Example.subDailyDailyAndWeekly + RFC5545Example.monthlyAndYearly)
    func producesExactlyTheOccurrencesTheRFCLists(example: RFC5545Example) throws {
        let recurrence = try Recurrence(
            start: .wallClock(try local(example.start), zoneIdentifier: Self.newYork),
            recurrenceRule: try RecurrenceRule(parsing: example.rrule),
            exceptionDates: try example.exdates.map(RecurrenceDateTime.init(parsing:)))
        let expected = try example.expected.map { try utc($0) }
        // One more than listed: a bounded rule must stop exactly where the RFC stops.
        let limit = example.isBounded ? expected.count + 1 : expected.count
        let actual = firstOccurrences(of: recurrence, count: limit).map(\.instant)
        #expect(actual.map(RFC3339.format) == expected.map(RFC3339.format))
    }

    @Test(arguments: RFC5545Example.subDailyDailyAndWeekly + RFC5545Example.monthlyAndYearly)
    func textFormRoundTrips(example: RFC5545Example) throws {
        let rule = try RecurrenceRule(parsing: example.rrule)
        #expect(try RecurrenceRule(parsing: rule.description) == rule)
    }
}
