import Foundation
import Testing

@testable import ChimeCore

@Suite struct PendingCapTests {
    private let base = Date(timeIntervalSince1970: 1_798_099_200)

    private func at(_ minutes: Int) -> Date { base.addingTimeInterval(Double(minutes) * 60) }

    @Test func armsTheSoonestN() {
        let cap = PendingCap(limit: 2, pending: [("c", at(30)), ("a", at(10)), ("d", at(40)), ("b", at(20))])
        #expect(cap.armedKeys == ["a", "b"])
        #expect(cap.waitingKeys == ["c", "d"])
        #expect(cap.isArmed("a") && !cap.isArmed("c") && !cap.isArmed("zzz"))
        #expect(cap.nextFire(of: "d") == at(40))
        #expect(cap.count == 4 && cap.armedCount == 2 && cap.waitingCount == 2)
    }

    @Test func withoutALimitEverythingIsArmed() {
        var cap = PendingCap<String>(limit: nil)
        #expect(cap.schedule("a", nextFire: at(5)) == [.armed("a")])
        #expect(cap.schedule("b", nextFire: at(1)) == [.armed("b")])
        #expect(cap.armedKeys == ["b", "a"])
        #expect(cap.waitingKeys.isEmpty)
    }

    @Test func aSoonerReminderDisplacesTheLatestArmedOne() {
        var cap = PendingCap(limit: 2, pending: [("a", at(10)), ("b", at(20))])
        #expect(cap.schedule("c", nextFire: at(30)) == [])
        #expect(cap.schedule("d", nextFire: at(5)) == [.disarmed("b"), .armed("d")])
        #expect(cap.armedKeys == ["d", "a"])
        #expect(cap.waitingKeys == ["b", "c"])
    }

    @Test func freeingASlotPromotesTheSoonestWaiting() {
        var cap = PendingCap(limit: 2, pending: [("a", at(10)), ("b", at(20)), ("c", at(30)), ("d", at(25))])
        #expect(cap.remove("a") == [.armed("d")])
        #expect(cap.remove("c") == [])
        #expect(cap.remove("missing") == [])
        #expect(cap.armedKeys == ["b", "d"])
    }

    @Test func movingAnArmedReminderLaterCanDemoteIt() {
        var cap = PendingCap(limit: 2, pending: [("a", at(10)), ("b", at(20)), ("c", at(30))])
        // a fired; its next occurrence is after c.
        #expect(cap.schedule("a", nextFire: at(70)) == [.disarmed("a"), .armed("c")])
        // b moves but stays armed: re-arm it at the new instant.
        #expect(cap.schedule("b", nextFire: at(25)) == [.armed("b")])
        // a waiting reminder moving earlier is promoted.
        #expect(cap.schedule("a", nextFire: at(1)) == [.disarmed("c"), .armed("a")])
        #expect(cap.armedKeys == ["a", "b"])
    }

    @Test func equalInstantsBreakTiesByKey() {
        var cap = PendingCap<String>(limit: 1)
        cap.schedule("b", nextFire: at(10))
        #expect(cap.schedule("a", nextFire: at(10)) == [.disarmed("b"), .armed("a")])
        #expect(cap.schedule("c", nextFire: at(10)) == [])
    }

    @Test func changingTheLimitPromotesOrDemotes() {
        var cap = PendingCap(limit: 1, pending: [("a", at(10)), ("b", at(20)), ("c", at(30))])
        #expect(cap.setLimit(3) == [.armed("b"), .armed("c")])
        #expect(cap.setLimit(1) == [.disarmed("c"), .disarmed("b")])
        #expect(cap.setLimit(nil) == [.armed("b"), .armed("c")])
    }

    @Test func randomOperationsKeepTheSoonestArmed() {
        var generator = SeededGenerator(seed: 64)
        var cap = PendingCap<Int>(limit: 8)
        var instants: [Int: Date] = [:]
        var armedByTransitions: Set<Int> = []
        for _ in 0..<5000 {
            let key = Int.random(in: 0..<40, using: &generator)
            let transitions: [PendingCap<Int>.Transition]
            if Bool.random(using: &generator) {
                let instant = at(Int.random(in: 0..<100, using: &generator))
                instants[key] = instant
                transitions = cap.schedule(key, nextFire: instant)
            } else {
                instants[key] = nil
                armedByTransitions.remove(key)
                transitions = cap.remove(key)
            }
            for transition in transitions {
                switch transition {
                case .armed(let key): armedByTransitions.insert(key)
                case .disarmed(let key): armedByTransitions.remove(key)
                }
            }
            let expected = instants.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.prefix(8).map(\.key)
            #expect(cap.armedKeys == expected)
            #expect(armedByTransitions == Set(expected))
            #expect(cap.count == instants.count)
        }
    }
}
