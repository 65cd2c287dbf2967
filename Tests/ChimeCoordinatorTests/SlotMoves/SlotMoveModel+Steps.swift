import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

@testable import ChimeCoordinator

/// The steps of the model's processes: each the shell of one real decision.
extension SlotMoveModel {
    /// The client writes (schedules a new version of a reminder, or cancels one) to the shard
    /// its map names; an accepted write is acknowledged (journaled first).
    mutating func write(cancel: Bool) {
        let recipient = Self.recipients.randomElement(using: &random)!
        let key = ReminderKey(Self.reminderIDs.randomElement(using: &random)!, of: recipient)
        guard let shardID = clientMap.ownerID(ofSlot: clientMap.slot(of: recipient)), shards[shardID].isUp else {
            stats.writesRefused += 1
            return
        }
        let shard = shards[shardID]
        let gate = shard.ledger.writeGate(
            for: recipient, shard: shardID, map: shard.mapView.map, at: now, pausedUntil: shard.pausedUntil)
        switch gate {
        case .accept:
            let entry: JournalEntry
            if cancel {
                entry = .cancelled([key], at: now)
                acknowledged[key] = .some(nil)
            } else {
                let reminder = makeReminder(key)
                entry = .scheduled(reminder, at: now)
                acknowledged[key] = (reminder, now)
                versions[key, default: []].append(reminder)
            }
            shards[shardID].record(.entry(entry))
            stats.writesAccepted += 1
            note("shard \(shardID) acknowledged \(cancel ? "cancel" : "schedule") of \(key)")
        case .tryAgain:
            stats.writesRefused += 1
            stats.tryAgain += 1
        case .wrongShard:
            stats.writesRefused += 1
            stats.wrongShard += 1
            clientMap = register.record.map
        }
    }

    /// The recipient reports a location to the shard its map names (issue 41); an accepted
    /// report is journaled as `.located` and acknowledged.
    mutating func locate() {
        let recipient = Self.recipients.randomElement(using: &random)!
        guard let shardID = clientMap.ownerID(ofSlot: clientMap.slot(of: recipient)), shards[shardID].isUp else {
            stats.writesRefused += 1
            return
        }
        let shard = shards[shardID]
        let gate = shard.ledger.writeGate(
            for: recipient, shard: shardID, map: shard.mapView.map, at: now, pausedUntil: shard.pausedUntil)
        switch gate {
        case .accept:
            let point = GeoPoint(latitude: 52.5 + Double(Int.random(in: 0..<100, using: &random)) / 1000, longitude: 13.4)
            let report = LocationReport(point: point, accuracy: 10, at: now)
            if let last = acknowledgedLocations[recipient], last.at >= now { return }
            shards[shardID].record(.entry(.trigger(.located(recipient, report, at: now))))
            acknowledgedLocations[recipient] = report
            note("shard \(shardID) acknowledged a location of \(recipient)")
        case .tryAgain:
            stats.writesRefused += 1
        case .wrongShard:
            stats.writesRefused += 1
            clientMap = register.record.map
        }
    }

    mutating func makeReminder(_ key: ReminderKey) -> Reminder {
        writeCounter += 1
        let offset = [-20.0, 0, 5, 15, 40, 90, 200].randomElement(using: &random)!
        let start = TriggerStart.instant(now.addingTimeInterval(offset))
        let trigger = Int.random(in: 0..<4, using: &random) == 0
            ? Trigger(start: start, recurrenceRule: Self.repeating) : Trigger(start: start)
        return Reminder(id: key.id, recipient: key.recipient, content: Content(body: "v\(writeCounter)"), trigger: trigger)
    }

    /// The shard's loop turn: fires what is due (not what it handed over).
    mutating func tick(shard id: Int) {
        guard shards[id].isUp else { return }
        var fired = 0
        while fired < 50, let (key, deadline) = shards[id].due(at: now).first {
            guard let entry = shards[id].durable.schedule.entries[key], let occurrence = entry.next else { break }
            let reminder = entry.reminder
            let next = reminder.trigger.isRepeating
                ? shards[id].durable.recurrence(of: reminder)?.nextOccurrence(after: occurrence) : nil
            if shards[id].durable.deliveries.unsettled[FiringID(key, dueAt: deadline)] == nil {
                openFirings[FiringID(key, dueAt: deadline), default: 0] += 1
            }
            shards[id].record(.entry(.fired(key, dueAt: deadline, next: next, late: false, at: now)))
            made["\(FiringID(key, dueAt: deadline))#\(reminder.content.body ?? "")", default: []].insert(id)
            fired += 1
        }
        if sabotage == .sourceFiresAfterCut {
            // Broken on purpose: the source also fires what it handed over.
            for move in shards[id].ledger.outgoing.values where move.isHandedOver {
                for (key, deadline) in shards[id].durable.schedule.timer.deadlines.sorted(by: { $0.key < $1.key })
                where deadline <= now && move.move.covers(key.recipient) {
                    guard let entry = shards[id].durable.schedule.entries[key] else { continue }
                    shards[id].record(.entry(.fired(key, dueAt: deadline, next: nil, late: false, at: now)))
                    made["\(FiringID(key, dueAt: deadline))#\(entry.reminder.content.body ?? "")", default: []].insert(id)
                }
            }
        }
        if fired > 0 { note("shard \(id) fired \(fired)") }
    }

    /// A worker of the shard delivers one firing; its acknowledgement may be lost (the firing
    /// goes out again, with the same id).
    mutating func deliver(shard id: Int, ackLost: Bool) {
        guard shards[id].isUp, let firingId = shards[id].dispatchable.randomElement(using: &random) else { return }
        if openFirings[firingId, default: 0] <= 0 {
            fail("shard \(id) delivered \(firingId) again after its acknowledgement was journaled")
        }
        delivered[firingId, default: 0] += 1
        note("shard \(id) delivered \(firingId)\(ackLost ? ", acknowledgement lost" : "")")
        if delivered[firingId] ?? 0 > 1 { stats.duplicates += 1 }
        guard !ackLost else { return }
        ackSeq += 1
        openFirings[firingId, default: 0] -= 1
        shards[id].record(.entry(.acknowledged(firingId, seq: ackSeq, worker: WorkerID(rawValue: "w"), firedAt: now)))
    }

    /// The source's move turn: read the register, follow an abort, hand over when paused,
    /// ship to the target, release when the target holds everything.
    mutating func sourceTurn(shard id: Int) {
        guard shards[id].isUp else { return }
        shards[id].mapView = register.record
        for move in shards[id].ledger.outgoing.values.sorted(by: { $0.move.id < $1.move.id }) {
            let moveID = move.move.id
            if let resumed = SlotMoveSource.follow(move, record: shards[id].mapView, at: now) {
                shards[id].record(.move(resumed))
                shards[id].pausedUntil[moveID] = nil
                note("source \(id) resumed \(moveID)")
                continue
            }
            let isPaused = (shards[id].pausedUntil[moveID] ?? .distantPast) > now
            if isPaused && !move.isHandedOver {
                tick(shard: id)
                if let handOver = SlotMoveSource.handOver(
                    move, state: shards[id].durable, isPaused: true, journalEnd: shards[id].journalEnd, at: now)
                {
                    shards[id].record(.move(handOver))
                    stats.handOvers += 1
                    note("source \(id) handed over \(moveID)")
                }
            }
            guard let current = shards[id].ledger.outgoing[moveID] else { continue }
            ship(current, from: id)
            let last = shards[id].lastEntry(about: current.move)
            if let released = SlotMoveSource.release(
                current, state: shards[id].durable, record: shards[id].mapView, receipt: shards[id].receipts[moveID],
                lastSlotEntry: last, at: now)
            {
                shards[id].record(.move(released))
                note("source \(id) released \(moveID)")
            } else if sabotage == .sourceDeletesBeforeCommit, current.isHandedOver {
                // Broken on purpose: the copy is deleted before the move is known committed.
                let released = SlotMoveEntry.released(moveID, at: now)
                shards[id].record(.move(released))
                note("source \(id) released \(moveID)")
            }
        }
        // A released move whose target has not heard it yet (its status query).
        for mover in movers where mover.move.source == id && shards[id].ledger.ended[mover.move.id] == .released {
            let target = mover.move.target
            guard shards[target].isUp, shards[target].ledger.incoming[mover.move.id] != nil else { continue }
            receive(SlotMoveSource.releasedNotice(mover.move.id, journalEnd: shards[id].journalEnd), at: target)
        }
    }

    mutating func ship(_ move: SlotMoveLedger.Outgoing, from id: Int) {
        let target = move.move.target
        guard shards[target].isUp else { return }
        let source = shards[id]
        let shipment = SlotMoveSource.shipment(
            for: move, receipt: source.receipts[move.move.id], state: source.durable, journalEnd: source.journalEnd,
            entries: { source.entries(after: $0) })
        // The network loses a shipment or its receipt now and then.
        guard Int.random(in: 0..<6, using: &random) != 0 else { return }
        let receipt = receive(shipment, at: target)
        guard Int.random(in: 0..<6, using: &random) != 0 else { return }
        if let receipt { shards[id].receipts[move.move.id] = receipt }
    }

    @discardableResult
    mutating func receive(_ shipment: SlotMoveShipment, at target: Int) -> SlotMoveReceipt? {
        var staging = shards[target].staging[shipment.moveID]
        let entries = SlotMoveTarget.receive(shipment, ledger: shards[target].ledger, staging: &staging, at: now)
        shards[target].staging[shipment.moveID] = staging
        for entry in entries {
            switch entry {
            case .adopted(let id, _, _, _): stats.heldAtAdoption += shards[target].staging[id]?.slice?.unsettledCount ?? 0
            case .tailApplied(let id, let tail, _) where shards[target].ledger.incoming[id]?.isCommitted == true:
                stats.tailEntriesAfterCommit += tail.count
            default: break
            }
            shards[target].record(.move(entry))
            note("target \(target) journaled \(Self.describe(entry))")
        }
        return SlotMoveTarget.receipt(for: shipment.moveID, ledger: shards[target].ledger, staging: shards[target].staging[shipment.moveID])
    }

    /// The target's move turn: read the register and follow the outcome.
    mutating func targetTurn(shard id: Int) {
        guard shards[id].isUp else { return }
        shards[id].mapView = register.record
        for move in shards[id].ledger.incoming.values.sorted(by: { $0.move.id < $1.move.id }) {
            if let entry = SlotMoveTarget.follow(move, record: shards[id].mapView, at: now) {
                shards[id].record(.move(entry))
                note("target \(id) journaled \(Self.describe(entry))")
            }
        }
        // What is staged for a move that ended here is dropped with it.
        for moveID in shards[id].staging.keys where shards[id].ledger.incoming[moveID] == nil {
            shards[id].staging[moveID] = nil
        }
    }

    static func describe(_ entry: SlotMoveEntry) -> String {
        switch entry {
        case .adopted(let id, let slice, let through, let cut): "adopted \(id) (\(slice.count) bytes through \(through), cut \(cut.timeIntervalSince(start)))"
        case .tailApplied(let id, let entries, let through): "tail of \(id): \(entries.count) through \(through)"
        default: "\(entry)".prefix(80).description
        }
    }
}
