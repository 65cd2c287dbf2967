import Foundation
import Testing

@testable import ChimeCore

/// `unhandled: replace` and `collapseKey` on the delivered list and the badge (the ledger's
/// rules); `skip` is decided at dispatch (see the coordinator's `UnhandledOccurrenceTests`).
@Suite struct UnhandledPolicyTests {
    private let base = Date(timeIntervalSince1970: 1_798_070_400)  // 2026-12-24T00:00:00Z

    private func firing(_ reminder: String, minute: Int, unhandled: UnhandledPolicy = .stack, collapseKey: String? = nil) -> Firing {
        Firing(
            reminderId: ReminderID(reminder), recipient: "alice", dueAt: base.addingTimeInterval(Double(minute) * 60),
            content: Content(title: "\(reminder)\(minute)", unhandled: unhandled, collapseKey: collapseKey))
    }

    @discardableResult
    private func deliver(_ firing: Firing, into ledger: inout BadgeLedger, _ change: BadgeChange? = .increment) -> BadgeUpdate {
        ledger.onDelivered(firing, at: firing.dueAt, badge: change)
    }

    @Test func stackingCountsEveryUnhandledOccurrence() {
        var ledger = BadgeLedger()
        for minute in 0..<3 { deliver(firing("r", minute: minute), into: &ledger) }
        #expect(ledger.badge == 3)
        #expect(ledger.delivered.map(\.title) == ["r2", "r1", "r0"])
    }

    @Test func replacingKeepsOneEntryAndTheBadgeCountsItOnce() {
        var ledger = BadgeLedger()
        #expect(deliver(firing("r", minute: 0, unhandled: .replace), into: &ledger) == BadgeUpdate(badge: 1, isChanged: true))
        #expect(deliver(firing("r", minute: 1, unhandled: .replace), into: &ledger) == BadgeUpdate(badge: 1, isChanged: false))
        #expect(deliver(firing("r", minute: 2, unhandled: .replace), into: &ledger) == BadgeUpdate(badge: 1, isChanged: false))
        #expect(ledger.delivered.map(\.title) == ["r2"])
        // Another reminder's firings stay, and handling the one left clears the badge.
        deliver(firing("other", minute: 3), into: &ledger)
        #expect(ledger.badge == 2)
        #expect(ledger.onHandled(FiringID(ReminderKey("r", of: "alice"), dueAt: base.addingTimeInterval(120))) == BadgeUpdate(badge: 1, isChanged: true))
        #expect(ledger.delivered.map(\.title) == ["other3"])
    }

    @Test func replacingAnAbsoluteBadgeSetsItAsBefore() {
        var ledger = BadgeLedger()
        deliver(firing("r", minute: 0, unhandled: .replace), into: &ledger, .set(4))
        #expect(deliver(firing("r", minute: 1, unhandled: .replace), into: &ledger, .set(7)) == BadgeUpdate(badge: 7, isChanged: true))
        #expect(ledger.delivered.count == 1)
    }

    @Test func aStackedOccurrenceIsReplacedByALaterReplacingOne() {
        var ledger = BadgeLedger()
        deliver(firing("r", minute: 0), into: &ledger)
        deliver(firing("r", minute: 1), into: &ledger)
        #expect(ledger.badge == 2)
        deliver(firing("r", minute: 2, unhandled: .replace), into: &ledger)
        #expect(ledger.badge == 1)
        #expect(ledger.delivered.map(\.title) == ["r2"])
    }

    @Test func aCollapseKeyReplacesAcrossReminders() {
        var ledger = BadgeLedger()
        deliver(firing("score-a", minute: 0, collapseKey: "match-7"), into: &ledger)
        deliver(firing("unrelated", minute: 1), into: &ledger)
        deliver(firing("score-b", minute: 2, collapseKey: "match-7"), into: &ledger)
        #expect(ledger.badge == 2)
        #expect(ledger.delivered.map(\.title) == ["score-b2", "unrelated1"])
        #expect(ledger.delivered.first?.collapseKey == "match-7")
    }

    @Test func skipLeavesTheListAloneHereAndTheLedgerSaysWhatIsListed() {
        var ledger = BadgeLedger()
        deliver(firing("r", minute: 0, unhandled: .skip), into: &ledger)
        #expect(ledger.lists(reminder: "r"))
        #expect(!ledger.lists(reminder: "s"))
    }

    @Test func theCollapseKeyIsValidatedAndSurvivesJSONAndBinary() throws {
        try Content(collapseKey: String(repeating: "k", count: 64)).validate()
        for bad in ["", String(repeating: "k", count: 65)] {
            #expect(throws: ValidationError.self) { try Content(collapseKey: bad).validate() }
        }
        let content = Content(title: "t", unhandled: .replace, collapseKey: "k")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try encoder.encode(content)
        #expect(String(decoding: json, as: UTF8.self) == #"{"collapseKey":"k","title":"t","unhandled":"replace"}"#)
        #expect(try JSONDecoder().decode(Content.self, from: json) == content)
        let reminder = Reminder(id: "r", recipient: "alice", content: content, trigger: Trigger(start: .instant(base)))
        #expect(try Reminder(binary: reminder.binaryEncoded()) == reminder)
        let entry = DeliveredFiring(
            firingId: FiringID(ReminderKey("r", of: "alice"), dueAt: base), reminderId: "r", dueAt: base, firedAt: base,
            title: nil, countsTowardBadge: true, collapseKey: "k")
        #expect(try JSONDecoder().decode(DeliveredFiring.self, from: try JSONEncoder().encode(entry)) == entry)
    }
}
