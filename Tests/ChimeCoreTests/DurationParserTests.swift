import Testing

@testable import ChimeCore

@Suite struct DurationParserTests {
    @Test(arguments: [
        ("90s", 90.0), ("5m", 300), ("2h", 7200), ("1d", 86_400), ("1w", 604_800), ("1h30m", 5400),
        ("500ms", 0.5), ("90", 90), ("1.5", 1.5), ("1.5h", 5400), ("2d12h", 216_000),
        ("1m30s500ms", 90.5), ("0", 0), ("0s", 0), ("1w1d1h1m1s1ms", 694_861.001),
    ])
    func parsesUnitsAndPlainSeconds(input: String, seconds: Double) throws {
        #expect(try DurationParser.parseSeconds(input) == seconds)
    }

    @Test(arguments: [
        "", "-5m", "+5m", "-1", "5x", "5min", "5y", "m", "1h30", "30m1h", "1m1m", "1.h", ".h", "1 h",
        " 5m", "5m ", "1e3s", "5M", String(repeating: "9", count: 400) + "w",
    ])
    func rejectsMalformedDurations(input: String) {
        #expect(throws: ValidationError(.invalidArgument, "")) { try DurationParser.parseSeconds(input) }
    }

    @Test(arguments: [
        (5400.0, "1h30m"), (90, "1m30s"), (0.5, "500ms"), (0, "0s"), (86_400, "1d"), (604_800, "1w"),
        (694_861.25, "1w1d1h1m1s250ms"), (1.0004, "1s"), (-90, "-1m30s"),
    ])
    func formatsLargestUnitsFirst(seconds: Double, text: String) {
        #expect(DurationParser.format(seconds: seconds) == text)
    }

    @Test(arguments: [0.001, 1, 59, 61.5, 3599, 86_399.999, 1_209_600])
    func formattedDurationsParseBack(seconds: Double) throws {
        #expect(try DurationParser.parseSeconds(DurationParser.format(seconds: seconds)) == seconds)
    }
}
