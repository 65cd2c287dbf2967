import Foundation
import Testing

@testable import ChimeCore

@Suite struct NagPolicyTests {
    private let due = Date(timeIntervalSince1970: 1_798_070_400)  // 2026-12-24T00:00:00Z

    @Test func parsesTheCommandLine() throws {
        #expect(try NagPolicy(count: 3, every: "10m") == NagPolicy(count: 3, interval: 600))
        _ = expectValidationError(.invalidArgument, field: "nag.interval") { _ = try NagPolicy(count: 3, every: "10 min") }
    }

    @Test func rejectsOutOfRangeValues() {
        let short = expectValidationError(.invalidArgument, field: "nag.interval") {
            try NagPolicy(count: 3, interval: 59).validate()
        }
        #expect(short?.message == "nags must be at least 60 s apart, not 59s")
        let none = expectValidationError(.invalidArgument, field: "nag.count") {
            try NagPolicy(count: 0, interval: 60).validate()
        }
        #expect(none?.message == "must be 1…100 nags, not 0")
        _ = expectValidationError(.invalidArgument, field: "nag.count") { try NagPolicy(count: 101, interval: 60).validate() }
        _ = expectValidationError(.invalidArgument, field: "nag.interval") {
            try NagPolicy(count: 1, interval: .infinity).validate()
        }
    }

    @Test func nagsFollowTheDueInstant() {
        let firing = Firing(reminderId: "standup", recipient: "alice", dueAt: due, content: Content(title: "t"))
        let nags = NagPolicy(count: 3, interval: 600).nags(of: firing, deliveredAt: due.addingTimeInterval(0.004))
        #expect(nags.map(\.firingId.text) == [
            "alice/standup@2026-12-24T00:00:00.000Z#nag1", "alice/standup@2026-12-24T00:00:00.000Z#nag2",
            "alice/standup@2026-12-24T00:00:00.000Z#nag3",
        ])
        #expect(nags.map { RFC3339.format($0.at) } == [
            "2026-12-24T00:10:00.000Z", "2026-12-24T00:20:00.000Z", "2026-12-24T00:30:00.000Z",
        ])
        #expect(nags.map(\.number) == [1, 2, 3])
    }

    @Test func lateFiringsNagFromTheirDelivery() {
        let firing = Firing(reminderId: "r", recipient: "alice", dueAt: due, content: Content(), late: true)
        let nags = NagPolicy(count: 1, interval: 60).nags(of: firing, deliveredAt: due.addingTimeInterval(7200))
        #expect(nags.map { RFC3339.format($0.at) } == ["2026-12-24T02:01:00.000Z"])
    }

    @Test func nagIDsLeadBackToTheirFiring() throws {
        let firing = try #require(FiringID("alice/a#nag1@2026-12-24T00:00:00.000Z"))
        #expect(firing.reminder == "a#nag1" && firing.recipient == "alice" && firing.dueAt == due)
        #expect(!firing.isNag && firing.nagNumber == nil && firing.nagBase == firing)
        let nag = FiringID(nag: 12, of: firing)
        #expect(nag.text == "alice/a#nag1@2026-12-24T00:00:00.000Z#nag12")
        #expect(FiringID(nag.text) == nag)
        #expect(nag.isNag && nag.nagNumber == 12 && nag.nagBase == firing)
        #expect(FiringID(nag: 2, of: nag).text == "alice/a#nag1@2026-12-24T00:00:00.000Z#nag2")
        #expect(FiringID("alice/x@2026-12-24T00:00:00.000Z#nag") == nil)
        #expect(FiringID("alice/x@2026-12-24T00:00:00.000Z#nagx") == nil)
        #expect(FiringID("alice/x@2026-12-24T00:00:00.000Z#nag0") == nil)
        #expect(FiringID("alice/x@2026-12-24T00:00:00.000Z#nag01") == nil)
        #expect(FiringID("alice/x@2026-12-24T00:00:00.000Z#nag4294967296") == nil)
        #expect(FiringID("alice/x@2026-12-24T00:00:00.000Z#nag4294967295")?.nag == 4_294_967_295)
    }

    @Test func aNagFiringCarriesNoBadgeChange() {
        let firing = Firing(
            reminderId: "r", recipient: "alice", dueAt: due, content: Content(title: "t", badgeChange: .increment),
            attempt: 2)
        let nag = Nag(firingId: FiringID(nag: 1, of: firing.firingId), number: 1, at: due.addingTimeInterval(60))
        let nagFiring = firing.makeNag(nag)
        #expect(nagFiring.firingId == nag.firingId)
        #expect(nagFiring.dueAt == nag.at)
        #expect(nagFiring.content == Content(title: "t"))
        #expect(nagFiring.attempt == 1)
    }

    @Test func reminderJSONCarriesTheNagPolicy() throws {
        let reminder = try decodeWire(
            Reminder.self,
            #"{"id":"r","recipient":"alice","trigger":{"at":"2026-12-24T08:00:00Z"},"nag":{"count":3,"interval":"10m"}}"#)
        #expect(reminder.nag == NagPolicy(count: 3, interval: 600))
        #expect(try wireJSON(reminder).contains(#""nag":{"count":3,"interval":600}"#))
        let plain = try decodeWire(Reminder.self, #"{"id":"r","recipient":"alice","trigger":{"at":"2026-12-24T08:00:00Z"}}"#)
        #expect(plain.nag == nil)
        #expect(try !wireJSON(plain).contains("nag"))
        var invalid = reminder
        invalid.nag = NagPolicy(count: 3, interval: 30)
        _ = expectValidationError(.invalidArgument, field: "nag.interval") { _ = try invalid.validate() }
    }
}
