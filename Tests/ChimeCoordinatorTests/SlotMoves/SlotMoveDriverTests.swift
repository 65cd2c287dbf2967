import ChimeClient
import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// The mover driving two real `CoordinatorState`s through the `move` op (no sockets): the
/// slots' reminders end on the target, the source released them, both gates follow the map,
/// and an abort past the deadline leaves everything on the source. A committed move's source
/// publishes one hand-over event, kept for catch-up across a restart; an aborted one none.
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
        /// Each shard's journal entries and published events, in order.
        var journals: [Int: [JournalEntry]] = [:]
        var published: [Int: [CoordinatorEvent]] = [:]

        /// Keeps what `directives` journal and publish for `shard`.
        func keep(_ directives: [CoordinatorDirective], of shard: Int) {
            for directive in directives {
                switch directive {
                case .append(let entry): journals[shard, default: []].append(entry)
                case .publish(let event): published[shard, default: []].append(event)
                default: break
                }
            }
        }
        /// Exports answered with a shipment, and without one (`finalOnly` before the final).
        var exportsShipped = 0
        var exportsEmpty = 0
        init(register: Register, now: Date) {
            self.register = register
            self.now = now
            shards = [0: OwnershipTests.state(shard: 0), 2: OwnershipTests.state(shard: 2)]
            for id in shards.keys { _ = shards[id]?.adoptMapRecord(register.register.record) }
        }

        func send(_ shard: Int, _ move: SlotMoveRequest) throws -> SlotMoveStatus {
            let step = move.step
            guard var state = shards[shard] else { throw WireError(.unavailable, "no shard \(shard)") }
            defer { shards[shard] = state }
            now = now.addingTimeInterval(0.01)
            let ticked = state.onTick(now: now)
            keep(ticked, of: shard)
            for case .append(.fired(let key, let dueAt, _, _, _, _)) in ticked {
                made[FiringID(key, dueAt: dueAt), default: []].append(shard)
            }
            if acknowledges {
                // Each delivery takes the shard's next event seq, as a dispatch does.
                for id in state.durable.deliveries.unsettled.keys.sorted() {
                    let acknowledged = JournalEntry.acknowledged(id, seq: state.dispatch.nextEventSeq, worker: "w", firedAt: now)
                    state.dispatch.nextEventSeq += 1
                    state.apply(acknowledged)
                    journals[shard, default: []].append(acknowledged)
                }
            }
            _ = state.adoptMapRecord(register.register.record)
            if step != .status { steps.append("\(shard):\(step.rawValue)") }
            // Through the wire's bytes, as a mover's request reaches a shard.
            let request = try WireCodec().decodeRequest(WireCodec().encode(ControlRequest(requestId: nil, command: .move(move))))
            let directives = state.onRequest(request, from: ClientAddress(routing: [Data([1])]), at: now)
            keep(directives, of: shard)
            for case .reply(let outcome, _, _) in directives {
                switch outcome {
                case .move(let status):
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
        let directives = cluster.shards[0]?.onRequest(
            ControlRequest(requestId: nil, command: .schedule([reminder])), from: ClientAddress(routing: [Data([1])]), at: cluster.now)
        cluster.keep(directives ?? [], of: 0)
    }

    /// `state`'s answer to `events` after `after` (every recipient).
    static func events(of state: inout CoordinatorState, after: UInt64, recipient: RecipientID? = nil) throws -> EventsResult {
        let request = ControlRequest(requestId: nil, command: .events(after: after, recipient: recipient, limit: nil))
        for case .reply(.events(let result), _, _) in state.onRequest(request, from: ClientAddress(routing: [Data([1])]), at: OwnershipTests.t0) {
            return result
        }
        throw WireError(.internal, "no events reply")
    }

    /// The hand-over events `shard` published.
    static func handOvers(_ cluster: Cluster, of shard: Int) -> [HandOverEvent] {
        (cluster.published[shard] ?? []).compactMap { if case .handOver(let event) = $0 { event } else { nil } }
    }

    @Test func aMoveEndsWithTheSlotsOnTheTargetAndReleasedOnTheSource() throws {
        let cluster = Cluster(register: Register(map: Self.map), now: OwnershipTests.t0)
        for n in 0..<5 { schedule(cluster, ReminderID("r\(n)"), in: 3600 + Double(n)) }
        let driver = SlotMoveDriver(register: cluster.register, send: cluster.send)
        var rounds = 0
        let result = try driver.run(Self.move, deadline: cluster.now.addingTimeInterval(60), now: { cluster.now }) { _ in rounds += 1 }
        #expect(result == SlotMoveDriver.Result(outcome: .committed(mapEpoch: 2), unsettled: [:]))
        let source = try #require(cluster.shards[0])
        let target = try #require(cluster.shards[2])
        #expect(source.durable.reminderCount == 0)
        #expect(target.durable.reminderCount == 5)
        #expect(source.durable.moves.ended[Self.move.id] == .released)
        #expect(target.durable.moves.ended[Self.move.id] == .completed)
        #expect(source.durable.moves.isIdle && target.durable.moves.isIdle)
        #expect(cluster.steps.filter { $0.hasPrefix("0:begin") }.count == 1)
        // The register's map: the slot is the target's, and both shards route by it.
        #expect(cluster.register.register.record.map.ownerID(ofSlot: Self.map.slot(of: Self.moving)) == 2)
        #expect(source.configuration.shardMap?.mapEpoch == 2)
        #expect(target.ownershipRefusal(ControlRequest(command: .recipient(Self.moving))) == nil)
        #expect(source.ownershipRefusal(ControlRequest(command: .recipient(Self.moving)))?.shard == 2)
        #expect(rounds > 3)
    }

    @Test func aCommittedMovesSourcePublishesOneHandOverKeptForCatchUpAcrossARestart() throws {
        let cluster = Cluster(register: Register(map: Self.map), now: OwnershipTests.t0)
        for n in 0..<3 { schedule(cluster, ReminderID("r\(n)"), in: 3600) }
        let driver = SlotMoveDriver(register: cluster.register, send: cluster.send)
        #expect(try driver.run(Self.move, deadline: cluster.now.addingTimeInterval(60), now: { cluster.now }).outcome == .committed(mapEpoch: 2))
        // Exactly one, from the source, with the released step's instant; the target none.
        let released = (cluster.journals[0] ?? []).compactMap { entry -> (Date, UInt64?, UInt64?)? in
            if case .slotMove(.released(_, let at, let seq, let epoch)) = entry { (at, seq, epoch) } else { nil }
        }
        #expect(released.count == 1)
        let at = try #require(released.first?.0)
        #expect(released.first?.1 == 1 && released.first?.2 == 2)
        let slot = Self.map.slot(of: Self.moving)
        let expected = HandOverEvent(
            seq: 1, shard: 0, move: "m1", slots: [ShardMap.SlotRange(slot, slot)], target: 2, mapEpoch: 2,
            at: try RFC3339.parseInstant(RFC3339.format(at)))
        #expect(Self.handOvers(cluster, of: 0) == [expected])
        #expect(Self.handOvers(cluster, of: 2).isEmpty)
        // The seq was reserved in the journal before the step that uses it.
        let journal = cluster.journals[0] ?? []
        let reservation = journal.firstIndex { if case .seqReserved(let through) = $0 { through >= 1 } else { false } }
        let step = journal.firstIndex { if case .slotMove(.released) = $0 { true } else { false } }
        #expect(reservation != nil && step != nil && reservation! < step!)
        // Catch-up serves it (not to a one-recipient request, nor after its seq).
        var source = try #require(cluster.shards[0])
        #expect(try Self.events(of: &source, after: 0).handOvers == [expected])
        #expect(try Self.events(of: &source, after: 1).handOvers == nil)
        // A restart: the journal rebuilds it, catch-up serves it again, and seqs go on after it.
        var restarted = OwnershipTests.state(shard: 0)
        for entry in journal { restarted.apply(entry) }
        restarted.finishRecovery(at: cluster.now)
        #expect(restarted.durable.moves.handOvers == [expected])
        #expect(try Self.events(of: &restarted, after: 0).handOvers == [expected])
        #expect(restarted.dispatch.nextEventSeq > 1)
        // And a snapshot keeps it.
        var loaded = OwnershipTests.state(shard: 0)
        try loaded.load(snapshot: restarted.encodedSnapshot(at: cluster.now))
        #expect(loaded.durable.moves.handOvers == [expected])
    }

    @Test func occurrencesDueWhileMovingFireOnceEachOnOneShard() throws {
        let cluster = Cluster(register: Register(map: Self.map), now: OwnershipTests.t0)
        cluster.acknowledges = true
        // Due during the move (each step advances the clock 10 ms).
        for n in 0..<20 { schedule(cluster, ReminderID("soon\(n)"), in: 0.03 * Double(n + 1)) }
        let driver = SlotMoveDriver(register: cluster.register, send: cluster.send)
        let result = try driver.run(Self.move, deadline: cluster.now.addingTimeInterval(60), now: { cluster.now })
        #expect(result.outcome == .committed(mapEpoch: 2) && result.isSettled)
        // Drain: the target fires what the source left for it (due from the cut on).
        for _ in 0..<40 { _ = try cluster.send(2, .status()) }
        #expect(cluster.made.count == 20)
        #expect(cluster.made.values.allSatisfy { $0.count == 1 })
        #expect(Set(cluster.made.values.flatMap { $0 }) == [0, 2])
        let source = try #require(cluster.shards[0])
        let target = try #require(cluster.shards[2])
        #expect(source.durable.reminderCount == 0)
        #expect(target.durable.reminderCount == 20)
        // A subscriber of both shards, the target's stream arriving first: the moved slot's
        // events from the source, then the hand-over, then the target's.
        var order = SlotOrder(map: Self.map)
        var delivered: [SlotOrder.Delivery] = []
        for shard in [2, 0] {
            var state = try #require(cluster.shards[shard])
            let page = try Self.events(of: &state, after: 0)
            var filler = GapFiller(since: 0)
            for event in filler.take(fetched: page.events, handOvers: page.handOvers ?? [], through: page.through, at: cluster.now) {
                switch event {
                case .fire(let fire): delivered += order.onFire(fire, raw: Data(), from: shard, at: cluster.now)
                case .handOver(let handOver): delivered += order.onHandOver(handOver, raw: Data())
                }
            }
        }
        #expect(!order.hasHeldEvents)
        let shards = delivered.map { item -> Int in
            switch item {
            case .fire(_, _, let shard): shard
            case .handOver: -1
            }
        }
        let fromSource = cluster.made.values.filter { $0 == [0] }.count
        #expect(shards == Array(repeating: 0, count: fromSource) + [-1] + Array(repeating: 2, count: 20 - fromSource), "\(shards)")
        // The retained events stayed with the shard that published them.
        #expect(source.eventLog.events.map(\.firing.firingId).sorted() == cluster.made.filter { $0.value == [0] }.keys.sorted())
    }

    /// A firing of the slots still in flight after the hand-over holds the final slice back;
    /// meanwhile the mover's exports cost the source no cut of its state and ship nothing
    /// (each round used to ship the whole slice again).
    @Test func whileTheSlotsHaveAFiringInFlightAfterTheHandOverNothingMoreIsShipped() throws {
        let cluster = Cluster(register: Register(map: Self.map), now: OwnershipTests.t0)
        schedule(cluster, "in-flight", in: 0.005)  // fired at the first step, never acknowledged
        for n in 0..<3 { schedule(cluster, ReminderID("later\(n)"), in: 3600) }
        let driver = SlotMoveDriver(register: cluster.register, send: cluster.send)
        let result = try driver.run(Self.move, deadline: cluster.now.addingTimeInterval(2), now: { cluster.now })
        #expect(result == SlotMoveDriver.Result(outcome: .aborted, unsettled: [:]))
        #expect(cluster.made.count == 1)
        #expect(cluster.shards[0]?.durable.moves.ended[Self.move.id] == .resumed)
        #expect(cluster.exportsShipped == 0)
        #expect(cluster.exportsEmpty > 10)
        #expect(cluster.shards[0]?.durable.reminderCount == 4)
    }

    @Test func pastTheDeadlineTheMoveIsAbortedAndTheSourceKeepsTheSlots() throws {
        let cluster = Cluster(register: Register(map: Self.map), now: OwnershipTests.t0)
        schedule(cluster, "r", in: 3600)
        let driver = SlotMoveDriver(register: cluster.register, send: cluster.send)
        // The deadline has passed once the move is open: it aborts before anything adopts.
        let result = try driver.run(Self.move, deadline: cluster.now.addingTimeInterval(0.05), now: { cluster.now })
        #expect(result == SlotMoveDriver.Result(outcome: .aborted, unsettled: [:]))
        let source = try #require(cluster.shards[0])
        #expect(source.durable.reminderCount == 1)
        #expect(source.durable.moves.isIdle)
        #expect(cluster.shards[2]?.durable.moves.isIdle == true)
        #expect(cluster.register.register.record.map.mapEpoch == 1)
        // No hand-over: none published, none kept.
        #expect(Self.handOvers(cluster, of: 0).isEmpty && Self.handOvers(cluster, of: 2).isEmpty)
        #expect(source.durable.moves.handOvers.isEmpty)
    }
}
