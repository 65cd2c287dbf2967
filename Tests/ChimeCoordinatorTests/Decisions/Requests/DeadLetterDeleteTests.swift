import ChimeCore
import ChimeJournal
import ChimeSecurity
import ChimeStore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// `deleteDeadLetter`: the firing leaves the dead letters for good (journaled as
/// `.deadLetterDeleted`, folded by `DurableState.apply`), live, after a replay and after a
/// snapshot alike; an unknown or already deleted firing is `not_found`; only an operator may.
@Suite struct DeadLetterDeleteTests {
    static let t0 = DurableStateTests.t0
    static let firingId = FiringID(ReminderKey("a", of: "alice"), dueAt: t0)

    /// A run whose one firing exhausted its one attempt, plus a second dead letter.
    static func deadLettered() -> DurableStateTests.Run {
        var run = DurableStateTests.Run { $0.maxAttempts = 1; $0.leaseDuration = 1 }
        run.worker(at: t0)
        let reminders = ["a", "b"].map { id in
            Reminder(id: ReminderID(id), recipient: "alice", content: Content(body: id), trigger: Trigger(start: .instant(t0)))
        }
        run.request(.schedule(reminders))
        _ = run.tick(at: t0)
        _ = run.tick(at: t0.addingTimeInterval(1))
        _ = run.tick(at: t0.addingTimeInterval(2))
        return run
    }

    @Test func aDeletedDeadLetterIsGoneLiveAfterReplayAndAfterASnapshot() throws {
        var run = Self.deadLettered()
        #expect(run.state.deadLetters.keys.sorted() == [Self.firingId, FiringID(ReminderKey("b", of: "alice"), dueAt: Self.t0)])
        let at = Self.t0.addingTimeInterval(3)
        let outcome = run.request(.deleteDeadLetter(Self.firingId), at: at)
        #expect(outcome == .deadLetterDeleted(DeleteDeadLetterResult(firingId: Self.firingId)))
        #expect(run.journal.last == .deadLetterDeleted(Self.firingId, at: at))
        #expect(run.state.deadLetters.keys.sorted() == [FiringID(ReminderKey("b", of: "alice"), dueAt: Self.t0)])
        // It never fires again: later turns dispatch nothing of it.
        for second in 4..<10 {
            #expect(DurableStateTests.firings(run.tick(at: Self.t0.addingTimeInterval(Double(second)))).isEmpty)
        }
        let replayed = run.replayed()
        let reloaded = try run.reloaded()
        #expect(replayed.durable == run.state.durable)
        #expect(reloaded.durable == run.state.durable)
        #expect(replayed.deadLetters.count == 1 && reloaded.deadLetters.count == 1)
        guard case .deadLetters(let listed) = run.request(.deadLetters()) else { Issue.record("deadLetters was refused"); return }
        #expect(listed.firings.map(\.firingId) == [FiringID(ReminderKey("b", of: "alice"), dueAt: Self.t0)])
    }

    @Test func anUnknownOrDeletedFiringIsNotFoundAndChangesNothing() {
        var run = Self.deadLettered()
        run.request(.deleteDeadLetter(Self.firingId), at: Self.t0.addingTimeInterval(3))
        let entries = run.journal.count
        for named in [Self.firingId, FiringID(ReminderKey("zzz", of: "alice"), dueAt: Self.t0)] {
            for command in [ControlRequest.Command.deleteDeadLetter(named), .retry(named)] {
                guard case .failed(let error) = run.request(command) else { Issue.record("\(command) was not refused"); continue }
                #expect(error.code == .notFound)
                #expect(error.message == "no dead-lettered firing \(named)")
                #expect(error.field == "firingId")
            }
        }
        #expect(run.journal.count == entries)
        #expect(run.state.deadLetters.count == 1)
    }

    @Test func onlyTheOperatorRoleMayDelete() {
        #expect(CoordinatorState.operations(for: .operator).contains(.deleteDeadLetter))
        for role in [Role.client, .worker, .subscriber] {
            #expect(!CoordinatorState.operations(for: role).contains(.deleteDeadLetter))
        }
    }

    @Test func theEntryRoundTripsThroughTheJournalCodecAndGarbageIsRefused() throws {
        let codec = JournalEntryCodec()
        let entry = JournalEntry.deadLetterDeleted(Self.firingId, at: Self.t0)
        let payload = try codec.encode(entry)
        #expect(payload.encoding == JournalEntryCodec.jsonEncoding)
        #expect(try codec.decode(payload.bytes[...], encoding: payload.encoding) == entry)
        #expect(entry.subjects.firings == [Self.firingId])
        #expect(!entry.hasLegacyIdentities)
        for garbage in [
            #"{"deadLetterDeleted":{"_0":42,"at":0}}"#, #"{"deadLetterDeleted":{}}"#, #"{"deadLetterDeleted":{"_0":"no-at-sign","at":0}}"#,
            #"{"deadLetterDeleted":"x"}"#, "\u{0}\u{1}\u{2}",
        ] {
            #expect(throws: JournalError.self) { try codec.decode(Array(garbage.utf8)[...], encoding: JournalEntryCodec.jsonEncoding) }
        }
    }

    @Test func theRequestDecodesRoutesByItsRecipientAndIsAChange() throws {
        let codec = WireCodec()
        let json = #"{"op":"deleteDeadLetter","firingId":"\#(Self.firingId.description)","requestId":"r1"}"#
        let request = try codec.decode(ControlRequest.self, from: Data(json.utf8))
        #expect(request.command == .deleteDeadLetter(Self.firingId))
        #expect(request.operation == .deleteDeadLetter)
        #expect(request.routingRecipient == "alice")
        #expect(request.isMutating)
        #expect(try codec.decode(ControlRequest.self, from: codec.encode(request)) == request)
        #expect(throws: WireError.self) { try codec.decode(ControlRequest.self, from: Data(#"{"op":"deleteDeadLetter"}"#.utf8)) }
        #expect(throws: WireError.self) {
            try codec.decode(ControlRequest.self, from: Data(#"{"op":"deleteDeadLetter","firingId":"x","limit":1}"#.utf8))
        }
    }
}
