import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

@testable import ChimeCoordinator

/// One shard of ``SlotMoveSimulation``: the shipped `CoordinatorState`, admission included
/// (`onControlRequest`: the store-full stage, fresh register reads for the `move` steps that
/// read it), behind a shell that keeps the service's rules — every entry of a turn submitted
/// to the journal before its replies, written either inline or later by the writer (group
/// commit), a reply sent only once every entry submitted before it is durable, a reply
/// `replyAtOnce` at once — and a store with the faults production meets: a kill -9 that keeps
/// a torn part of what was submitted but not synced, a full disk, snapshots, and a restart
/// from an older copy of the journal (a backup restored).
struct SimulatedShard {
    let id: Int
    let configuration: CoordinatorConfiguration
    /// Every entry submitted, in order; the first `durableCount` are on disk.
    private(set) var journal: [JournalEntry] = []
    /// When each entry was submitted (simulated clock), for the restore fault's accounting.
    private(set) var submittedAt: [Date] = []
    private(set) var durableCount = 0
    /// The newest snapshot: the state's payload and how many journal entries it reflects.
    private(set) var snapshot: (payload: Data, through: Int)?
    /// The running coordinator; `nil` while the process is down.
    var state: CoordinatorState?
    /// Whether the disk is full: writes fail, entries wait in memory.
    var isFull = false
    /// The epoch of the running coordinator (one above every epoch journaled before).
    private(set) var epoch: UInt64 = 0
    /// Dispatched batches the worker has not delivered yet, oldest first (lost with a crash of
    /// this shard: the worker's connection to it ends).
    var workerQueue: [DispatchBatch] = []
    /// Firings dispatched since the world last drained them.
    var dispatched: [Firing] = []
    /// Occurrences made firings (`fired` journaled) since the world last drained them.
    var made: [FiringID] = []
    /// Hand-over events published.
    var handOvers: [HandOverEvent] = []
    /// Shell faults the simulation injects on purpose.
    var shellSabotage: SlotMoveSimulation.ShellSabotage = .none
    /// A rule of the state broken on purpose, in every coordinator this shard runs.
    var stateSabotage: SlotMoveSabotage = .none {
        didSet { state?.sabotage = stateSabotage }
    }

    /// What a request got.
    enum Answer {
        case reply(ControlOutcome)
        /// A reply the state encoded itself (a remembered reply sent again for a retried
        /// `requestId`, or one answered at once while the store is full).
        case encoded(Data)
        /// No reply within the client's timeout (the process is down, or the reply waits
        /// for entries that are not durable).
        case noReply
    }

    init(id: Int, map: ShardMap, at now: Date) {
        var configuration = CoordinatorConfiguration()
        configuration.shardMap = map
        configuration.shardID = id
        configuration.followsMapRegister = true
        configuration.dispatchLead = 0
        configuration.leaseDuration = 20
        configuration.heartbeatInterval = 5
        configuration.eventSeqReservation = 64
        self.id = id
        self.configuration = configuration
        boot(at: now)
    }

    /// Whether the process runs.
    var isUp: Bool { state != nil }

    /// Starts the coordinator: recovery from the newest snapshot and the journal after it
    /// (the one fold), an epoch above every one recorded, `started` journaled.
    mutating func boot(at now: Date) {
        var state = CoordinatorState(configuration: configuration, startedAt: now)
        if let snapshot {
            do throws(WireError) {
                try state.load(snapshot: snapshot.payload)
            } catch {
                preconditionFailure("shard \(id): a snapshot the simulation wrote does not load: \(error)")
            }
        }
        for entry in journal.dropFirst(snapshot?.through ?? 0) { state.apply(entry) }
        epoch = max(epoch, state.highestRecordedEpoch) + 1
        state.takeOver(as: CoordinatorIdentity(epoch: epoch, startedAt: now))
        state.onMapRegisterFollowed(name: "the simulated register")
        let started = JournalEntry.started(epoch: epoch, at: now, settings: configuration.durableSettings)
        state.apply(started)
        submit([started], at: now)
        state.finishRecovery(at: now)
        state.sabotage = stateSabotage
        self.state = state
        workerQueue = []
    }

    /// A kill -9: memory is gone. The journal keeps every durable entry and, unless the disk
    /// was full, `torn` more of those written after them (a write cut short).
    mutating func crash(keepingTorn torn: Int) {
        let kept = isFull ? durableCount : min(journal.count, durableCount + max(0, torn))
        journal.removeLast(journal.count - kept)
        submittedAt.removeLast(submittedAt.count - kept)
        durableCount = kept
        state = nil
        workerQueue = []
    }

    /// A restore of an older copy of the store (the journal cut to its first `count` entries,
    /// a snapshot past that point dropped); the process must be down.
    mutating func restore(keeping count: Int) {
        precondition(state == nil, "restore a stopped shard")
        let kept = min(count, journal.count)
        journal.removeLast(journal.count - kept)
        submittedAt.removeLast(submittedAt.count - kept)
        durableCount = min(durableCount, kept)
        if let snapshot, snapshot.through > kept { self.snapshot = nil }
    }

    /// Writes a snapshot of the state (as the snapshot thread does once the journal it
    /// reflects is durable); nothing while the disk is full or entries wait.
    mutating func takeSnapshot(at now: Date) {
        guard let state, !isFull, durableCount == journal.count else { return }
        snapshot = (state.encodedSnapshot(at: now), journal.count)
    }

    /// The disk fills or frees; freed, everything waiting is written.
    mutating func setFull(_ full: Bool) {
        isFull = full
        flush()
    }

    /// Submits `entries` to the journal writer (durable at the next ``sync()``).
    private mutating func submit(_ entries: [JournalEntry], at now: Date) {
        journal += entries
        submittedAt += Array(repeating: now, count: entries.count)
    }

    /// The journal writer writes and syncs everything submitted (nothing while the disk is full).
    mutating func sync() {
        if !isFull { durableCount = journal.count }
    }

    private mutating func flush() { sync() }

    /// Whether a reply queued now would be sent: every entry submitted so far is durable.
    private var repliesLeave: Bool { shellSabotage == .repliesBeforeDurable || durableCount == journal.count }

    /// Carries out a call's directives: entries submitted first (synced at once when
    /// `syncsInline`, as the writer does for a lone request when idle), then dispatches (the
    /// worker's queue) and events; returns the reply, if the call had one and it can leave now.
    private mutating func carryOut(_ directives: [CoordinatorDirective], syncsInline: Bool = false, at now: Date) -> Answer? {
        var entries: [JournalEntry] = []
        var reply: Answer?
        for directive in directives {
            switch directive {
            case .append(let entry): entries.append(entry)
            case .dispatch(let batch, _):
                workerQueue.append(batch)
                dispatched += batch.firings
            case .reply(let outcome, _, _): reply = .reply(outcome)
            case .replyEncoded(let body, _): reply = .encoded(body)
            case .replyAtOnce(let body, _): return .encoded(body)
            case .serveStoreRequest, .reportStore, .writeSnapshot, .removeSegments, .readMapRegister: break
            case .publish(.handOver(let event)): handOvers.append(event)
            case .publish: break
            }
        }
        for case .fired(let key, let dueAt, _, _, _, _) in entries { made.append(FiringID(key, dueAt: dueAt)) }
        submit(entries, at: now)
        if syncsInline { sync() }
        guard let reply else { return nil }
        return repliesLeave ? reply : .noReply
    }

    /// A control request from `client`, admitted and answered as the service does it; its
    /// entries are synced at once when `syncsInline`. A `move` step waiting for a fresh read
    /// of the register gets it (the reader thread reads `register`) and is sent again with the
    /// same `requestId`, as the mover's client does.
    mutating func handle(
        _ request: ControlRequest, from client: ClientAddress, register: SlotMapRecord, syncsInline: Bool = true, at now: Date
    ) -> Answer {
        guard var state else { return .noReply }
        state.onStoreMode(isFull: isFull)
        var directives = state.onControlRequest(IncomingRequest(request: request, client: client, bodyBytes: 0), at: now)
        for _ in 0..<3 where directives.contains(.readMapRegister) {
            state.onMapRead(record: register, freshReadsDone: state.shardView.register?.freshReadsRequested ?? 0)
            directives = state.onControlRequest(IncomingRequest(request: request, client: client, bodyBytes: 0), at: now)
        }
        self.state = state
        return carryOut(directives, syncsInline: syncsInline, at: now) ?? .noReply
    }

    /// The loop's tick: due firings, leases, the register's outcomes it has read.
    mutating func tick(syncsInline: Bool = false, at now: Date) {
        guard var state else { return }
        state.onStoreMode(isFull: isFull)
        let directives = state.onTick(now: now, monotonic: now.timeIntervalSince1970)
        self.state = state
        _ = carryOut(directives, syncsInline: syncsInline, at: now)
    }

    /// The register reader thread handing its newest record to the loop.
    mutating func readRegister(_ record: SlotMapRecord) {
        state?.adoptMapRecord(record)
    }

    /// The worker: a heartbeat over the dispatch connection, then up to `count` of the queued
    /// firings delivered and acknowledged (the acknowledgement lost when `losesAcks`).
    /// - Returns: the firings delivered.
    mutating func work(deliveringUpTo count: Int, losesAcks: Bool, at now: Date) -> [Firing] {
        guard var state else { return [] }
        var delivered: [Firing] = []
        var acks: [WorkerMessage.Acknowledgement] = []
        while delivered.count < count, !workerQueue.isEmpty {
            var batch = workerQueue.removeFirst()
            let taken = batch.firings.prefix(count - delivered.count)
            delivered += taken
            acks += taken.map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: now, attempt: $0.attempt, epoch: batch.epoch) }
            batch.firings.removeFirst(taken.count)
            if !batch.firings.isEmpty { workerQueue.insert(batch, at: 0) }
        }
        let message = WorkerMessage(
            worker: "w", host: "h", pid: 1, capacity: 64, delivered: delivered.count, acks: losesAcks ? [] : acks)
        let directives = state.onWorkerMessage(message, viaDispatch: true, at: now, monotonic: now.timeIntervalSince1970)
        self.state = state
        _ = carryOut(directives, at: now)
        return delivered
    }

    /// How the state a recovery from the store would rebuild now differs from the live one
    /// (`nil`: it does not).
    func recoveryDifference() -> String? {
        guard let state else { return nil }
        var rebuilt = CoordinatorState(configuration: configuration, startedAt: Date(timeIntervalSince1970: 0))
        if let snapshot { try? rebuilt.load(snapshot: snapshot.payload) }
        for entry in journal.dropFirst(snapshot?.through ?? 0) { rebuilt.apply(entry) }
        guard rebuilt.durable != state.durable else { return nil }
        return ModelRun.describe(rebuilt.durable, state.durable)
    }
}
