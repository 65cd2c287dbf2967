import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// The one outbox every reply and event leaves by: ordered by the journal ticket each waits
/// for, what depends on nothing first, one client's replies never reordered.
@Suite struct OutboxTests {
    let alice = ClientAddress(routing: [Data("alice".utf8)])
    let bob = ClientAddress(routing: [Data("bob".utf8)])

    func bodies(_ ready: [Outbox.Ready]) -> [String] {
        ready.map {
            switch $0 {
            case .reply(let body, _): String(decoding: body, as: UTF8.self)
            case .event(let topic, _): topic
            }
        }
    }

    @Test func messagesLeaveOnceTheirTicketIsDurableInTicketOrder() {
        var outbox = Outbox()
        outbox.append(.reply(Data("a1".utf8), to: alice), after: 1)
        outbox.append(.event(topic: "badge.alice", body: Data()), after: 1)
        outbox.append(.reply(Data("b2".utf8), to: bob), after: 2)
        #expect(outbox.takeReady(durable: 0).isEmpty)
        #expect(bodies(outbox.takeReady(durable: 1)) == ["a1", "badge.alice"])
        #expect(outbox.count == 1)
        #expect(bodies(outbox.takeReady(durable: 5)) == ["b2"])
        #expect(outbox.isEmpty)
    }

    @Test func whatDependsOnNothingGoesAheadOfWhatWaits() {
        var outbox = Outbox()
        outbox.append(.reply(Data("waits".utf8), to: alice), after: 3)
        outbox.append(.reply(Data("first".utf8), to: bob), after: 0)
        outbox.append(.reply(Data("second".utf8), to: alice), after: 0)
        #expect(bodies(outbox.takeReady(durable: 2)) == ["first", "second"])
        #expect(bodies(outbox.takeReady(durable: 3)) == ["waits"])
    }

    @Test func aReplyStillBeingEncodedHoldsBackItsClientOnly() {
        var outbox = Outbox()
        // No encoder: job 1 is never done.
        outbox.append(.encoding(1, to: alice), after: 1)
        outbox.append(.reply(Data("alice later".utf8), to: alice), after: 1)
        outbox.append(.reply(Data("bob".utf8), to: bob), after: 1)
        #expect(bodies(outbox.takeReady(durable: 1)) == ["bob"])
        #expect(outbox.count == 2, "alice's replies keep their place and order")
    }
}
