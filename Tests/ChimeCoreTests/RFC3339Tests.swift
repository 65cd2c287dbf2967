import Foundation
import Testing

@testable import ChimeCore

@Suite struct RFC3339Tests {
    @Test(arguments: [
        ("2026-12-24T08:00:00Z", "2026-12-24T08:00:00.000Z"),
        ("2026-12-24T08:00:00.123+01:00", "2026-12-24T07:00:00.123Z"),
        ("2026-12-24T08:00Z", "2026-12-24T08:00:00.000Z"),
        ("2026-12-24t08:00:00z", "2026-12-24T08:00:00.000Z"),
        ("2026-12-24T08:00:00.5-05:30", "2026-12-24T13:30:00.500Z"),
        ("2026-12-24T00:30:00+01:00", "2026-12-23T23:30:00.000Z"),
        ("2026-12-31T23:30:00-01:00", "2027-01-01T00:30:00.000Z"),
        ("2026-12-24T08:00:00-00:00", "2026-12-24T08:00:00.000Z"),
        ("2026-12-24T08:00:00.123456789Z", "2026-12-24T08:00:00.123Z"),
        ("2026-12-24T08:00:00.99999Z", "2026-12-24T08:00:00.999Z"),
        ("2024-02-29T23:59:59.999Z", "2024-02-29T23:59:59.999Z"),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"),
        ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z"),
        ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
    ])
    func parsesOffsetsAndFormatsInUTCWithMilliseconds(input: String, formatted: String) throws {
        #expect(RFC3339.format(try RFC3339.parseInstant(input)) == formatted)
    }

    @Test(arguments: [
        ("1970-01-01T00:00:00Z", 0.0),
        ("2026-12-24T08:00:00Z", 1_798_099_200),
        ("2026-12-24T08:00:00.250+01:00", 1_798_095_600.25),
        ("2000-02-29T12:00:00Z", 951_825_600),
    ])
    func parsesToExactEpochSeconds(input: String, secondsSince1970: Double) throws {
        #expect(try RFC3339.parseInstant(input).timeIntervalSince1970 == secondsSince1970)
    }

    @Test(arguments: [
        "", "2026-12-24", "2026-13-01T00:00Z", "2026-02-29T00:00Z", "2026-04-31T00:00Z",
        "2026-12-24T24:00Z", "2026-12-24T08:60Z", "2026-12-24T08:00:61Z", "2026-12-24T08:00:00+1:00",
        "2026-12-24T08:00:00+24:00", "2026-12-24T08:00:00+01:60", "2026-12-24T08:00:00+0100",
        "2026-12-24 08:00:00Z", "2026-12-24T08:00:00.Z", "2026-12-24T08:00:00Zjunk",
        " 2026-12-24T08:00:00Z", "26-12-24T08:00Z", "2026-12-24T8:00Z", "2026-12-24T08:00:00UTC",
        "２０２６-12-24T08:00Z", "2016-12-31T23:59:60Z", "0000-01-01T00:00:00Z", "0001-01-01T00:30:00+01:00",
        "9999-12-31T23:59:00-00:01",
    ])
    func rejectsMalformedInstants(input: String) {
        #expect(throws: ValidationError(.invalidArgument, "")) { try RFC3339.parseInstant(input) }
    }

    @Test(arguments: ["2026-12-24T08:00:00", "2026-12-24T08:00", "2026-12-24T08:00:00.123"])
    func rejectsTimesWithoutOffsetPointingToTimeZoneOption(input: String) {
        let error = #expect(throws: ValidationError.self) { try RFC3339.parseInstant(input) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("--tz") == true)
    }

    @Test func formatTruncatesMillisecondsTowardNegativeInfinity() throws {
        let base = try utc("2026-12-24T08:00:00Z")
        #expect(RFC3339.format(base.addingTimeInterval(0.9996)) == "2026-12-24T08:00:00.999Z")
        #expect(RFC3339.format(base.addingTimeInterval(-0.0004)) == "2026-12-24T07:59:59.999Z")
        // 0.123 added to a large Double lands just below .123; it must still print .123.
        #expect(RFC3339.format(base.addingTimeInterval(0.123)) == "2026-12-24T08:00:00.123Z")
    }

    @Test func formatClampsInstantsBeyondFourDigitYears() {
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1e13)) == "9999-12-31T23:59:59.999Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: .infinity)) == "9999-12-31T23:59:59.999Z")
    }

    @Test func formatMatchesFoundationFormatterForRandomInstants() {
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        reference.timeZone = TimeZone(identifier: "UTC")
        var generator = SeededGenerator(seed: 3339)
        for _ in 0..<2000 {
            // Whole milliseconds, so both sides agree regardless of their rounding rules.
            let milliseconds = Int64.random(in: 0..<253_402_300_800_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            #expect(RFC3339.format(date) == reference.string(from: date))
        }
    }

    @Test func formattedTextParsesBackToTheSameMillisecond() throws {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<2000 {
            let milliseconds = Int64.random(in: 0..<4_102_444_800_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = RFC3339.format(date)
            #expect(RFC3339.format(try RFC3339.parseInstant(text)) == text)
            #expect(abs(try RFC3339.parseInstant(text).timeIntervalSince(date)) < 1e-6)
        }
    }
}
