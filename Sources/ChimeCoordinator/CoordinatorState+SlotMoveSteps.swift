import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// The `move` op: a mover's steps on this shard, each the shell of one pure decision of
/// `SlotMoveSource` or `SlotMoveTarget`, journaled as `JournalEntry.slotMove` and answered
/// with the shard's ``SlotMoveStatus``. Operator role only (the role table leaves `move` to it).
///
/// What travels is the slots' slice (no journal entries): the source exports its current
/// slice each time, and carries the hand-over only once nothing of the slots is unsettled
/// there, so the target adopts a complete slice and no firing is held for the source (the
/// tail is empty). Every step is idempotent; a repeated one changes nothing.
extension CoordinatorState {
    mutating func moveStep(_ stepName: String, body: Data, at now: Date, directives: inout [CoordinatorDirective]) -> ControlOutcome {
        guard let step = SlotMoveStep(rawValue: stepName) else {
            let known = SlotMoveStep.allCases.map(\.rawValue).joined(separator: ", ")
            return .failed(WireError(.invalidArgument, "unknown move step \"\(stepName)\"; expected one of \(known)", field: "step"))
        }
        let call: SlotMoveCall
        do {
            call = body.isEmpty ? SlotMoveCall() : try JSONDecoder().decode(SlotMoveCall.self, from: body)
        } catch {
            return .failed(WireError(.invalidArgument, "the move step's body does not decode: \(error)", field: "body"))
        }
        var shipment: SlotMoveShipment.Wire?
        if step != .status {
            guard let register = shardView.mapRecord else {
                return .failed(WireError(.unavailable, "this coordinator has no map register (cluster.register)"))
            }
            let shard = configuration.shardID
            switch step {
            case .status:
                break
            case .begin:
                guard let move = call.move else { return .failed(WireError(.invalidArgument, "begin needs a move", field: "body")) }
                guard register.open[move.id] == move || durable.moves.outgoing[move.id] != nil || durable.moves.incoming[move.id] != nil
                else {
                    return .failed(WireError(.unavailable, "\(move) is not open in map register version \(register.version) here"))
                }
                if let entry = SlotMoveSource.start(move, shard: shard, ledger: durable.moves, record: register, at: now)
                    ?? SlotMoveTarget.start(move, shard: shard, ledger: durable.moves, record: register, at: now)
                {
                    record(.slotMove(entry), into: &directives)
                }
            case .pause:
                guard let id = call.moveId, let outgoing = durable.moves.outgoing[id] else { return notHere(call.moveId, "sends") }
                let milliseconds = min(60_000, max(1, call.pauseMilliseconds ?? 200))
                shardView.movePauses[id] = now.addingTimeInterval(Double(milliseconds) / 1000)
                if let entry = SlotMoveSource.handOver(outgoing, state: durable, isPaused: true, journalEnd: 1, at: now) {
                    record(.slotMove(entry), into: &directives)
                }
            case .export:
                guard let id = call.moveId, let outgoing = durable.moves.outgoing[id] else { return notHere(call.moveId, "sends") }
                if call.finalOnly != true || canHandOverFinally(outgoing) { shipment = exportShipment(outgoing).wire }
            case .import:
                guard let wire = call.shipment else { return .failed(WireError(.invalidArgument, "import needs a shipment", field: "body")) }
                let received: SlotMoveShipment
                do throws(WireError) {
                    received = try SlotMoveShipment(wire, settings: durable.settings)
                } catch {
                    return .failed(error)
                }
                var staging = shardView.moveStaging[wire.moveId]
                let entries = SlotMoveTarget.receive(received, ledger: durable.moves, staging: &staging, at: now)
                shardView.moveStaging[wire.moveId] = staging
                for entry in entries { record(.slotMove(entry), into: &directives) }
            case .follow:
                guard let id = call.moveId else { return notHere(nil, "takes part in") }
                if let outgoing = durable.moves.outgoing[id], let entry = SlotMoveSource.follow(outgoing, record: register, at: now) {
                    record(.slotMove(entry), into: &directives)
                }
                if let incoming = durable.moves.incoming[id], let entry = SlotMoveTarget.follow(incoming, record: register, at: now) {
                    record(.slotMove(entry), into: &directives)
                    if case .committed = entry { queueAdoptedFirings(of: incoming.move) }
                }
            case .release:
                guard let id = call.moveId, let outgoing = durable.moves.outgoing[id] else { return notHere(call.moveId, "sends") }
                if let entry = SlotMoveSource.release(
                    outgoing, state: durable, record: register, receipt: call.receipt, lastSlotEntry: 0, eventSeq: dispatch.nextEventSeq, at: now)
                {
                    takeEventSeq(into: &directives)
                    record(.slotMove(entry), into: &directives)
                    if let event = durable.moves.handOvers.last, event.move == id.rawValue { directives.append(.publish(.handOver(event))) }
                }
            case .complete:
                guard let id = call.moveId else { return notHere(nil, "receives") }
                var staging = shardView.moveStaging[id]
                for entry in SlotMoveTarget.receive(SlotMoveSource.releasedNotice(id, journalEnd: 0), ledger: durable.moves, staging: &staging, at: now) {
                    record(.slotMove(entry), into: &directives)
                }
            }
        }
        forgetEndedMoves()
        var status = moveStatus(countingReminders: call.countReminders == true)
        status.shipment = shipment
        return .move(MoveStepResult(body: (try? JSONEncoder().encode(status)) ?? Data()))
    }

    private func notHere(_ id: SlotMoveID?, _ role: String) -> ControlOutcome {
        .failed(WireError(.notFound, "shard \(configuration.shardID) \(role) no move \(id?.rawValue ?? "(no moveId)")", field: "body"))
    }

    /// Takes the next seq of this shard's event stream (``nextEventSeq``, which the entry about
    /// to be recorded names) for an event other than a dispatch (a hand-over): reserves a block
    /// in the journal first when the reserved one runs low, as a dispatch does, so a recovery
    /// never gives the seq again.
    mutating func takeEventSeq(into directives: inout [CoordinatorDirective]) {
        if dispatch.nextEventSeq.saturatingAdding(configuration.eventSeqReservation / 2) > eventSeqReserved {
            record(.seqReserved(through: dispatch.nextEventSeq.saturatingAdding(configuration.eventSeqReservation)), into: &directives)
        }
        dispatch.nextEventSeq.saturatingIncrement()
    }

    /// The source's shipment now: the slots' slice; the hand-over once made and nothing of
    /// the slots is unsettled here (the slice is then final).
    func exportShipment(_ outgoing: SlotMoveLedger.Outgoing) -> SlotMoveShipment {
        let slice = durable.slice(where: outgoing.move.covers)
        let through = outgoing.handedOverThrough ?? 0
        var handOver: SlotMoveShipment.HandOver?
        if let cut = outgoing.cut, slice.deliveries.unsettled.isEmpty { handOver = SlotMoveShipment.HandOver(cut: cut, through: through) }
        return SlotMoveShipment(
            moveID: outgoing.move.id, slice: slice, after: through, entries: [], through: through, handOver: handOver, isReleased: false)
    }

    /// Whether an export now would carry the hand-over: handed over, and nothing of the slots
    /// unsettled here (a look at the firings in flight, not a cut of the slice).
    func canHandOverFinally(_ outgoing: SlotMoveLedger.Outgoing) -> Bool {
        outgoing.cut != nil && !durable.deliveries.unsettled.keys.contains { outgoing.move.covers($0.recipient) }
    }

    /// After a commit: the merged slice's unsettled firings (none when the source handed over
    /// a settled slice) wait for a worker here.
    mutating func queueAdoptedFirings(of move: SlotMove) {
        let moves = durable.moves
        let adopted = unsettled.values.filter {
            move.covers($0.firing.recipient) && dispatch.inFlight[$0.firing.firingId] == nil && moves.mayDispatch($0.firing.firingId)
        }
        dispatch.waiting.append(contentsOf: adopted.sorted { ($0.firing.dueAt, $0.firing.firingId) < ($1.firing.dueAt, $1.firing.firingId) })
    }

    /// Drops the volatile pauses and staging of moves no longer in progress here.
    private mutating func forgetEndedMoves() {
        let moves = durable.moves
        shardView.movePauses = shardView.movePauses.filter { moves.outgoing[$0.key] != nil }
        shardView.moveStaging = shardView.moveStaging.filter { moves.incoming[$0.key] != nil }
    }

    /// This shard's view for a mover.
    func moveStatus(countingReminders: Bool = false) -> SlotMoveStatus {
        var record = durable.moves.record
        for index in record.incoming.indices { record.incoming[index].slice = nil }
        var reminders: [String: Int] = [:]
        var unsettledCounts: [String: Int] = [:]
        for move in durable.moves.outgoing.values.map(\.move) + durable.moves.incoming.values.map(\.move) {
            if countingReminders {
                let staged = durable.moves.incoming[move.id].flatMap { $0.slice ?? shardView.moveStaging[move.id]?.slice }
                reminders[move.id.rawValue] = staged?.reminderCount
                    ?? durable.schedule.entries.keys.reduce(0) { $0 + (move.covers($1.recipient) ? 1 : 0) }
            }
            unsettledCounts[move.id.rawValue] = durable.deliveries.unsettled.keys.reduce(0) { $0 + (move.covers($1.recipient) ? 1 : 0) }
        }
        return SlotMoveStatus(
            shard: configuration.shardID, mapEpoch: configuration.shardMap?.mapEpoch ?? 1, registerVersion: shardView.mapRecord?.version,
            reminders: durable.reminderCount, ledger: record,
            receipts: durable.moves.incoming.keys.sorted().compactMap { SlotMoveTarget.receipt(for: $0, ledger: durable.moves, staging: shardView.moveStaging[$0]) },
            slotReminders: reminders, slotUnsettled: unsettledCounts, shipment: nil)
    }
}
