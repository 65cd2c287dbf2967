import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeTestSupport
import ChimeWire
import Foundation

@testable import ChimeCoordinator

/// A mover of the model: the reconciler with its last read of the register (a read and the
/// write it leads to are two steps, so another mover can act between them).
struct SlotMoveModelMover {
    var move: SlotMove
    var deadline: Date
    var isUp = true
    var read: (record: SlotMapRecord, step: SlotMoverStep)?
    var outcome: SlotMoverStep?
}

/// The seeded interleaving explorer of slot moves: three shards (two owning the slots, one
/// empty), one or two movers, a client writing to the moving slots and others, firings due as
/// the clock advances, deliveries whose acknowledgements can be lost, crashes and restarts of
/// every process at any step. Each shard is the real `DurableState` and `SlotMoveLedger` folded
/// from its journal; the protocol's decisions are the real `SlotMoveSource`, `SlotMoveTarget`
/// and `SlotMover`.
struct SlotMoveModel {
    static let slotCount = 8
    static let settings = CoordinatorConfiguration().durableSettings
    static let start = Date(timeIntervalSince1970: 1_790_000_000)
    static let recipients: [RecipientID] = (0..<12).map { RecipientID(rawValue: "u\($0)") }
    static let reminderIDs: [ReminderID] = ["a", "b", "c"]
    static let repeating = try! RecurrenceRule(parsing: "FREQ=MINUTELY;COUNT=3")

    /// Which rule of the protocol a scratch run breaks on purpose (to see the explorer catch it).
    enum Sabotage: String, CaseIterable { case none, sourceFiresAfterCut, sourceDeletesBeforeCommit, moverCommitsEarly }

    let seed: UInt64
    let sabotage: Sabotage
    var random: SeededRandomNumberGenerator
    var now = SlotMoveModel.start
    var shards: [SlotMoveModelShard]
    var register: SlotMapRegister
    var movers: [SlotMoveModelMover] = []
    var clientMap: ShardMap
    // What was observed: acknowledged writes, every acknowledged version, deliveries.
    var acknowledged: [ReminderKey: (reminder: Reminder, at: Date)?] = [:]
    var versions: [ReminderKey: [Reminder]] = [:]
    /// Each recipient's last acknowledged location report (issue 41: it moves with them).
    var acknowledgedLocations: [RecipientID: LocationReport] = [:]
    var delivered: [FiringID: Int] = [:]
    var made: [String: Set<Int>] = [:]
    /// Per firing id, how many times it was made unsettled less how many acknowledgements were
    /// journaled: a delivery when none is open is a redelivery after its acknowledgement.
    var openFirings: [FiringID: Int] = [:]
    var failures: [String] = []
    var trace: [String] = []
    var writeCounter = 0
    var ackSeq: UInt64 = 0
    var stats = Stats()

    struct Stats {
        var steps = 0
        var writesAccepted = 0
        var writesRefused = 0
        var crashes = 0
        var committed = 0
        var aborted = 0
        var duplicates = 0
        var tryAgain = 0
        var wrongShard = 0
        var handOvers = 0
        var heldAtAdoption = 0
        var tailEntriesAfterCommit = 0
    }

    init(seed: UInt64, sabotage: Sabotage = .none) {
        self.seed = seed
        self.sabotage = sabotage
        random = SeededRandomNumberGenerator(seed: seed)
        let endpoints = { (id: Int) in
            ShardMap.Endpoints(control: "inproc://s\(id)c", dispatch: "inproc://s\(id)d", results: "inproc://s\(id)r",
                               events: "inproc://s\(id)e", eventsIngest: "inproc://s\(id)i")
        }
        let half = Self.slotCount / 2
        let map = ShardMap(mapEpoch: 1, slotCount: Self.slotCount, shards: [
            ShardMap.Shard(id: 0, slots: [ShardMap.SlotRange(0, half - 1)], endpoints: endpoints(0)),
            ShardMap.Shard(id: 1, slots: [ShardMap.SlotRange(half, Self.slotCount - 1)], endpoints: endpoints(1)),
            ShardMap.Shard(id: 2, slots: [], endpoints: endpoints(2)),
        ])
        register = SlotMapRegister(map: map)
        clientMap = map
        shards = (0..<3).map { SlotMoveModelShard(id: $0, settings: Self.settings, mapView: SlotMapRecord(map: map)) }
        // The move: the slots of one or two of shard 0's recipients go to the empty shard 2.
        let ownSlots = Self.recipients.map { map.slot(of: $0) }.filter { $0 < half }
        var slots: Set<Int> = [ownSlots[0]]
        if Bool.random(using: &random), let other = ownSlots.first(where: { $0 != ownSlots[0] }) { slots.insert(other) }
        let move = SlotMove(id: SlotMoveID("m1"), slots: slots, source: 0, target: 2, slotCount: Self.slotCount)
        let deadline = now.addingTimeInterval(Double(Int.random(in: 20...400, using: &random)))
        movers.append(SlotMoveModelMover(move: move, deadline: deadline))
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            // A second mover driving the same move (a restarted controller next to a stale one).
            movers.append(SlotMoveModelMover(move: move, deadline: now.addingTimeInterval(Double(Int.random(in: 20...400, using: &random)))))
        case 1:
            // A competing move of an overlapping slot to shard 1.
            let rival = SlotMove(id: SlotMoveID("m2"), slots: [ownSlots[0]], source: 0, target: 1, slotCount: Self.slotCount)
            movers.append(SlotMoveModelMover(move: rival, deadline: now.addingTimeInterval(Double(Int.random(in: 20...400, using: &random)))))
        default: break
        }
        for _ in 0..<6 { write(cancel: false) }
    }

    mutating func note(_ line: String) {
        trace.append("[\(stats.steps) t+\(Int(now.timeIntervalSince(Self.start)))s] \(line)")
        if trace.count > 60 { trace.removeFirst(trace.count - 60) }
    }

    mutating func fail(_ message: String) { failures.append(message) }

    /// Runs one schedule: `steps` random steps, then everything comes up and settles; checks.
    mutating func run(steps: Int) {
        for _ in 0..<steps {
            stats.steps += 1
            step()
            if !failures.isEmpty { return }
        }
        settle()
        if failures.isEmpty { check() }
    }

    /// One random step of one process (or the clock, or a fault).
    mutating func step() {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<17: write(cancel: Int.random(in: 0..<10, using: &random) < 3)
        case 17..<20: locate()
        case 20..<32: tick(shard: Int.random(in: 0..<3, using: &random))
        case 32..<44: deliver(shard: Int.random(in: 0..<3, using: &random), ackLost: Int.random(in: 0..<6, using: &random) == 0)
        case 44..<52: advanceClock(by: [1.0, 3, 10, 30].randomElement(using: &random)!)
        case 52..<66: sourceTurn(shard: Int.random(in: 0..<3, using: &random))
        case 66..<76: targetTurn(shard: Int.random(in: 0..<3, using: &random))
        case 76..<92: moverStep(Int.random(in: 0..<movers.count, using: &random), isLagSmall: Bool.random(using: &random))
        case 92..<96: crashSomething()
        default: restartSomething()
        }
    }

    mutating func advanceClock(by seconds: TimeInterval) {
        now = now.addingTimeInterval(seconds)
    }
}
