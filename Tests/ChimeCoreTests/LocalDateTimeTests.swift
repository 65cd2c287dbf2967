import Foundation
import Testing

@testable import ChimeCore

@Suite struct LocalDateTimeTests {
    @Test(arguments: [
        ("2026-12-24T09:00", LocalDateTime(year: 2026, month: 12, day: 24, hour: 9, minute: 0, second: 0)),
        ("2026-12-24T09:00:30", LocalDateTime(year: 2026, month: 12, day: 24, hour: 9, minute: 0, second: 30)),
        ("2024-02-29t23:59:59", LocalDateTime(year: 2024, month: 2, day: 29, hour: 23, minute: 59, second: 59)),
        ("2000-02-29T00:00", LocalDateTime(year: 2000, month: 2, day: 29)),
    ])
    func parsesWallClockTimesWithOptionalSeconds(input: String, expected: LocalDateTime) throws {
        #expect(try LocalDateTime(parsing: input) == expected)
    }

    @Test(arguments: [
        "2026-02-29T09:00", "1900-02-29T09:00", "2026-04-31T09:00", "2026-00-10T09:00",
        "2026-12-24T24:00", "2026-12-24T09:60", "2026-12-24T09:00:60", "2026-12-24T09:00Z",
        "2026-12-24T09:00:00+01:00", "2026-12-24", "2026-12-24T9:00", "2026-12-24T09:00:00.5", "",
    ])
    func rejectsImpossibleOrZonedWallClockTimes(input: String) {
        #expect(throws: ValidationError(.invalidArgument, "")) { try LocalDateTime(parsing: input) }
    }

    @Test func descriptionAlwaysHasSeconds() throws {
        #expect(try local("2026-12-24T09:00").description == "2026-12-24T09:00:00")
        #expect(
            LocalDateTime(year: 7, month: 1, day: 2, hour: 3, minute: 4, second: 5).description == "0007-01-02T03:04:05"
        )
    }

    @Test func codesAsItsString() throws {
        let encoded = try JSONEncoder().encode([try local("2026-12-24T09:00")])
        #expect(String(decoding: encoded, as: UTF8.self) == #"["2026-12-24T09:00:00"]"#)
        let decoded = try JSONDecoder().decode([LocalDateTime].self, from: Data(#"["2026-03-29T02:30"]"#.utf8))
        #expect(decoded == [try local("2026-03-29T02:30:00")])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([LocalDateTime].self, from: Data(#"["2026-02-30T09:00"]"#.utf8))
        }
    }

    @Test func ordersByFieldsChronologically() throws {
        let times = try ["2026-12-24T09:00:01", "2025-12-31T23:59:59", "2026-12-24T09:00", "2026-01-01T00:00"]
            .map(local)
        #expect(
            times.sorted().map(\.description) == [
                "2025-12-31T23:59:59", "2026-01-01T00:00:00", "2026-12-24T09:00:00", "2026-12-24T09:00:01",
            ])
    }

    @Test func isValidChecksEveryField() {
        #expect(LocalDateTime(year: 2024, month: 2, day: 29).isValid)
        #expect(!LocalDateTime(year: 2023, month: 2, day: 29).isValid)
        #expect(!LocalDateTime(year: 2026, month: 6, day: 31).isValid)
        #expect(!LocalDateTime(year: 2026, month: 6, day: 1, hour: 24).isValid)
        #expect(!LocalDateTime(year: 10_000, month: 1, day: 1).isValid)
    }

    @Test(
        arguments: [
            ("2026-01-31T09:00", 1, nil),
            ("2026-01-31T09:00", 2, "2026-03-31T09:00:00"),
            ("2026-01-30T09:00", 1, nil),
            ("2024-01-29T09:00", 1, "2024-02-29T09:00:00"),
            ("2024-02-29T09:00", 12, nil),
            ("2024-02-29T09:00", 48, "2028-02-29T09:00:00"),
            ("2026-12-15T09:00", 1, "2027-01-15T09:00:00"),
            ("2026-03-31T09:00", -1, nil),
            ("2026-03-15T09:00", -3, "2025-12-15T09:00:00"),
            ("9999-12-01T09:00", 1, nil),
        ] as [(String, Int, String?)])
    func addingMonthsNeverClampsTheDay(start: String, months: Int, expected: String?) throws {
        #expect(try local(start).adding(months: months)?.description == expected)
    }

    @Test(
        arguments: [
            ("2024-02-28T09:00", 1, "2024-02-29T09:00:00"),
            ("2024-02-28T09:00", 2, "2024-03-01T09:00:00"),
            ("2026-12-31T23:59", 1, "2027-01-01T23:59:00"),
            ("2026-01-01T00:00", -1, "2025-12-31T00:00:00"),
            ("2100-02-28T12:00", 1, "2100-03-01T12:00:00"),
            ("9999-12-31T00:00", 1, nil),
        ] as [(String, Int, String?)])
    func addingDaysFollowsTheGregorianCalendar(start: String, days: Int, expected: String?) throws {
        #expect(try local(start).adding(days: days)?.description == expected)
    }

    @Test func addingDaysMatchesFoundationCalendarForRandomDates() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var generator = SeededGenerator(seed: 5545)
        for _ in 0..<500 {
            let startDays = Int.random(in: 0..<2_900_000, using: &generator)
            let step = Int.random(in: -50_000...50_000, using: &generator)
            let start = LocalDateTime(secondsSinceEpochAsIfUTC: startDays * 86_400)
            guard let result = start.adding(days: step) else { continue }
            let expected = calendar.date(
                byAdding: .day, value: step, to: Date(timeIntervalSince1970: Double(startDays * 86_400)))
            let expectedFields = expected.map { calendar.dateComponents([.year, .month, .day], from: $0) }
            #expect(
                [result.year, result.month, result.day] == [
                    expectedFields?.year, expectedFields?.month, expectedFields?.day,
                ])
        }
    }
}
