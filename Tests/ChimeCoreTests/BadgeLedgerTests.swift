import Foundation
import Testing

@testable import ChimeCore

@Suite struct BadgeLedgerTests {
    private let base = Date(timeIntervalSince1970: 1_798_070_400)  // 2026-12-24T00:00:00Z

    private func firing(_ reminder: String, minute: Int, title: String? = nil) -> Firing {
        Firing(
            reminderId: ReminderID(reminder), recipient: "alice", dueAt: base.addingTimeInterval(Double(minute) * 60),
            content: Content(title: title))
    }

    @discardableResult
    private func deliver(_ firing: Firing, into ledger: inout BadgeLedger, _ change: BadgeChange?) -> BadgeUpdate {
        ledger.onDelivered(firing, at: firing.dueAt.addingTimeInterval(0.004), badge: change)
    }

    @Test func setBadgesFollowTheIOSRules() {
        var ledger = BadgeLedger()
        #expect(deliver(firing("a", minute: 0), into: &ledger, .set(5)) == BadgeUpdate(badge: 5, isChanged: true))
        #expect(deliver(firing("b", minute: 1), into: &ledger, .set(0)) == BadgeUpdate(badge: 5, isChanged: false))
        #expect(deliver(firing("c", minute: 2), into: &ledger, .set(5)) == BadgeUpdate(badge: 5, isChanged: false))
        #expect(deliver(firing("d", minute: 3), into: &ledger, nil) == BadgeUpdate(badge: 5, isChanged: false))
        #expect(deliver(firing("e", minute: 4), into: &ledger, .set(-2)) == BadgeUpdate(badge: 0, isChanged: true))
        #expect(ledger.delivered.map(\.reminderId) == ["e", "d", "c", "b", "a"])
    }

    @Test func handlingDecrementsByOneNeverBelowZero() {
        var ledger = BadgeLedger()
        let first = firing("a", minute: 0)
        let second = firing("b", minute: 1)
        deliver(first, into: &ledger, .set(1))
        deliver(second, into: &ledger, nil)
        #expect(ledger.onHandled(second.firingId) == BadgeUpdate(badge: 0, isChanged: true))
        #expect(ledger.onHandled(first.firingId) == BadgeUpdate(badge: 0, isChanged: false))
        #expect(ledger.delivered.isEmpty)
    }

    @Test func handlingTwiceOrAnUnlistedFiringChangesNothing() {
        var ledger = BadgeLedger()
        let first = firing("a", minute: 0)
        deliver(first, into: &ledger, .set(4))
        #expect(ledger.onHandled(first.firingId) == BadgeUpdate(badge: 3, isChanged: true))
        #expect(ledger.onHandled(first.firingId) == BadgeUpdate(badge: 3, isChanged: false))
        #expect(ledger.onHandled(FiringID(ReminderKey("never", of: "alice"), dueAtMilliseconds: 0)) == BadgeUpdate(badge: 3, isChanged: false))
    }

    @Test func plusOneCountsDeliveredUnhandledFirings() {
        var ledger = BadgeLedger()
        let firings = (0..<3).map { firing("r\($0)", minute: $0) }
        let rising = firings.map { deliver($0, into: &ledger, .increment).badge }
        #expect(rising == [1, 2, 3])
        #expect(ledger.delivered.map(\.countsTowardBadge) == [true, true, true])
        #expect(ledger.onHandled(firings[1].firingId) == BadgeUpdate(badge: 2, isChanged: true))
        #expect(ledger.removeDelivered(firings[0].firingId) == BadgeUpdate(badge: 1, isChanged: true))
        #expect(ledger.delivered.map(\.reminderId) == ["r2"])
        #expect(ledger.badge == ledger.delivered.count)
    }

    @Test func anAbsoluteSetOverridesTheCountThenIncrementsMoveFromIt() {
        var ledger = BadgeLedger()
        let a = firing("a", minute: 0)
        let b = firing("b", minute: 1)
        let c = firing("c", minute: 2)
        deliver(a, into: &ledger, .increment)
        deliver(b, into: &ledger, .set(10))
        #expect(deliver(c, into: &ledger, .increment) == BadgeUpdate(badge: 11, isChanged: true))
        #expect(ledger.onHandled(b.firingId) == BadgeUpdate(badge: 10, isChanged: true))
        #expect(ledger.onHandled(a.firingId) == BadgeUpdate(badge: 9, isChanged: true))
    }

    @Test func removingAnAbsoluteFiringLeavesTheBadge() {
        var ledger = BadgeLedger()
        let a = firing("a", minute: 0)
        deliver(a, into: &ledger, .set(7))
        #expect(ledger.removeDelivered(a.firingId) == BadgeUpdate(badge: 7, isChanged: false))
        #expect(ledger.delivered.isEmpty)
        #expect(ledger.removeDelivered(a.firingId) == BadgeUpdate(badge: 7, isChanged: false))
    }

    @Test func setBadgeAboveZeroKeepsTheListAndZeroClearsIt() {
        var ledger = BadgeLedger()
        deliver(firing("a", minute: 0), into: &ledger, .increment)
        deliver(firing("b", minute: 1), into: &ledger, .increment)
        #expect(ledger.setBadge(9) == BadgeUpdate(badge: 9, isChanged: true))
        #expect(ledger.delivered.count == 2)
        #expect(ledger.setBadge(9) == BadgeUpdate(badge: 9, isChanged: false))
        #expect(ledger.setBadge(-4) == BadgeUpdate(badge: 0, isChanged: true))
        #expect(ledger.delivered.isEmpty)
        #expect(ledger.setBadge(0) == BadgeUpdate(badge: 0, isChanged: false))
    }

    @Test func aRedeliveryOfAListedFiringChangesNothing() {
        var ledger = BadgeLedger()
        let a = firing("a", minute: 0)
        deliver(a, into: &ledger, .increment)
        var again = a
        again.attempt = 2
        #expect(deliver(again, into: &ledger, .increment) == BadgeUpdate(badge: 1, isChanged: false))
        #expect(ledger.delivered.count == 1)
    }

    @Test func nagsShareTheirFiringsEntry() {
        var ledger = BadgeLedger()
        let a = firing("a", minute: 0)
        deliver(a, into: &ledger, .increment)
        let nag = a.makeNag(Nag(firingId: FiringID(nag: 1, of: a.firingId), number: 1, at: a.dueAt.addingTimeInterval(600)))
        #expect(ledger.onDelivered(nag, at: nag.dueAt, badge: .increment) == BadgeUpdate(badge: 1, isChanged: false))
        #expect(ledger.isDelivered(nag.firingId))
        #expect(ledger.onHandled(nag.firingId) == BadgeUpdate(badge: 0, isChanged: true))
        #expect(!ledger.isDelivered(a.firingId))
    }

    @Test func theOldestEntryGoesBeyondTheLimit() {
        var ledger = BadgeLedger(deliveredLimit: 2)
        deliver(firing("a", minute: 0), into: &ledger, .increment)
        deliver(firing("b", minute: 1), into: &ledger, .set(5))
        #expect(deliver(firing("c", minute: 2), into: &ledger, .increment) == BadgeUpdate(badge: 5, isChanged: false))
        #expect(ledger.delivered.map(\.reminderId) == ["c", "b"])
        #expect(deliver(firing("d", minute: 3), into: &ledger, nil) == BadgeUpdate(badge: 5, isChanged: false))
        #expect(ledger.delivered.map(\.reminderId) == ["d", "c"])
    }

    @Test func aLateAckTakesItsPlaceByDeliveryInstant() {
        var ledger = BadgeLedger(deliveredLimit: 3)
        // Delivered at :00.004, :01.004, :02.004 but acknowledged c, a, b.
        deliver(firing("c", minute: 2), into: &ledger, .increment)
        deliver(firing("a", minute: 0), into: &ledger, .increment)
        deliver(firing("b", minute: 1), into: &ledger, .increment)
        #expect(ledger.delivered.map(\.reminderId) == ["c", "b", "a"])
        // Equal instants keep acknowledgement order: the later ack is newer.
        let twin = Firing(reminderId: "d", recipient: "alice", dueAt: base.addingTimeInterval(120), content: Content())
        #expect(ledger.onDelivered(twin, at: base.addingTimeInterval(120.004), badge: .increment) == BadgeUpdate(badge: 3, isChanged: false))
        #expect(ledger.delivered.map(\.reminderId) == ["d", "c", "b"])
        // One older than everything listed, at the limit, is the one that goes (its "+1" with it).
        let stale = Firing(reminderId: "e", recipient: "alice", dueAt: base.addingTimeInterval(-60), content: Content())
        #expect(ledger.onDelivered(stale, at: base.addingTimeInterval(-59.996), badge: .increment) == BadgeUpdate(badge: 3, isChanged: false))
        #expect(ledger.delivered.map(\.reminderId) == ["d", "c", "b"])
        #expect(ledger.delivered.map(\.firedAt) == ledger.delivered.map(\.firedAt).sorted(by: >))
    }

    @Test func encodesNewestFirstAndDecodesBack() throws {
        var ledger = BadgeLedger()
        deliver(firing("a", minute: 0, title: "Tea"), into: &ledger, .set(2))
        deliver(firing("b", minute: 1), into: &ledger, .increment)
        let json = try wireJSON(ledger)
        #expect(
            json
                == #"{"badge":3,"delivered":[{"counted":true,"dueAt":"2026-12-24T00:01:00.000Z","firedAt":"2026-12-24T00:01:00.004Z","firingId":"alice/b@2026-12-24T00:01:00.000Z","reminderId":"b"},{"counted":false,"dueAt":"2026-12-24T00:00:00.000Z","firedAt":"2026-12-24T00:00:00.004Z","firingId":"alice/a@2026-12-24T00:00:00.000Z","reminderId":"a","title":"Tea"}]}"#
        )
        #expect(try decodeWire(BadgeLedger.self, json) == ledger)
    }

    /// What a tenant's byte quota counts for a delivered list (issue 37 item 3): kept as the
    /// list changes, always the sum over the listed firings, each its JSON form's length.
    @Test func storedBytesFollowEveryChangeOfTheList() throws {
        var ledger = BadgeLedger(deliveredLimit: 4)
        func sum() -> Int { ledger.delivered.reduce(0) { $0 + $1.storedBytes } }
        var collapsing = firing("c", minute: 9, title: "Tea")
        collapsing.content.collapseKey = "k"
        let firings = (0..<6).map { firing("r\($0)", minute: $0, title: $0 % 2 == 0 ? "Title \($0)" : nil) } + [collapsing]
        for (index, next) in firings.enumerated() {
            deliver(next, into: &ledger, index % 3 == 0 ? .increment : nil)
            #expect(ledger.storedBytes == sum())
        }
        #expect(ledger.delivered.count == 4)  // the oldest two dropped past the limit
        ledger.onHandled(firings[3].firingId)
        #expect(ledger.storedBytes == sum())
        ledger.removeDelivered(firings[4].firingId)
        #expect(ledger.storedBytes == sum())
        // A delivery with the same collapse key takes the listed one off.
        var replacing = firing("d", minute: 10)
        replacing.content.collapseKey = "k"
        deliver(replacing, into: &ledger, nil)
        #expect(ledger.delivered.map(\.reminderId) == ["d", "r5"])
        #expect(ledger.storedBytes == sum())
        // The JSON a snapshot stores is as long as counted.
        for entry in ledger.delivered {
            let json = try wireJSON(entry)
            #expect(entry.storedBytes == json.utf8.count, "\(json)")
        }
        // Strings that need escapes count as escaped: quotes, backslashes, short and long
        // control escapes, a slash (not escaped), U+2028 and an emoji (raw UTF-8).
        var escaped = firing("q\"\\/", minute: 11, title: "\u{0}\u{1}\u{8}\t\n\u{C}\r\u{1F}\u{7F}\u{2028}😀")
        escaped.content.collapseKey = "\"k\u{2}"
        deliver(escaped, into: &ledger, .increment)
        for entry in ledger.delivered {
            let json = try wireJSON(entry)
            #expect(entry.storedBytes == json.utf8.count, "\(json)")
        }
        #expect(ledger.storedBytes == sum())
        ledger.setBadge(0)
        #expect(ledger.storedBytes == 0)
        // A decoded ledger counts its list too.
        let decoded = BadgeLedger(badge: 1, delivered: [DeliveredFiring(
            firingId: firings[0].firingId, reminderId: "r0", dueAt: base, firedAt: base, title: "x", countsTowardBadge: true)])
        #expect(decoded.storedBytes == 144 + 5 + 2 * 2 + 11 + 1)
    }
}
