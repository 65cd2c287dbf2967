import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// The slot-move protocol's pieces one at a time: the register's compare-and-swap, the
/// ledger's idempotent fold, the write gate and the hand-over's condition.
@Suite struct SlotMoveProtocolTests {
    static let t0 = Date(timeIntervalSince1970: 1_790_000_000)
    static let map: ShardMap = {
        var map = ShardMap.evenlySplit(shards: 2, slotCount: 8) { id in
            ShardMap.Endpoints(control: "inproc://c\(id)", dispatch: "inproc://d\(id)", results: "inproc://r\(id)",
                               events: "inproc://e\(id)", eventsIngest: "inproc://i\(id)")
        }
        map.shards.append(ShardMap.Shard(id: 2, slots: [], endpoints: map.shards[0].endpoints))
        return map
    }()
    /// A recipient on slot 0..3 (shard 0), and its slot.
    static let recipient: RecipientID = (0..<12).map { RecipientID(rawValue: "u\($0)") }.first { map.slot(of: $0) < 4 }!
    static var move: SlotMove {
        SlotMove(id: SlotMoveID("m"), slots: [map.slot(of: recipient)], source: 0, target: 2, slotCount: 8)
    }

    @Test func twoMoversReadingOneVersionCannotBothWin() throws {
        var register = SlotMapRegister(map: Self.map)
        let read = register.record
        var rival = Self.move
        rival.id = SlotMoveID("rival")
        rival.target = 1
        #expect(register.compareAndSwap(expectedVersion: read.version, try #require(read.opening(Self.move))))
        // The rival's write names the version both read: refused.
        #expect(!register.compareAndSwap(expectedVersion: read.version, try #require(read.opening(rival))))
        // Read again, it cannot open: its slot is in an open move.
        #expect(register.record.opening(rival) == nil)
        // A commit and an abort from the same read: the first wins, the outcome stays.
        let open = register.record
        #expect(register.compareAndSwap(expectedVersion: open.version, try #require(open.committing(Self.move.id))))
        #expect(!register.compareAndSwap(expectedVersion: open.version, try #require(open.aborting(Self.move.id))))
        #expect(register.record.outcomes[Self.move.id] == .committed(mapEpoch: 2))
        #expect(register.record.map.ownerID(ofSlot: Self.map.slot(of: Self.recipient)) == 2)
        #expect(register.record.version == 3)
        // A decided move never opens, commits or aborts again.
        #expect(register.record.opening(Self.move) == nil)
        #expect(register.record.committing(Self.move.id) == nil)
        #expect(register.record.aborting(Self.move.id) == nil)
    }

    @Test func everyLedgerEntryTwiceEqualsOnce() {
        var state = DurableState(settings: CoordinatorConfiguration().durableSettings)
        let reminder = Reminder(id: "a", recipient: Self.recipient, content: Content(body: "x"), trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(60))))
        state.apply(.scheduled(reminder, at: Self.t0))
        let slice = state.split(where: Self.move.covers).slice
        let entries: [SlotMoveEntry] = [
            .importing(Self.move, at: Self.t0), .adopted(Self.move.id, slice: slice.encodedSnapshot(takenAt: nil), cut: Self.t0),
            .committed(Self.move.id, mapEpoch: 2), .completed(Self.move.id, at: Self.t0),
        ]
        var once = DurableState(settings: CoordinatorConfiguration().durableSettings)
        var twice = once
        for entry in entries {
            once.apply(.slotMove(entry))
            twice.apply(.slotMove(entry))
            twice.apply(.slotMove(entry))
            #expect(once == twice, "after \(entry)")
        }
        #expect(once.reminderCount == 1)
        #expect(once.moves.ended[Self.move.id] == .completed)
        #expect(once.moves.isIdle)
    }

    @Test func theGateFollowsTheMoveOnBothSides() {
        let slotMap = Self.map
        var sourceState = DurableState(settings: CoordinatorConfiguration().durableSettings)
        var targetState = sourceState
        var source: SlotMoveLedger { sourceState.moves }
        var target: SlotMoveLedger { targetState.moves }
        let paused = [Self.move.id: Self.t0.addingTimeInterval(2)]
        sourceState.apply(.slotMove(.migrating(Self.move, at: Self.t0)))
        targetState.apply(.slotMove(.importing(Self.move, at: Self.t0)))
        #expect(source.writeGate(for: Self.recipient, shard: 0, map: slotMap, at: Self.t0, pausedUntil: [:]) == .accept)
        #expect(source.writeGate(for: Self.recipient, shard: 0, map: slotMap, at: Self.t0, pausedUntil: paused) == .tryAgain(retryAfter: 2))
        #expect(target.writeGate(for: Self.recipient, shard: 2, map: slotMap, at: Self.t0, pausedUntil: [:]) == .wrongShard(owner: 0))
        sourceState.apply(.slotMove(.handedOver(Self.move.id, cut: Self.t0)))
        #expect(source.writeGate(for: Self.recipient, shard: 0, map: slotMap, at: Self.t0, pausedUntil: [:]) == .tryAgain(retryAfter: 0.05))
        #expect(!source.serves(slot: slotMap.slot(of: Self.recipient), shard: 0, map: slotMap))
        let committedMap = slotMap.moving(Self.move.slots, to: 2)
        #expect(source.writeGate(for: Self.recipient, shard: 0, map: committedMap, at: Self.t0, pausedUntil: [:]) == .wrongShard(owner: 2))
        targetState.apply(.slotMove(.adopted(
            Self.move.id, slice: DurableState(settings: CoordinatorConfiguration().durableSettings).encodedSnapshot(takenAt: nil), cut: Self.t0)))
        #expect(target.writeGate(for: Self.recipient, shard: 2, map: committedMap, at: Self.t0, pausedUntil: [:]) == .tryAgain(retryAfter: 0.05))
        #expect(target.writeGate(for: Self.recipient, shard: 2, map: slotMap, at: Self.t0, pausedUntil: [:]) == .tryAgain(retryAfter: 0.05))
        targetState.apply(.slotMove(.committed(Self.move.id, mapEpoch: 2)))
        #expect(target.writeGate(for: Self.recipient, shard: 2, map: committedMap, at: Self.t0, pausedUntil: [:]) == .accept)
    }

    /// A hand-over that lasts (a standby took the source or the target over, and the mover
    /// waits out its request timeout, 3 s, for the step the killed coordinator never
    /// answered) is answered with a growing `retryAfter`, so a client's 20 waits outlast it;
    /// the gate reads only the journaled cut, so a standby's rebuilt ledger answers the same.
    @Test func aLongHandOverBacksOffSoTwentyWaitsOutlastATakeover() {
        var sourceState = DurableState(settings: CoordinatorConfiguration().durableSettings)
        var targetState = sourceState
        sourceState.apply(.slotMove(.migrating(Self.move, at: Self.t0)))
        sourceState.apply(.slotMove(.handedOver(Self.move.id, cut: Self.t0)))
        targetState.apply(.slotMove(.importing(Self.move, at: Self.t0)))
        targetState.apply(.slotMove(.adopted(
            Self.move.id, slice: DurableState(settings: CoordinatorConfiguration().durableSettings).encodedSnapshot(takenAt: nil), cut: Self.t0)))
        for (seconds, retry) in [(-5.0, 0.05), (0, 0.05), (0.1, 0.05), (0.15, 0.05), (1, 0.25), (2, 0.5), (4, 1), (30, 1)] {
            let now = Self.t0.addingTimeInterval(seconds)
            #expect(SlotMoveLedger.handOverRetry(since: Self.t0, at: now) == retry, "at cut + \(seconds) s")
            #expect(sourceState.moves.writeGate(for: Self.recipient, shard: 0, map: Self.map, at: now, pausedUntil: [:]) == .tryAgain(retryAfter: retry))
            #expect(targetState.moves.writeGate(for: Self.recipient, shard: 2, map: Self.map, at: now, pausedUntil: [:]) == .tryAgain(retryAfter: retry))
        }
        // A client meeting the hand-over at its start, retrying as told 20 times
        // (`ControlClient.maximumRateLimitedWaits`), waits 6.547 s (before: 20 × 50 ms = 1 s).
        var waited: TimeInterval = 0
        for _ in 0..<20 { waited += SlotMoveLedger.handOverRetry(since: Self.t0, at: Self.t0.addingTimeInterval(waited)) }
        #expect((waited * 1000).rounded() == 6547)
    }

    @Test func theHandOverWaitsForWhatIsDueBeforeTheCut() {
        var durable = DurableState(settings: CoordinatorConfiguration().durableSettings)
        let reminder = Reminder(id: "a", recipient: Self.recipient, content: Content(body: "x"), trigger: Trigger(start: .instant(Self.t0)))
        durable.apply(.scheduled(reminder, at: Self.t0))
        durable.apply(.slotMove(.migrating(Self.move, at: Self.t0)))
        let outgoing = durable.moves.outgoing[Self.move.id]!
        let later = Self.t0.addingTimeInterval(1)
        #expect(SlotMoveSource.handOver(outgoing, state: durable, isPaused: false, at: later) == nil)
        #expect(SlotMoveSource.handOver(outgoing, state: durable, isPaused: true, at: later) == nil)
        // At the instant it is due it is the target's: the cut may be there.
        #expect(SlotMoveSource.handOver(outgoing, state: durable, isPaused: true, at: Self.t0)
            == .handedOver(Self.move.id, cut: Self.t0))
        durable.apply(.fired(reminder.key, dueAt: Self.t0, next: nil, late: false, at: later))
        #expect(SlotMoveSource.handOver(outgoing, state: durable, isPaused: true, at: later)
            == .handedOver(Self.move.id, cut: later))
    }
}

extension SlotMoveProtocolTests {
    @Test func refusalsCarryTheirCodesAndFields() throws {
        let tryAgain = try #require(SlotWriteGate.tryAgain(retryAfter: 0.25).refusal(of: Self.recipient, map: Self.map, field: "recipient"))
        #expect(tryAgain.code == .tryAgain)
        #expect(tryAgain.code.rawValue == "try_again")
        #expect(tryAgain.retryAfterMilliseconds == 250)
        #expect(SlotWriteGate.tryAgain(retryAfter: 0).refusal(of: Self.recipient, map: Self.map, field: "recipient")?.retryAfterMilliseconds == 1)
        let wrong = try #require(SlotWriteGate.wrongShard(owner: 2).refusal(of: Self.recipient, map: Self.map, field: "recipient"))
        #expect(wrong.code == .wrongShard)
        #expect(wrong.shard == 2)
        #expect(wrong.mapEpoch == 1)
        #expect(SlotWriteGate.accept.refusal(of: Self.recipient, map: Self.map, field: "recipient") == nil)
    }
}

extension SlotMoveProtocolTests {
    /// The ledger is part of the durable state: a snapshot holds it (an adopted slice as a
    /// nested snapshot), and the state decoded from it equals the live one.
    @Test func theLedgerIsInTheSnapshot() throws {
        var state = DurableState(settings: CoordinatorConfiguration().durableSettings)
        let reminder = Reminder(id: "a", recipient: Self.recipient, content: Content(body: "x"), trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(60))))
        var source = state
        source.apply(.scheduled(reminder, at: Self.t0))
        let slice = source.split(where: Self.move.covers).slice
        let other = SlotMove(id: SlotMoveID("m0"), slots: [Self.map.slot(of: Self.recipient) == 0 ? 1 : 0], source: 0, target: 1, slotCount: Self.move.slotCount)
        state.apply(.slotMove(.migrating(other, at: Self.t0)))
        state.apply(.slotMove(.handedOver(other.id, cut: Self.t0)))
        state.apply(.slotMove(.importing(Self.move, at: Self.t0)))
        state.apply(.slotMove(.adopted(Self.move.id, slice: slice.encodedSnapshot(takenAt: nil), cut: Self.t0)))
        #expect(state.moves.incoming[Self.move.id]?.slice?.reminderCount == 1)
        #expect(state.reminderCount == 0)
        let decoded = try DurableState.decodeSnapshot(state.encodedSnapshot(takenAt: Self.t0), seed: CoordinatorConfiguration().durableSettings).state
        #expect(decoded == state)
        #expect(decoded.moves.outgoing[other.id]?.cut == Self.t0)
        state.apply(.slotMove(.committed(Self.move.id, mapEpoch: 2)))
        state.apply(.slotMove(.resumed(other.id, at: Self.t0)))
        #expect(state.reminderCount == 1)
        #expect(try DurableState.decodeSnapshot(state.encodedSnapshot(takenAt: Self.t0), seed: CoordinatorConfiguration().durableSettings).state == state)
    }

    /// An `adopted` entry whose slice does not decode leaves the move unadopted (the fold is total).
    @Test func anUndecodableSliceLeavesTheMoveUnadopted() {
        var state = DurableState(settings: CoordinatorConfiguration().durableSettings)
        state.apply(.slotMove(.importing(Self.move, at: Self.t0)))
        for garbage in [Data(), Data([4]), Data([4, 200, 0, 0, 0, 1]), Data([9, 9, 9])] {
            state.apply(.slotMove(.adopted(Self.move.id, slice: garbage, cut: Self.t0)))
            #expect(state.moves.incoming[Self.move.id]?.isAdopted == false)
        }
    }
}
