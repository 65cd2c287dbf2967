import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// The mover driving two real `CoordinatorState`s through the `move` op (no sockets): the
/// slots' reminders end on the target, the source released them, both gates follow the map,
/// and an abort past the deadline leaves everything on the source.
@Suite struct SlotMoveDriverTests {
    final class Register: SlotMapRegistering, @unchecked Sendable {
        var register: SlotMapRegister
        init(map: ShardMap) { register = SlotMapRegister(map: map) }
        func read() throws(WireError) -> SlotMapRecord? { register.record }
        func compareAndSwap(expectedVersion: UInt64, _ new: SlotMapRecord) throws(WireError) -> Bool {
            register.compareAndSwap(expectedVersion: expectedVersion, new)
        }
        var qualifiedName: String { "the test's register" }
        func createIfAbsent(map: ShardMap) throws(WireError) -> SlotMapRecord { register.record }
        func stamp() -> String? { "\(register.record.version)" }
    }

    final class Cluster: @unchecked Sendable {
        var shards: [Int: CoordinatorState]
        let register: Register
        var now: Date
        var steps: [String] = []
        /// Acknowledge every firing made at once (a worker that is always there).
        var acknowledges = false
        /// The shards that made each firing id.
        var made: [FiringID: [Int]] = [:]
        /// Exports answered with a shipment, and without one (`finalOnly` before the final).
        var exportsShipped = 0
        var exportsEmpty = 0
        init(register: Register, now: Date) {
            self.register = register
            self.now = now
            shards = [0: OwnershipTests.state(shard: 0), 2: OwnershipTests.state(shard: 2)]
            for id in shards.keys { _ = shards[id]?.adoptMapRecord(register.register.record) }
        }

        func send(_ shard: Int, _ step: SlotMoveStep, _ call: SlotMoveCall) throws -> SlotMoveStatus {
            guard var state = shards[shard] else { throw WireError(.unavailable, "no shard \(shard)") }
            defer { shards[shard] = state }
            now = now.addingTimeInterval(0.01)
            for case .append(.fired(let key, let dueAt, _, _, _, _)) in state.onTick(now: now) {
                made[FiringID(key, dueAt: dueAt), default: []].append(shard)
            }
            if acknowledges {
                for id in state.durable.deliveries.unsettled.keys.sorted() {
                    state.apply(.acknowledged(id, seq: 1, worker: "w", firedAt: now))
                }
            }
            _ = state.adoptMapRecord(register.register.record)
            if step != .status { steps.append("\(shard):\(step.rawValue)") }
            let body = try JSONEncoder().encode(call)
            let request = ControlRequest(requestId: nil, command: .move(step: step.rawValue, body: body))
            for case .reply(let outcome, _, _) in state.onRequest(request, from: ClientAddress(routing: [Data([1])]), at: now) {
                switch outcome {
                case .move(let result):
                    let status = try JSONDecoder().decode(SlotMoveStatus.self, from: result.body)
                    if step == .export {
                        if status.shipment == nil { exportsEmpty += 1 } else { exportsShipped += 1 }
                    }
                    return status
                case .failed(let error): throw error
                default: break
                }
            }
            throw WireError(.internal, "no reply")
        }
    }

    static let moving = OwnershipTests.recipient(on: 0)
    static let map = OwnershipTests.map
    static let move = SlotMove(id: SlotMoveID("m1"), slots: [map.slot(of: moving)], source: 0, target: 2, slotCount: map.slotCount)

    func schedule(_ cluster: Cluster, _ id: ReminderID, in seconds: TimeInterval) {
        let reminder = Reminder(id: id, recipient: Self.moving, content: Content(body: "x"), trigger: Trigger(start: .instant(cluster.now.addingTimeInterval(seconds))))
        _ = cluster.shards[0]?.onRequest(ControlRequest(requestId: nil, command: .schedule([reminder])), from: ClientAddress(routing: [Data([1])]), at: cluster.now)
    }

    @Test func aMoveEndsWithTheSlotsOnTheTargetAndReleasedOnTheSource() throws {
        let cluster = Cluster(register: Register(map: Self.map), now: OwnershipTests.t0)
        for n in 0..<5 { schedule(cluster, ReminderID("r\(n)"), in: 3600 + Double(n)) }
        let driver = SlotMoveDriver(register: cluster.register, send: cluster.send)
        var rounds = 0
        let outcome = try driver.run(Self.move, deadline: cluster.now.addingTimeInterval(60), now: { cluster.now }) { _ in rounds += 1 }
        #expect(outcome == .committed(mapEpoch: 2))
        let source = try #require(cluster.shards[0])
        let target = try #require(cluster.shards[2])
        #expect(source.durable.reminderCount == 0)
        #expect(target.durable.reminderCount == 5)
        #expect(source.durable.moves.ended[Self.move.id] == .released)
        #expect(target.durable.moves.ended[Self.move.id] == .completed)
        #expect(source.durable.moves.isIdle && target.durable.moves.isIdle)
        #expect(cluster.steps.filter { $0.hasPrefix("0:begin") }.count == 1)
        #expect(cluster.steps.contains("0:release") && cluster.steps.contains("2:complete"))
        // The register's map: the slot is the target's, and both shards route by it.
        #expect(cluster.register.register.record.map.ownerID(ofSlot: Self.map.slot(of: Self.moving)) == 2)
        #expect(source.configuration.shardMap?.mapEpoch == 2)
        #expect(target.ownershipRefusal(ControlRequest(command: .recipient(Self.moving))) == nil)
        #expect(source.ownershipRefusal(ControlRequest(command: .recipient(Self.moving)))?.shard == 2)
        #expect(rounds > 3)
    }

    @Test func occurrencesDueWhileMovingFireOnceEachOnOneShard() throws {
        let cluster = Cluster(register: Register(map: Self.map), now: OwnershipTests.t0)
        cluster.acknowledges = true
        // Due during the move (each step advances the clock 10 ms).
        for n in 0..<20 { schedule(cluster, ReminderID("soon\(n)"), in: 0.03 * Double(n + 1)) }
        let driver = SlotMoveDriver(register: cluster.register, send: cluster.send)
        let outcome = try driver.run(Self.move, deadline: cluster.now.addingTimeInterval(60), now: { cluster.now })
        #expect(outcome == .committed(mapEpoch: 2))
        // Drain: the target fires what the source left for it (due from the cut on).
        for _ in 0..<40 { _ = try cluster.send(2, .status, SlotMoveCall()) }
        #expect(cluster.made.count == 20)
        #expect(cluster.made.values.allSatisfy { $0.count == 1 })
        #expect(Set(cluster.made.values.flatMap { $0 }) == [0, 2])
        let source = try #require(cluster.shards[0])
        let target = try #require(cluster.shards[2])
        #expect(source.durable.reminderCount == 0)
        #expect(target.durable.reminderCount == 20)
    }

    /// A firing of the slots still in flight after the hand-over holds the final slice back;
    /// meanwhile the mover's `finalOnly` exports cost the source no cut of its state and ship
    /// nothing (each round used to ship the whole slice again).
    @Test func whileTheSlotsHaveAFiringInFlightAfterTheHandOverNothingMoreIsShipped() throws {
        let cluster = Cluster(register: Register(map: Self.map), now: OwnershipTests.t0)
        schedule(cluster, "in-flight", in: 0.005)  // fired at the first step, never acknowledged
        for n in 0..<3 { schedule(cluster, ReminderID("later\(n)"), in: 3600) }
        let driver = SlotMoveDriver(register: cluster.register, send: cluster.send)
        let outcome = try driver.run(Self.move, deadline: cluster.now.addingTimeInterval(2), now: { cluster.now })
        #expect(outcome == .aborted)
        #expect(cluster.made.count == 1)
        #expect(cluster.shards[0]?.durable.moves.ended[Self.move.id] == .resumed)
        #expect(cluster.exportsShipped == 1, "the first slice only")
        #expect(cluster.exportsEmpty > 10)
        #expect(cluster.shards[0]?.durable.reminderCount == 4)
    }

    @Test func pastTheDeadlineTheMoveIsAbortedAndTheSourceKeepsTheSlots() throws {
        let cluster = Cluster(register: Register(map: Self.map), now: OwnershipTests.t0)
        schedule(cluster, "r", in: 3600)
        let driver = SlotMoveDriver(register: cluster.register, send: cluster.send)
        // The deadline has passed once the move is open: it aborts before anything adopts.
        let outcome = try driver.run(Self.move, deadline: cluster.now.addingTimeInterval(0.05), now: { cluster.now })
        #expect(outcome == .aborted)
        let source = try #require(cluster.shards[0])
        #expect(source.durable.reminderCount == 1)
        #expect(source.durable.moves.isIdle)
        #expect(cluster.shards[2]?.durable.moves.isIdle == true)
        #expect(cluster.register.register.record.map.mapEpoch == 1)
    }
}
