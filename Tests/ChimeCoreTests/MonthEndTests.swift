import Foundation
import Testing

@testable import ChimeCore

/// Days a month lacks: skipped as RFC 5545 §3.3.10 says, or clamped to the month's last
/// day with `monthEnd: clamp`.
@Suite struct MonthEndTests {
    /// (rule, start, policy, expected UTC instants)
    static let cases: [(String, String, MonthEndPolicy, [String])] = [
        ("FREQ=MONTHLY;COUNT=5", "2026-01-31T09:00", .skip, [
            "2026-01-31T09:00:00Z", "2026-03-31T09:00:00Z", "2026-05-31T09:00:00Z", "2026-07-31T09:00:00Z",
            "2026-08-31T09:00:00Z",
        ]),
        ("FREQ=MONTHLY;COUNT=5", "2026-01-31T09:00", .clamp, [
            "2026-01-31T09:00:00Z", "2026-02-28T09:00:00Z", "2026-03-31T09:00:00Z", "2026-04-30T09:00:00Z",
            "2026-05-31T09:00:00Z",
        ]),
        ("FREQ=MONTHLY;BYMONTHDAY=30,31;COUNT=5", "2026-01-30T09:00", .skip, [
            "2026-01-30T09:00:00Z", "2026-01-31T09:00:00Z", "2026-03-30T09:00:00Z", "2026-03-31T09:00:00Z",
            "2026-04-30T09:00:00Z",
        ]),
        // 30 and 31 both clamp to February 28th, which fires once.
        ("FREQ=MONTHLY;BYMONTHDAY=30,31;COUNT=6", "2026-01-30T09:00", .clamp, [
            "2026-01-30T09:00:00Z", "2026-01-31T09:00:00Z", "2026-02-28T09:00:00Z", "2026-03-30T09:00:00Z",
            "2026-03-31T09:00:00Z", "2026-04-30T09:00:00Z",
        ]),
        ("FREQ=MONTHLY;BYMONTHDAY=29;COUNT=4", "2024-01-29T09:00", .clamp, [
            "2024-01-29T09:00:00Z", "2024-02-29T09:00:00Z", "2024-03-29T09:00:00Z", "2024-04-29T09:00:00Z",
        ]),
        ("FREQ=YEARLY;COUNT=3", "2024-02-29T09:00", .skip, [
            "2024-02-29T09:00:00Z", "2028-02-29T09:00:00Z", "2032-02-29T09:00:00Z",
        ]),
        ("FREQ=YEARLY;COUNT=5", "2024-02-29T09:00", .clamp, [
            "2024-02-29T09:00:00Z", "2025-02-28T09:00:00Z", "2026-02-28T09:00:00Z", "2027-02-28T09:00:00Z",
            "2028-02-29T09:00:00Z",
        ]),
        // Negative days count from the month's end and are never clamped: -31 is only ever
        // the 1st of a 31-day month.
        ("FREQ=MONTHLY;BYMONTHDAY=-31;COUNT=3", "2026-01-01T09:00", .clamp, [
            "2026-01-01T09:00:00Z", "2026-03-01T09:00:00Z", "2026-05-01T09:00:00Z",
        ]),
        ("FREQ=MONTHLY;INTERVAL=2;COUNT=4", "2026-08-31T09:00", .clamp, [
            "2026-08-31T09:00:00Z", "2026-10-31T09:00:00Z", "2026-12-31T09:00:00Z", "2027-02-28T09:00:00Z",
        ]),
    ]

    @Test(arguments: cases)
    func skipsOrClampsMissingDays(rrule: String, start: String, policy: MonthEndPolicy, expected: [String]) throws {
        let recurrence = try makeRuleRecurrence(rrule, from: start, in: "UTC", monthEnd: policy)
        #expect(utcTexts(of: recurrence, count: expected.count + 1) == expected)
    }

    @Test func clampedMonthlyInBerlinKeepsItsLocalTime() throws {
        let recurrence = try makeRuleRecurrence(
            "FREQ=MONTHLY", from: "2026-01-31T09:00", in: "Europe/Berlin", monthEnd: .clamp)
        #expect(try wallTexts(of: recurrence, count: 4, in: "Europe/Berlin") == [
            "2026-01-31T09:00:00", "2026-02-28T09:00:00", "2026-03-31T09:00:00", "2026-04-30T09:00:00",
        ])
        #expect(utcTexts(of: recurrence, count: 4) == [
            "2026-01-31T08:00:00Z", "2026-02-28T08:00:00Z", "2026-03-31T07:00:00Z", "2026-04-30T07:00:00Z",
        ])
    }

    @Test func repeatRuleMonthlyOnTheThirtyFirstStillSkipsByDefault() throws {
        let recurrence = try makeWallClockRecurrence("2026-01-31T09:00", "UTC", every: .month)
        #expect(recurrence.monthEnd == .skip)
        #expect(firstOccurrences(of: recurrence, count: 3).map(\.index) == [0, 2, 4])
    }
}
