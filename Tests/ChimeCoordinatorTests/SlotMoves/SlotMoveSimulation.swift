import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeTestSupport
import ChimeWire
import Foundation

@testable import ChimeCoordinator

/// The map register the simulated shards and movers share (a reference: each mover's
/// `SlotMoveDriver` holds it).
final class SimulatedRegister: SlotMapRegistering, @unchecked Sendable {
    // @unchecked: one simulation uses it, on one thread.
    var register: SlotMapRegister
    init(map: ShardMap) { register = SlotMapRegister(map: map) }
    var record: SlotMapRecord { register.record }
    var qualifiedName: String { "the simulated register" }
    func read() throws(WireError) -> SlotMapRecord? { register.record }
    func compareAndSwap(expectedVersion: UInt64, _ new: SlotMapRecord) throws(WireError) -> Bool {
        register.compareAndSwap(expectedVersion: expectedVersion, new)
    }
    func createIfAbsent(map: ShardMap) throws(WireError) -> SlotMapRecord { register.record }
    func stamp() -> String? { "\(register.record.version)" }
}

/// A deterministic simulation of slot moves over the shipped code (TigerBeetle's VOPR and
/// FoundationDB's simulation are the models): three shards, each the real `CoordinatorState`
/// behind a shell with the service's rules (``SimulatedShard``), the map register, one or two
/// movers running the real `SlotMoveDriver` round by round (a second driver of the same move,
/// a rival move of the same slots, or a move back), a worker per shard, and clients writing to
/// the moving slots and others through their cached map. One seed picks every interleaving
/// and fault: kill -9 of any shard at any step (keeping a torn part of its unsynced journal),
/// restarts, a disk that fills and frees, snapshots mid-move, a restore of an older journal,
/// lost requests and lost replies between mover and shards, lost acknowledgements, a mover
/// killed and rerun. After the faults, everything comes up and settles, and the user's
/// invariants are checked (``check()``); two are checked at every step (``checkStep()``).
final class SlotMoveSimulation {
    // Not Sendable: one test thread owns it; the drivers' `send` closures call back into it.

    static let slotCount = 8
    static let start = Date(timeIntervalSince1970: 1_790_000_000)
    static let recipients: [RecipientID] = (0..<12).map { RecipientID(rawValue: "u\($0)") }
    static let reminderIDs: [ReminderID] = ["a", "b", "c"]

    /// Faults of the shell or the mover, each a rule broken on purpose.
    enum ShellSabotage: String, Sendable, CaseIterable {
        case none
        /// Replies leave before their entries are durable.
        case repliesBeforeDurable
        /// The mover commits once the source handed over, without waiting for the target's adoption.
        case moverCommitsEarly
    }

    /// Every deliberately broken step the simulation can run with.
    enum Sabotage: String, Sendable, CaseIterable {
        case none, moveStepsWhileFull, repliesBeforeDurable, moverCommitsEarly, firesHandedOverSlots, servesWhatTheMapGaveAway
    }

    /// A mover: the real driver with what it remembers between rounds.
    struct Mover {
        var move: SlotMove
        var deadline: Date
        var driver: SlotMoveDriver
        var memory = SlotMoveDriver.Memory()
        var isUp = true
        var result: SlotMoveDriver.Result?
        var isRefused = false
    }

    /// A write the client keeps sending (same `requestId`) until it is answered.
    struct Write {
        var key: ReminderKey
        var reminder: Reminder?
        var requestId: String
        var notBefore: Date
    }

    /// The last acknowledged write of a key.
    enum Acknowledged {
        case scheduled(Reminder, at: Date, shard: Int)
        case cancelled(at: Date, shard: Int)
    }

    struct Stats: CustomStringConvertible {
        var steps = 0, writesAcknowledged = 0, tryAgain = 0, wrongShard = 0, storeFull = 0, noReply = 0
        var crashes = 0, restores = 0, fullDisks = 0, snapshots = 0, lostMessages = 0, moverCrashes = 0
        var committed = 0, aborted = 0, refused = 0, deliveries = 0, redeliveries = 0, recoveryChecks = 0
        var description: String {
            "steps \(steps), writes acknowledged \(writesAcknowledged) (try_again \(tryAgain), wrong_shard \(wrongShard), store_full \(storeFull), no reply \(noReply)), crashes \(crashes), restores \(restores), full disks \(fullDisks), snapshots \(snapshots), lost messages \(lostMessages), mover crashes \(moverCrashes), moves committed \(committed) / aborted \(aborted) / refused \(refused), deliveries \(deliveries) (\(redeliveries) again), recovery checks \(recoveryChecks)"
        }
    }

    let seed: UInt64
    let sabotage: Sabotage
    var random: SeededRandomNumberGenerator
    var now = SlotMoveSimulation.start
    var shards: [SimulatedShard]
    let register: SimulatedRegister
    var movers: [Mover] = []
    /// The client's cached map (refreshed from the register on `wrong_shard`).
    var clientMap: ShardMap
    var writes: [ReminderKey: Write] = [:]
    var acknowledged: [ReminderKey: Acknowledged] = [:]
    /// Every version of a reminder ever sent (acknowledged or not: an unanswered write may apply).
    var sent: [ReminderKey: [Reminder]] = [:]
    /// Keys whose last acknowledged write a restored backup may have undone.
    var uncertain: Set<ReminderKey> = []
    /// Each recipient's last acknowledged location report (issue 41: it moves with them), with
    /// the shard that acknowledged it and when.
    var locations: [RecipientID: (report: LocationReport, at: Date, shard: Int)] = [:]
    /// Recipients whose last acknowledged location a restored backup may have undone.
    var uncertainLocations: Set<RecipientID> = []
    /// Per firing id: the shards that dispatched it, when it was first made (its `fired`
    /// journaled), how often delivered.
    var dispatchedBy: [FiringID: Set<Int>] = [:]
    var firstMade: [FiringID: Date] = [:]
    var delivered: [FiringID: Int] = [:]
    var failures: [String] = []
    var trace: [String] = []
    var stats = Stats()
    private var requestCounter = 0
    /// Whether faults are on (off while settling).
    var isFaulty = true

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
        register = SimulatedRegister(map: map)
        clientMap = map
        shards = (0..<3).map { SimulatedShard(id: $0, map: map, at: Self.start) }
        for index in shards.indices {
            shards[index].readRegister(register.record)
            switch sabotage {
            case .moveStepsWhileFull: shards[index].stateSabotage = .answersMoveStepsWhileFull
            case .repliesBeforeDurable: shards[index].shellSabotage = .repliesBeforeDurable
            case .firesHandedOverSlots: shards[index].stateSabotage = .firesHandedOverSlots
            case .servesWhatTheMapGaveAway: shards[index].stateSabotage = .servesWhatTheMapGaveAway
            case .none, .moverCommitsEarly: break
            }
        }
        // The move: the slots of one or two of shard 0's recipients go to the empty shard 2.
        let ownSlots = Self.recipients.map { map.slot(of: $0) }.filter { $0 < half }
        var slots: Set<Int> = [ownSlots[0]]
        if Bool.random(using: &random), let other = ownSlots.first(where: { $0 != ownSlots[0] }) { slots.insert(other) }
        addMover(SlotMove(id: SlotMoveID("m1"), slots: slots, source: 0, target: 2, slotCount: Self.slotCount))
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            // A second driver of the same move (a restarted mover next to a stale one).
            addMover(movers[0].move)
        case 1:
            // A rival move of an overlapping slot to shard 1.
            addMover(SlotMove(id: SlotMoveID("m2"), slots: [ownSlots[0]], source: 0, target: 1, slotCount: Self.slotCount))
        default:
            // The slots come back once the first move is decided (a stale copy must not return).
            break
        }
        for _ in 0..<6 { newWrite() }
    }

    func addMover(_ move: SlotMove) {
        let deadline = now.addingTimeInterval(Double(Int.random(in: 20...400, using: &random)))
        var driver = SlotMoveDriver(register: register) { [unowned self] shard, request in try self.moveCall(shard, request) }
        driver.idle = 0
        driver.settleGrace = 30
        movers.append(Mover(move: move, deadline: deadline, driver: driver))
    }

    /// Whether `note` also prints each line as it is noted (replaying a seed that traps).
    var echoesTrace = false
    /// A key whose every send, answer, firing and dispatch is noted (replaying a seed).
    var watchedKey: ReminderKey?

    func note(_ line: String) {
        if echoesTrace { print("[\(stats.steps) t+\(Int(now.timeIntervalSince(Self.start)))s] \(line)") }
        trace.append("[\(stats.steps) t+\(Int(now.timeIntervalSince(Self.start)))s] \(line)")
        if trace.count > 400 { trace.removeFirst(trace.count - 400) }
    }

    func fail(_ message: String) {
        if failures.count < 20 { failures.append(message) }
    }

    func nextRequestId() -> String {
        requestCounter += 1
        return "c-\(seed)-\(requestCounter)"
    }

    /// A mover's step reaching a shard over a network that loses requests and replies, as the
    /// wire carries it (encoded and decoded by `WireCodec`).
    func moveCall(_ shard: Int, _ move: SlotMoveRequest) throws -> SlotMoveStatus {
        if isFaulty && Int.random(in: 0..<14, using: &random) == 0 {
            stats.lostMessages += 1
            throw WireError(.unavailable, "request lost")
        }
        let request = try WireCodec().decodeRequest(WireCodec().encode(ControlRequest(requestId: nextRequestId(), command: .move(move))))
        let answer = shards[shard].handle(
            request, from: ClientAddress(routing: [Data("mover".utf8)]), register: register.record, syncsInline: syncsInline(), at: now)
        drainDispatches(of: shard)
        if isFaulty && Int.random(in: 0..<14, using: &random) == 0 {
            stats.lostMessages += 1
            throw WireError(.unavailable, "reply lost")
        }
        switch answer {
        case .noReply: throw WireError(.unavailable, "no reply from shard \(shard)")
        case .reply(.move(let status)): return try WireCodec().decode(SlotMoveStatus.self, from: WireCodec().encode(status))
        case .reply(.failed(let error)): throw error
        case .reply(let other): throw WireError(.internal, "unexpected reply \(other)")
        case .encoded(let body):
            let reply = try WireCodec().decode(ControlReply<SlotMoveStatus>.self, from: body)
            guard let status = reply.result else { throw reply.error ?? WireError(.malformed, "no result") }
            return status
        }
    }

    /// Records the firings `shard` dispatched since the last call.
    func drainDispatches(of shard: Int) {
        for firing in shards[shard].dispatched {
            dispatchedBy[firing.firingId, default: []].insert(shard)
            if firing.firingId.key == watchedKey { note("shard \(shard) dispatched \(firing.firingId) attempt \(firing.attempt)") }
        }
        for firingId in shards[shard].made {
            if firstMade[firingId] == nil { firstMade[firingId] = now }
            if firingId.key == watchedKey { note("shard \(shard) made \(firingId)") }
        }
        shards[shard].dispatched.removeAll()
        shards[shard].made.removeAll()
    }

    /// Runs `steps` random steps, then settles everything and checks the invariants.
    func run(steps: Int) {
        for _ in 0..<steps {
            stats.steps += 1
            step()
            checkStep()
            if !failures.isEmpty { return }
        }
        settle()
        if failures.isEmpty { check() }
    }

    /// A shard: half the time one of `preferred` (when there is one), else any. Faults aimed
    /// where they hurt most (the target of an open move fills its disk, a full shard dies)
    /// reach the rare interleavings within the bounded runs.
    func pickShard(preferring preferred: [Int]) -> Int {
        if !preferred.isEmpty && Bool.random(using: &random) { return preferred.randomElement(using: &random)! }
        return Int.random(in: 0..<3, using: &random)
    }

    /// Whether a call's entries are written inline (the writer was idle), else by the writer
    /// later: always once the faults are off.
    func syncsInline() -> Bool { !isFaulty || Int.random(in: 0..<3, using: &random) > 0 }

    /// One random step of one process, the clock or a fault.
    func step() {
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<18: clientStep()
        case 18..<30: tickStep(Int.random(in: 0..<3, using: &random))
        case 30..<40: workerStep(Int.random(in: 0..<3, using: &random), losesAcks: Int.random(in: 0..<6, using: &random) == 0)
        case 40..<47: now = now.addingTimeInterval([0.5, 1, 3, 10, 30].randomElement(using: &random)!)
        case 47..<54: readRegisterStep(Int.random(in: 0..<3, using: &random))
        case 54..<75: moverStep(Int.random(in: 0..<movers.count, using: &random))
        case 75..<79: crashStep(pickShard(preferring: shards.indices.filter { shards[$0].isFull }))
        case 79..<84: restartStep(Int.random(in: 0..<3, using: &random))
        case 84..<88: fullDiskStep(pickShard(preferring: register.record.open.values.map(\.target)))
        case 88..<91: snapshotStep(Int.random(in: 0..<3, using: &random))
        case 91..<94: moverCrashStep(Int.random(in: 0..<movers.count, using: &random))
        case 94..<95: restoreStep(Int.random(in: 0..<3, using: &random))
        case 95..<98: shards[Int.random(in: 0..<3, using: &random)].sync()
        case 98: locateStep()
        default: newWrite()
        }
    }
}
