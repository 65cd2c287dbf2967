import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// A map register a mover reads and writes: the file (``SlotMapRegisterFile``), or a test's.
public protocol SlotMapRegistering {
    /// The current record, `nil` when there is none.
    /// - Throws: `WireError` when it cannot be read.
    func read() throws(WireError) -> SlotMapRecord?
    /// Writes `new` at `expectedVersion + 1` if the record is still at `expectedVersion`.
    /// - Returns: whether the write won.
    /// - Throws: `WireError` when it cannot be written.
    func compareAndSwap(expectedVersion: UInt64, _ new: SlotMapRecord) throws(WireError) -> Bool
}

extension SlotMapRegisterFile: SlotMapRegistering {}

/// The mover as a process: repeats `SlotMover.nextStep` over the register and the two
/// shards' answers and carries each step out (register writes, `move` ops), until the move
/// is decided and both shards followed it (source `released` and target `completed`, or
/// source `resumed` / never started and target `dropped` / never started). It keeps nothing
/// of its own, so a rerun after it was killed continues (or aborts past the deadline).
public struct SlotMoveDriver {
    /// Sends one step to a shard and returns its status; throws when the shard does not answer.
    public typealias Send = (_ shard: Int, _ step: SlotMoveStep, _ call: SlotMoveCall) throws -> SlotMoveStatus

    /// What the driver reports after each round.
    public struct Progress: Sendable {
        /// The step just taken.
        public var step: SlotMoverStep
        /// Reminders of the slots on the source when the move began (its status), if known.
        public var reminders: Int?
    }

    let register: any SlotMapRegistering
    let send: Send
    /// Pause between rounds that found nothing to do, in seconds.
    public var idle: TimeInterval = 0.02
    /// How long the source refuses the slots' writes while it hands over, in seconds.
    public var pause: TimeInterval = 0.2

    /// A driver over `register`, reaching shards through `send`.
    public init(register: any SlotMapRegistering, send: @escaping Send) {
        self.register = register
        self.send = send
    }

    /// Drives `move` until it settled on both shards or `deadline` passed with it undecided
    /// (then it is aborted and driven to that end).
    /// - Parameter progress: called after every round.
    /// - Returns: the register's outcome.
    /// - Throws: `WireError` when the register cannot be read or written, or the move cannot
    ///   open (`.invalidArgument`); a shard that does not answer is retried until the deadline.
    public func run(
        _ move: SlotMove, deadline: Date, now: () -> Date = Date.init, progress: (Progress) -> Void = { _ in }
    ) throws(WireError) -> SlotMoveOutcome {
        var reminders: Int?
        while true {
            guard let record = try register.read() else { throw WireError(.unavailable, "the map register has no record") }
            let source = try? send(move.source, .status, SlotMoveCall(countReminders: reminders == nil))
            let target = try? send(move.target, .status, SlotMoveCall())
            let sourceLedger = source.flatMap { try? SlotMoveLedger.viewed($0.ledger) }
            let targetLedger = target.flatMap { try? SlotMoveLedger.viewed($0.ledger) }
            if reminders == nil { reminders = source?.slotReminders[move.id.rawValue] }
            let receipt = target?.receipts.first { $0.moveID == move.id }
            let step = SlotMover.nextStep(
                for: move, record: record, source: sourceLedger, target: targetLedger, isLagSmall: receipt?.through != nil,
                at: now(), deadline: deadline, pause: pause)
            var acted = true
            switch step {
            case .open(let opening):
                if let next = record.opening(opening) { _ = try register.compareAndSwap(expectedVersion: record.version, next) }
            case .commit(let id):
                if let next = record.committing(id) { _ = try register.compareAndSwap(expectedVersion: record.version, next) }
            case .abort(let id):
                if let next = record.aborting(id) { _ = try register.compareAndSwap(expectedVersion: record.version, next) }
            case .startSource(let starting):
                _ = try? send(starting.source, .begin, SlotMoveCall(move: starting))
            case .startTarget(let starting):
                _ = try? send(starting.target, .begin, SlotMoveCall(move: starting))
            case .pauseSource(let id, let until):
                let milliseconds = Int((until.timeIntervalSince(now()) * 1000).rounded())
                _ = try? send(move.source, .pause, SlotMoveCall(moveId: id, pauseMilliseconds: max(1, milliseconds)))
                acted = shipIfUseful(move, source: sourceLedger, receipt: receipt)
            case .wait:
                acted = shipIfUseful(move, source: sourceLedger, receipt: receipt)
            case .refused:
                throw WireError(.invalidArgument, "\(move) cannot open: a slot is in another open move or not shard \(move.source)'s, or its id was used")
            case .finished(let outcome):
                if settle(move, outcome: outcome, source: source, target: target, receipt: receipt) {
                    progress(Progress(step: step, reminders: reminders))
                    return outcome
                }
            }
            progress(Progress(step: step, reminders: reminders))
            if !acted { Thread.sleep(forTimeInterval: idle) }
        }
    }

    /// Ships when it moves the move on (an export cuts the slots' slice out of the source's
    /// state and the target decodes it): a first slice to a target that holds nothing, and
    /// the final one once the source handed over. While the handed-over slots still have
    /// firings in flight the source answers a `finalOnly` export with nothing, and the mover
    /// waits a round: shipping a non-final slice each round kept both loops busy (at 500,000
    /// reminders a shard, firings of the moving slots were 0.65 s late at the median).
    private func shipIfUseful(_ move: SlotMove, source: SlotMoveLedger?, receipt: SlotMoveReceipt?) -> Bool {
        guard receipt?.isAdopted != true, receipt?.through == nil || source?.outgoing[move.id]?.isHandedOver == true else { return false }
        return ship(move, finalOnly: receipt?.through != nil)
    }

    /// Ships the source's slice to the target while both take part and the target has not adopted.
    /// - Returns: whether anything was shipped.
    private func ship(_ move: SlotMove, finalOnly: Bool) -> Bool {
        guard let exported = try? send(move.source, .export, SlotMoveCall(moveId: move.id, finalOnly: finalOnly ? true : nil)),
            let shipment = exported.shipment,
            let answered = try? send(move.target, .import, SlotMoveCall(moveId: move.id, shipment: shipment))
        else { return false }
        return answered.receipts.contains { $0.moveID == move.id && $0.isAdopted }
    }

    /// Has both shards follow the decided outcome. - Returns: whether both settled.
    private func settle(
        _ move: SlotMove, outcome: SlotMoveOutcome, source: SlotMoveStatus?, target: SlotMoveStatus?, receipt: SlotMoveReceipt?
    ) -> Bool {
        guard let source, let target else {
            Thread.sleep(forTimeInterval: idle)
            return false
        }
        let key = move.id.rawValue
        let sourceEnded = source.ledger.ended[key]
        let targetEnded = target.ledger.ended[key]
        let sourceIn = source.ledger.outgoing.contains { $0.move.id == move.id }
        let targetIn = target.ledger.incoming.contains { $0.move.id == move.id }
        switch outcome {
        case .aborted:
            if (sourceEnded != nil || !sourceIn) && (targetEnded != nil || !targetIn) { return true }
            _ = try? send(move.source, .follow, SlotMoveCall(moveId: move.id))
            _ = try? send(move.target, .follow, SlotMoveCall(moveId: move.id))
        case .committed:
            if sourceEnded == .released && targetEnded == .completed { return true }
            if receipt?.isCommitted != true { _ = try? send(move.target, .follow, SlotMoveCall(moveId: move.id)) }
            if sourceEnded != .released {
                let latest = (try? send(move.target, .status, SlotMoveCall()))?.receipts.first { $0.moveID == move.id } ?? receipt
                _ = try? send(move.source, .release, SlotMoveCall(moveId: move.id, receipt: latest))
            } else {
                _ = try? send(move.target, .complete, SlotMoveCall(moveId: move.id))
            }
        }
        Thread.sleep(forTimeInterval: idle)
        return false
    }
}
