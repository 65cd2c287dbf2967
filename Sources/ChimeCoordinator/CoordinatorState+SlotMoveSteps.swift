import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

/// The `move` op: a mover's steps on this shard, each the shell of one pure decision of
/// `SlotMoveSource` or `SlotMoveTarget`, journaled as `JournalEntry.slotMove` and answered
/// with the shard's ``SlotMoveStatus``. Operator role only (the role table leaves `move` to it).
///
/// What travels is the slots' final slice, cut at the hand-over once nothing of the slots is
/// unsettled on the source, so the target adopts a complete slice and nothing about the slots
/// happens on the source afterwards. Every step is idempotent; a repeated one changes nothing.
/// The service sends each answer once every entry journaled before it is durable, and
/// refuses every step while its store is full, so a mover only ever sees durable facts.
extension CoordinatorState {
    mutating func moveStep(_ request: SlotMoveRequest, at now: Date, directives: inout [CoordinatorDirective]) -> ControlOutcome {
        var shipment: ShippedSlice?
        if request.step != .status {
            guard let register = mapRecord else {
                return .failed(WireError(.unavailable, "this coordinator has no map register (cluster.register)"))
            }
            let shard = configuration.shardID
            switch request.step {
            case .status:
                break
            case .begin:
                guard let move = request.move else { return .failed(WireError(.invalidArgument, "begin needs a move", field: "move")) }
                guard register.open[move.id] == move || durable.moves.outgoing[move.id] != nil || durable.moves.incoming[move.id] != nil
                else {
                    return .failed(WireError(.unavailable, "\(move) is not open in map register version \(register.version) here"))
                }
                if move.target == shard, durable.moves.incoming[move.id] == nil,
                    let blocking = SlotMoveTarget.blockingMove(for: move, ledger: durable.moves)
                {
                    return .failed(WireError(
                        .unavailable, "shard \(shard) still sends \(blocking); it releases those slots once it reads the register's outcome"))
                }
                if let entry = SlotMoveSource.start(move, shard: shard, ledger: durable.moves, record: register, at: now)
                    ?? SlotMoveTarget.start(move, shard: shard, ledger: durable.moves, record: register, at: now)
                {
                    record(.slotMove(entry), into: &directives)
                }
            case .pause:
                guard let id = request.moveId, let outgoing = durable.moves.outgoing[id] else { return notHere(request.moveId, "sends") }
                let milliseconds = min(SlotMoveRequest.maximumPauseMilliseconds, max(1, request.pauseMilliseconds ?? 200))
                shardView.movePauses[id] = now.addingTimeInterval(Double(milliseconds) / 1000)
                if let entry = SlotMoveSource.handOver(outgoing, state: durable, isPaused: true, at: now) {
                    record(.slotMove(entry), into: &directives)
                }
            case .export:
                guard let id = request.moveId, let outgoing = durable.moves.outgoing[id] else { return notHere(request.moveId, "sends") }
                shipment = SlotMoveSource.shipment(for: outgoing, state: durable)?.shipped
            case .import:
                guard let id = request.moveId, let shipped = request.shipment else {
                    return .failed(WireError(.invalidArgument, "import needs a moveId and a shipment", field: "shipment"))
                }
                guard durable.moves.incoming[id] != nil else { return notHere(id, "receives") }
                let received: SlotMoveShipment
                do throws(WireError) {
                    received = try SlotMoveShipment(shipped, moveID: id, settings: durable.settings)
                } catch {
                    return .failed(error)
                }
                if let entry = SlotMoveTarget.receive(received, ledger: durable.moves) { record(.slotMove(entry), into: &directives) }
            case .follow:
                guard let id = request.moveId else { return notHere(nil, "takes part in") }
                followMove(id, record: register, at: now, directives: &directives)
            }
        }
        forgetEndedMoves()
        var status = moveStatus(countingReminders: request.countsReminders)
        status.shipment = shipment
        return .move(status)
    }

    private func notHere(_ id: SlotMoveID?, _ role: String) -> ControlOutcome {
        .failed(WireError(.notFound, "shard \(configuration.shardID) \(role) no move \(id?.rawValue ?? "(no moveId)")", field: "moveId"))
    }

    /// Follows the register's outcome of move `id` on this shard (``SlotMoveSource/follow(_:record:eventSeq:at:)``
    /// and ``SlotMoveTarget/follow(_:record:at:)``): a source releases (and publishes the
    /// hand-over event) or resumes, a target commits and completes, or drops.
    mutating func followMove(_ id: SlotMoveID, record register: SlotMapRecord, at now: Date, directives: inout [CoordinatorDirective]) {
        if let outgoing = durable.moves.outgoing[id],
            let entry = SlotMoveSource.follow(outgoing, record: register, eventSeq: dispatch.nextEventSeq, at: now)
        {
            if case .released = entry { takeEventSeq(into: &directives) }
            record(.slotMove(entry), into: &directives)
            if case .released = entry {
                forgetReleasedFirings()
                if let event = durable.moves.handOvers.last, event.move == id.rawValue { directives.append(.publish(.handOver(event))) }
            }
        }
        if let incoming = durable.moves.incoming[id] {
            let entries = SlotMoveTarget.follow(incoming, record: register, at: now)
            if !incoming.isAdopted, entries.contains(where: { if case .dropped = $0 { true } else { false } }),
                case .committed? = register.outcomes[id]
            {
                note(.moveLostAtTarget(id, slots: incoming.move.slots.count))
            }
            for entry in entries { record(.slotMove(entry), into: &directives) }
            if entries.contains(where: { if case .committed = $0 { true } else { false } }) { queueAdoptedFirings(of: incoming.move) }
        }
    }

    /// Takes the next seq of this shard's event stream (`nextEventSeq`, which the entry about
    /// to be recorded names) for an event other than a dispatch (a hand-over): reserves a block
    /// in the journal first when the reserved one runs low, as a dispatch does, so a recovery
    /// never gives the seq again.
    mutating func takeEventSeq(into directives: inout [CoordinatorDirective]) {
        if dispatch.nextEventSeq.saturatingAdding(configuration.eventSeqReservation / 2) > eventSeqReserved {
            record(.seqReserved(through: dispatch.nextEventSeq.saturatingAdding(configuration.eventSeqReservation)), into: &directives)
        }
        dispatch.nextEventSeq.saturatingIncrement()
    }

    /// After a commit: the merged slice's unsettled firings (none when the source handed over
    /// a settled slice) wait for a worker here.
    mutating func queueAdoptedFirings(of move: SlotMove) {
        let adopted = unsettled.values.filter { move.covers($0.firing.recipient) && dispatch.inFlight[$0.firing.firingId] == nil }
        dispatch.waiting.append(contentsOf: adopted.sorted { ($0.firing.dueAt, $0.firing.firingId) < ($1.firing.dueAt, $1.firing.firingId) })
    }

    /// After a release: firings the released slice took with it leave the waiting line and the
    /// in-flight table (none after a hand-over that shipped; some when a source restarted
    /// from a journal that lost its hand-over had re-derived them), so nothing dispatches a
    /// firing this shard no longer holds.
    mutating func forgetReleasedFirings() {
        let unsettled = self.unsettled
        dispatch.waiting = RingQueue(dispatch.waiting.filter { unsettled[$0.firing.firingId] === $0 })
        for (firingId, flight) in dispatch.inFlight where unsettled[firingId] == nil {
            dispatch.inFlight[firingId] = nil
            dispatch.workers[flight.worker]?.outstanding -= 1
        }
    }

    /// Drops the volatile pauses of moves no longer sent from here.
    private mutating func forgetEndedMoves() {
        let moves = durable.moves
        shardView.movePauses = shardView.movePauses.filter { moves.outgoing[$0.key] != nil }
    }

    /// This shard's view for a mover.
    func moveStatus(countingReminders: Bool = false) -> SlotMoveStatus {
        var reminders: [String: Int] = [:]
        var unsettledCounts: [String: Int] = [:]
        for move in durable.moves.outgoing.values.map(\.move) + durable.moves.incoming.values.map(\.move) {
            if countingReminders {
                reminders[move.id.rawValue] = durable.moves.incoming[move.id]?.slice?.reminderCount
                    ?? durable.schedule.entries.keys.reduce(0) { $0 + (move.covers($1.recipient) ? 1 : 0) }
            }
            unsettledCounts[move.id.rawValue] = durable.deliveries.unsettled.keys.reduce(0) { $0 + (move.covers($1.recipient) ? 1 : 0) }
        }
        return SlotMoveStatus(
            shard: configuration.shardID, mapEpoch: configuration.shardMap?.mapEpoch ?? 1, registerVersion: mapRecord?.version,
            reminders: durable.reminderCount, ledger: durable.moves.view, slotReminders: reminders, slotUnsettled: unsettledCounts)
    }
}
