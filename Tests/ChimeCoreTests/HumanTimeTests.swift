import Foundation
import Testing

@testable import ChimeCore

@Suite struct HumanTimeTests {
    static let now = Date(timeIntervalSince1970: 1_795_525_200)  // 2026-11-24T13:00:00Z

    @Test(arguments: [
        (0.0 as Double, "0s" as String), (0.9, "0s"), (45, "45s"), (180, "3m"), (200, "3m 20s"), (3600, "1h"), (7500, "2h 5m"),
        (7505, "2h 5m"), (86_400, "1d"), (356_400, "4d 3h"), (1_051_200, "12d 4h"), (-200, "3m 20s"),
        (Double.infinity, "unknown"), (Double.nan, "unknown"),
    ] as [(Double, String)])
    func durationsUseAtMostTwoUnits(seconds: Double, text: String) {
        #expect(HumanTime.duration(seconds: seconds) == text)
    }

    @Test(arguments: [
        (-180, "3m ago"), (7500, "in 2h 5m"), (0.2, "now"), (-0.4, "now"), (59, "in 59s"),
        (6 * 86_400 + 3600, "in 6d 1h"), (7 * 86_400, "in 7d"),
        (7 * 86_400 + 1, "2026-12-01 13:00 UTC"), (-30 * 86_400, "2026-10-25 13:00 UTC"),
        (-218_213_314, "2019-12-25 22:11 UTC"),
    ] as [(Double, String)])
    func instantsAreRelativeWithinAWeekAndAbsoluteBeyond(offset: Double, text: String) {
        #expect(HumanTime.describe(Self.now.addingTimeInterval(offset), relativeTo: Self.now) == text)
    }

    @Test func absoluteDatesAreUTCToTheMinute() {
        #expect(HumanTime.absolute(Self.now.addingTimeInterval(59.9)) == "2026-11-24 13:00 UTC")
        #expect(HumanTime.absolute(Date(timeIntervalSince1970: 0)) == "1970-01-01 00:00 UTC")
    }
}
