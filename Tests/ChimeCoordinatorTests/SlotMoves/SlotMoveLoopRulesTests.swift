import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// The move rules at the coordinator's loop: the write gate (`try_again` with `retryAfterMs`
/// while paused or handed over, `wrong_shard` once the map shows the target), `mayFire` (a
/// handed-over slot's occurrences are not taken) and the register's map adopted by the state.
@Suite struct SlotMoveLoopRulesTests {
    static let t0 = OwnershipTests.t0
    static let map = OwnershipTests.map
    static let moving = OwnershipTests.recipient(on: 0)
    static var staying: RecipientID {
        for n in 0... {
            let recipient = RecipientID("other-\(n)")
            if map.shard(of: recipient)?.id == 0 && map.slot(of: recipient) != map.slot(of: moving) { return recipient }
        }
        preconditionFailure("unreachable")
    }
    static let move = SlotMove(id: SlotMoveID("m1"), slots: [map.slot(of: moving)], source: 0, target: 2, slotCount: map.slotCount)
    let client = ClientAddress(routing: [Data([1])])

    func scheduleError(_ state: inout CoordinatorState, _ recipient: RecipientID, at now: Date) -> WireError? {
        let request = ControlRequest(requestId: nil, command: .schedule([OwnershipTests.reminder(ReminderID("r-\(Int(now.timeIntervalSince1970))"), of: recipient)]))
        for case .reply(.failed(let error), _, _) in state.onRequest(request, from: client, at: now) { return error }
        return nil
    }

    @Test func theSourceGatesWritesThroughTheMove() throws {
        var state = OwnershipTests.state(shard: 0)
        let took = state.adoptMapRecord(SlotMapRecord(map: Self.map))
        #expect(took)
        state.apply(.slotMove(.migrating(Self.move, at: Self.t0)))
        let accepted = scheduleError(&state, Self.moving, at: Self.t0)
        #expect(accepted == nil)
        state.shardView.movePauses[Self.move.id] = Self.t0.addingTimeInterval(2)
        let paused = try #require(scheduleError(&state, Self.moving, at: Self.t0.addingTimeInterval(0.5)))
        #expect(paused.code == .tryAgain)
        #expect(paused.retryAfterMilliseconds == 1500)
        let other = scheduleError(&state, Self.staying, at: Self.t0)
        #expect(other == nil)
        state.apply(.slotMove(.handedOver(Self.move.id, cut: Self.t0)))
        let handedOver = scheduleError(&state, Self.moving, at: Self.t0.addingTimeInterval(0.02))
        #expect(handedOver?.code == .tryAgain)
        #expect(handedOver?.retryAfterMilliseconds == 50)
        // A hand-over that lasts (a standby took a side over) backs off to 1 s.
        let lasting = scheduleError(&state, Self.moving, at: Self.t0.addingTimeInterval(5))
        #expect(lasting?.retryAfterMilliseconds == 1000)
        // The register commits: the map shows the target, and the source names it.
        var register = SlotMapRegister(map: Self.map)
        let opened = try #require(register.record.opening(Self.move))
        let openWon = register.compareAndSwap(expectedVersion: 1, opened)
        let commit = try #require(register.record.committing(Self.move.id))
        let commitWon = register.compareAndSwap(expectedVersion: 2, commit)
        #expect(openWon && commitWon)
        let committed = register.record
        let tookCommit = state.adoptMapRecord(committed)
        #expect(tookCommit)
        let wrong = try #require(scheduleError(&state, Self.moving, at: Self.t0.addingTimeInterval(5)))
        #expect(wrong.code == .wrongShard)
        #expect(wrong.shard == 2)
        #expect(wrong.mapEpoch == 2)
        // An older record is not taken.
        let tookOlder = state.adoptMapRecord(SlotMapRecord(map: Self.map))
        #expect(!tookOlder)
        #expect(state.configuration.shardMap?.mapEpoch == 2)
    }

    @Test func aHandedOverSlotIsNotFiredAndTheRestIs() {
        var state = OwnershipTests.state(shard: 0)
        let due = Self.t0.addingTimeInterval(1)
        for recipient in [Self.moving, Self.staying] {
            let reminder = Reminder(id: "r", recipient: recipient, content: Content(body: "x"), trigger: Trigger(start: .instant(due)))
            _ = state.onRequest(ControlRequest(requestId: nil, command: .schedule([reminder])), from: client, at: Self.t0)
        }
        state.apply(.slotMove(.migrating(Self.move, at: Self.t0)))
        state.apply(.slotMove(.handedOver(Self.move.id, cut: due)))
        _ = state.onTick(now: Self.t0.addingTimeInterval(2))
        #expect(state.durable.deliveries.unsettled.keys.map(\.recipient) == [Self.staying])
        #expect(state.durable.schedule.timer.deadline(of: ReminderKey("r", of: Self.moving)) == due)
    }

    /// The loop does not spin on an armed, handed-over occurrence: it looks again in 50 ms.
    @Test func theLoopDoesNotSpinOnAHandedOverOccurrence() {
        var state = OwnershipTests.state(shard: 0)
        let due = Self.t0.addingTimeInterval(1)
        let reminder = Reminder(id: "r", recipient: Self.moving, content: Content(body: "x"), trigger: Trigger(start: .instant(due)))
        _ = state.onRequest(ControlRequest(requestId: nil, command: .schedule([reminder])), from: client, at: Self.t0)
        state.apply(.slotMove(.migrating(Self.move, at: Self.t0)))
        state.apply(.slotMove(.handedOver(Self.move.id, cut: due)))
        _ = state.onTick(now: Self.t0.addingTimeInterval(2))
        #expect(state.durable.deliveries.unsettled.isEmpty)
        #expect(state.nextWake == Self.t0.addingTimeInterval(2.05))
    }
}
