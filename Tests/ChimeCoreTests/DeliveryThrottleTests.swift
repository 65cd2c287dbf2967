import Foundation
import Testing

@testable import ChimeCore

/// The throttle's slots: at most `count` in any stretch of `seconds`, in order.
@Suite struct DeliveryThrottleTests {
    let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let twoPerHour = DeliveryThrottle(count: 2, seconds: 3600)

    func at(_ minutes: Double) -> Date { t0.addingTimeInterval(minutes * 60) }

    @Test func underTheLimitTheSlotIsThePlannedInstant() {
        #expect(twoPerHour.slot(for: at(5), after: []) == at(5))
        #expect(twoPerHour.slot(for: at(5), after: [at(0)]) == at(5))
    }

    @Test func overTheLimitTheSlotIsTheCountThLatestPlusTheStretch() {
        #expect(twoPerHour.slot(for: at(2), after: [at(0), at(1)]) == at(60))
        #expect(twoPerHour.slot(for: at(3), after: [at(1), at(60)]) == at(61))
        // Once the stretch has passed, the planned instant again.
        #expect(twoPerHour.slot(for: at(125), after: [at(60), at(61)]) == at(125))
    }

    @Test func aLaterSlotAlreadyGivenKeepsTheOrder() {
        // A firing held until 09:00 (quiet hours) comes before one planned at 08:30.
        #expect(DeliveryThrottle(count: 5, seconds: 60).slot(for: at(30), after: [at(60)]) == at(60))
    }

    @Test func aSequenceNeverPutsMoreThanCountInAnyStretch() {
        var slots: [Date] = []
        let throttle = DeliveryThrottle(count: 3, seconds: 600)
        for minute in 0..<20 {
            let slot = throttle.slot(for: at(Double(minute)), after: Array(slots.suffix(throttle.count)))
            slots.append(slot)
        }
        #expect(slots == slots.sorted())
        for (index, slot) in slots.enumerated() {
            let inStretch = slots[...index].filter { $0 > slot.addingTimeInterval(-600) }
            #expect(inStretch.count <= 3, "slot \(index)")
        }
        #expect(slots.prefix(4) == [at(0), at(1), at(2), at(10)])
    }

    @Test func parsesAndValidates() throws {
        #expect(try DeliveryThrottle(parsing: "5/1h") == DeliveryThrottle(count: 5, seconds: 3600))
        for bad in ["5", "0/1h", "5/0s", "x/1h", "5/8d"] {
            #expect(throws: ValidationError.self, "\(bad)") { try DeliveryThrottle(parsing: bad) }
        }
        let json = try JSONEncoder().encode(DeliveryThrottle(count: 5, seconds: 3600))
        #expect(try JSONDecoder().decode(DeliveryThrottle.self, from: json) == DeliveryThrottle(count: 5, seconds: 3600))
        #expect(try JSONDecoder().decode(DeliveryThrottle.self, from: Data(#"{"count":2,"seconds":"10m"}"#.utf8))
            == DeliveryThrottle(count: 2, seconds: 600))
    }
}
