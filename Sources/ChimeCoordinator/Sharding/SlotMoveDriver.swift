import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// A map register: the file (``SlotMapRegisterFile``), a Kubernetes ConfigMap
/// (``SlotMapRegisterConfigMap``), or a test's.
public protocol SlotMapRegistering: Sendable {
    /// How logs and errors name the register (`/path/map.json`, `configmap chime/chime-shard-map`).
    var qualifiedName: String { get }
    /// The current record, `nil` when there is none.
    /// - Throws: `WireError` when it cannot be read.
    func read() throws(WireError) -> SlotMapRecord?
    /// Writes `new` at `expectedVersion + 1` if the record is still at `expectedVersion`.
    /// - Returns: whether the write won.
    /// - Throws: `WireError` when it cannot be written.
    func compareAndSwap(expectedVersion: UInt64, _ new: SlotMapRecord) throws(WireError) -> Bool
    /// Creates the record holding `map` at version 1 unless one exists; returns the register's record.
    /// - Throws: `WireError` when it cannot be read or written.
    func createIfAbsent(map: ShardMap) throws(WireError) -> SlotMapRecord
    /// A value that changes with every write, cheaper than ``read()`` to poll (a file's size,
    /// mtime and inode; a ConfigMap's `resourceVersion`); `nil` when there is no record or it
    /// does not read.
    func stamp() -> String?
}

extension SlotMapRegistering {
    /// The register's record, created from `configured` when there is none, with shard
    /// `shardID` joined to its map when the register's map does not name it yet and the
    /// configured map lists it with no slots (a coordinator starting for a new shard).
    /// - Returns: a record whose map names `shardID`.
    /// - Throws: `WireError(.invalidArgument)` when the register's map does not name the shard
    ///   and the configured map does not list it with no slots (it would own slots that are
    ///   another shard's); the register's errors.
    public func createIfAbsent(map configured: ShardMap, joining shardID: Int) throws(WireError) -> SlotMapRecord {
        // Each lost swap means another writer changed the record: a few tries are plenty.
        for _ in 0..<16 {
            let record = try createIfAbsent(map: configured)
            if record.map.shard(id: shardID) != nil { return record }
            guard let shard = configured.shard(id: shardID), shard.slots.isEmpty, let joined = record.joining(shard) else {
                throw WireError(
                    .invalidArgument,
                    "shard \(shardID) is not in the map of \(qualifiedName) (epoch \(record.map.mapEpoch)): list it in the cluster section with \"slots\": [] to join it")
            }
            if try compareAndSwap(expectedVersion: record.version, joined) {
                var written = joined
                written.version = record.version &+ 1
                return written
            }
        }
        throw WireError(.unavailable, "\(qualifiedName) kept changing while shard \(shardID) joined it")
    }
}

extension SlotMapRegisterFile: SlotMapRegistering {
    /// The file's path.
    public var qualifiedName: String { path }
}
extension SlotMapRegisterConfigMap: SlotMapRegistering {}

/// The mover as a process: repeats `SlotMover.nextAction` over the register and the two
/// shards' answers and carries each step out (register writes, `move` ops), until the move
/// is decided and both shards followed it (neither holds it in progress any more: the source
/// released or resumed, the target completed or dropped), or its time is up. It keeps
/// nothing of its own, so a rerun after it was killed continues (or aborts past the deadline).
public struct SlotMoveDriver {
    /// Sends one step (a `move` request) to a shard and returns its status; throws when the
    /// shard does not answer or refuses (`store_full`, `forbidden`, …).
    public typealias Send = (_ shard: Int, _ request: SlotMoveRequest) throws -> SlotMoveStatus

    /// What the driver reports after each round.
    public struct Progress: Sendable {
        /// The action just taken.
        public var action: SlotMoverAction
        /// Reminders of the slots on the source when the move began (its status), if known.
        public var reminders: Int?
        /// Per shard that did not answer its last step, why.
        public var refusals: [Int: String]
    }

    /// How a move ended for the driver.
    public struct Result: Sendable, Equatable {
        /// The register's outcome.
        public var outcome: SlotMoveOutcome
        /// Per shard that had not followed the outcome when the driver gave up, why (its last
        /// refusal, or that it still held the move); empty when both followed. A shard that
        /// has not followed does so by itself at its next read of the register.
        public var unsettled: [Int: String]
        /// Whether both shards followed the outcome.
        public var isSettled: Bool { unsettled.isEmpty }
    }

    /// What one round did.
    public enum Round: Sendable {
        /// A step was carried out (or tried): go on at once.
        case acted(SlotMoverAction)
        /// Nothing could be done: wait a moment before the next round.
        case idle(SlotMoverAction)
        /// The move is decided and settled, or out of time.
        case finished(Result)
    }

    let register: any SlotMapRegistering
    let send: Send
    /// Pause between rounds that found nothing to do, in seconds.
    public var idle: TimeInterval = 0.02
    /// How long the source refuses the slots' writes while it hands over, in seconds.
    public var pause: TimeInterval = 0.2
    /// How long, after the move was decided, the driver still waits for both shards to follow
    /// it when the deadline has passed, in seconds.
    public var settleGrace: TimeInterval = 5

    /// A driver over `register`, reaching shards through `send`.
    public init(register: any SlotMapRegistering, send: @escaping Send) {
        self.register = register
        self.send = send
    }

    /// What a driver remembers between rounds of one move (nothing a rerun needs: the
    /// register and the shards hold the move's state).
    public struct Memory: Sendable {
        /// Reminders of the slots on the source, once counted.
        public var reminders: Int?
        /// Per shard, why its last step failed (cleared by an answer).
        public var refusals: [Int: String] = [:]
        /// When the driver first saw the move decided.
        public var decidedAt: Date?

        /// Nothing remembered yet.
        public init() {}
    }

    /// Drives `move` until it settled on both shards, or until `deadline` (a move undecided
    /// then is aborted and followed for `settleGrace` more).
    /// - Parameter progress: called after every round.
    /// - Returns: the register's outcome and whether both shards followed it.
    /// - Throws: `WireError` when the register cannot be read or written, or the move cannot
    ///   open (`.invalidArgument`); a shard that does not answer is retried until the deadline.
    public func run(
        _ move: SlotMove, deadline: Date, now: () -> Date = Date.init, progress: (Progress) -> Void = { _ in }
    ) throws(WireError) -> Result {
        var memory = Memory()
        while true {
            let round = try self.round(move, deadline: deadline, now: now(), memory: &memory)
            switch round {
            case .finished(let result):
                return result
            case .acted(let step):
                progress(Progress(action: step, reminders: memory.reminders, refusals: memory.refusals))
            case .idle(let step):
                progress(Progress(action: step, reminders: memory.reminders, refusals: memory.refusals))
                Thread.sleep(forTimeInterval: idle)
            }
        }
    }

    /// One round of the mover: reads the register and both shards, decides, carries the step out.
    /// - Throws: as ``run(_:deadline:now:progress:)``.
    public func round(_ move: SlotMove, deadline: Date, now: Date, memory: inout Memory) throws(WireError) -> Round {
        guard let record = try register.read() else { throw WireError(.unavailable, "the map register has no record") }
        let source = ask(move.source, .status(countingReminders: memory.reminders == nil), memory: &memory)
        let target = ask(move.target, .status(), memory: &memory)
        let sourceLedger = source.flatMap { try? SlotMoveLedger.viewed($0.ledger) }
        let targetLedger = target.flatMap { try? SlotMoveLedger.viewed($0.ledger) }
        if memory.reminders == nil { memory.reminders = source?.slotReminders[move.id.rawValue] }
        let step = SlotMover.nextAction(
            for: move, record: record, source: sourceLedger, target: targetLedger, at: now, deadline: deadline, pause: pause)
        switch step {
        case .open(let opening):
            if let next = record.opening(opening) { _ = try register.compareAndSwap(expectedVersion: record.version, next) }
        case .commit(let id):
            if let next = record.committing(id) { _ = try register.compareAndSwap(expectedVersion: record.version, next) }
        case .abort(let id):
            if let next = record.aborting(id) { _ = try register.compareAndSwap(expectedVersion: record.version, next) }
        case .startSource(let starting):
            _ = ask(starting.source, .begin(starting), memory: &memory)
        case .startTarget(let starting):
            _ = ask(starting.target, .begin(starting), memory: &memory)
        case .pauseSource(let id, let until):
            let milliseconds = Int((until.timeIntervalSince(now) * 1000).rounded())
            _ = ask(move.source, .pause(id, milliseconds: milliseconds), memory: &memory)
            return ship(move, memory: &memory) ? .acted(step) : .idle(step)
        case .ship:
            return ship(move, memory: &memory) ? .acted(step) : .idle(step)
        case .wait:
            return .idle(step)
        case .refused:
            throw WireError(.invalidArgument, "\(move) cannot open: a slot is in another open move or not shard \(move.source)'s, or its id was used")
        case .finished(let outcome):
            let decidedAt = memory.decidedAt ?? now
            memory.decidedAt = decidedAt
            let unsettled = unsettledShards(move, source: source, target: target, memory: memory)
            if unsettled.isEmpty || now >= max(deadline, decidedAt.addingTimeInterval(settleGrace)) {
                return .finished(Result(outcome: outcome, unsettled: unsettled))
            }
            for shard in unsettled.keys.sorted() { _ = ask(shard, .follow(move.id), memory: &memory) }
            return .idle(step)
        }
        return .acted(step)
    }

    /// Sends `request` to `shard`, remembering why it failed (or that it answered).
    private func ask(_ shard: Int, _ request: SlotMoveRequest, memory: inout Memory) -> SlotMoveStatus? {
        do {
            let status = try send(shard, request)
            memory.refusals[shard] = nil
            return status
        } catch {
            memory.refusals[shard] = "\(error)"
            return nil
        }
    }

    /// Carries the source's final slice to the target, once the source can cut it (handed
    /// over, nothing of the slots unsettled there: until then it exports nothing and the
    /// mover waits a round).
    /// - Returns: whether the target adopted it.
    private func ship(_ move: SlotMove, memory: inout Memory) -> Bool {
        guard let exported = ask(move.source, .export(move.id), memory: &memory),
            let shipment = exported.shipment,
            let answered = ask(move.target, .import(move.id, shipment), memory: &memory)
        else { return false }
        return answered.ledger.incoming.contains { $0.move.id == move.id && $0.isAdopted }
    }

    /// The shards that still hold the decided `move` in progress (or did not answer), with why.
    private func unsettledShards(_ move: SlotMove, source: SlotMoveStatus?, target: SlotMoveStatus?, memory: Memory) -> [Int: String] {
        var unsettled: [Int: String] = [:]
        if let source {
            if source.ledger.outgoing.contains(where: { $0.move.id == move.id }) { unsettled[move.source] = "still sends \(move.id)" }
        } else {
            unsettled[move.source] = memory.refusals[move.source] ?? "did not answer"
        }
        if let target {
            if target.ledger.incoming.contains(where: { $0.move.id == move.id }) { unsettled[move.target] = "still receives \(move.id)" }
        } else {
            unsettled[move.target] = memory.refusals[move.target] ?? "did not answer"
        }
        return unsettled
    }
}
