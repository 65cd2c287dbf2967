import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeTestSupport
import ChimeWire
import Foundation

@testable import ChimeCoordinator

/// The steps of ``SlotMoveSimulation``: clients, loops, workers, movers and faults.
extension SlotMoveSimulation {
    static let client = ClientAddress(routing: [Data("client".utf8)])
    static let repeating = RecurrenceRule.minutelyThrice

    /// A new write for a key without one in flight: usually a new version of the reminder,
    /// sometimes its cancel.
    func newWrite() {
        let key = ReminderKey(Self.reminderIDs.randomElement(using: &random)!, of: Self.recipients.randomElement(using: &random)!)
        guard writes[key] == nil else { return }
        var reminder: Reminder?
        if acknowledged[key] == nil || Int.random(in: 0..<10, using: &random) >= 3 {
            let due = now.addingTimeInterval(Double(Int.random(in: 2...90, using: &random)))
            let isRepeating = Int.random(in: 0..<4, using: &random) == 0
            let trigger = Trigger(start: .instant(due), recurrenceRule: isRepeating ? Self.repeating : nil, misfire: .fireAll)
            let made = Reminder(id: key.id, recipient: key.recipient, content: Content(body: "v\(stats.steps)-\(Int.random(in: 0..<1000, using: &random))"), trigger: trigger)
            reminder = made
            sent[key, default: []].append(made)
        }
        writes[key] = Write(key: key, reminder: reminder, requestId: nextRequestId(), notBefore: now)
    }

    /// The client sends (or sends again, same `requestId`) one write due for sending, to the
    /// owner its cached map names.
    func clientStep() {
        let due = writes.values.filter { $0.notBefore <= now }.map(\.key).sorted()
        guard let key = due.randomElement(using: &random) else {
            newWrite()
            return
        }
        send(key)
    }

    /// Sends the write of `key` once; returns whether it was acknowledged.
    @discardableResult
    func send(_ key: ReminderKey) -> Bool {
        guard var write = writes[key] else { return true }
        let owner = clientMap.ownerID(ofSlot: clientMap.slot(of: key.recipient)) ?? 0
        let command: ControlRequest.Command = write.reminder.map { .schedule([$0]) } ?? .cancel(ReminderFilter(ids: [key.id], recipient: key.recipient))
        let answer = shards[owner].handle(
            ControlRequest(requestId: write.requestId, command: command), from: Self.client, register: register.record,
            syncsInline: syncsInline(), at: now)
        drainDispatches(of: owner)
        if key == watchedKey { note("client: \(write.requestId) \(write.reminder?.content.body ?? "cancel") to shard \(owner): \(answer)") }
        func acknowledge() {
            acknowledged[key] = write.reminder.map { .scheduled($0, at: now, shard: owner) } ?? .cancelled(at: now, shard: owner)
            writes[key] = nil
            stats.writesAcknowledged += 1
            note("client: \(write.reminder == nil ? "cancel" : "schedule \(write.reminder?.content.body ?? "")") of \(key) acknowledged by shard \(owner)")
        }
        switch answer {
        case .reply(.scheduled), .reply(.cancelled):
            acknowledge()
            return true
        case .encoded(let body):
            // A remembered reply sent again, or a refusal while the store is full.
            let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
            if object?["ok"] as? Bool == true {
                acknowledge()
                return true
            }
            let code = (object?["error"] as? [String: Any])?["code"] as? String
            if code == WireError.Code.storeFull.rawValue {
                stats.storeFull += 1
                write.notBefore = now.addingTimeInterval(1)
            } else {
                fail("\(key): its request \(write.requestId) was answered \(String(decoding: body, as: UTF8.self)) by shard \(owner)")
            }
        case .reply(.failed(let error)) where error.code == .notFound && write.reminder == nil:
            acknowledge()
            return true
        case .reply(.failed(let error)) where error.code == .wrongShard:
            stats.wrongShard += 1
            clientMap = register.record.map
        case .reply(.failed(let error)) where error.code == .tryAgain:
            stats.tryAgain += 1
            write.notBefore = now.addingTimeInterval(Double(error.retryAfterMilliseconds ?? 50) / 1000)
        case .reply(.failed(let error)) where error.code == .storeFull:
            stats.storeFull += 1
            write.notBefore = now.addingTimeInterval(1)
        case .noReply:
            stats.noReply += 1
            write.notBefore = now.addingTimeInterval(1)
        case .reply(let other):
            fail("\(key): unexpected answer \(other) from shard \(owner)")
        }
        if writes[key] != nil { writes[key] = write }
        return false
    }

    /// A recipient reports where it is (issue 41) to the shard the client's map names; an
    /// acknowledged report must end on the recipient's final owner.
    func locateStep() {
        let recipient = Self.recipients.randomElement(using: &random)!
        let owner = clientMap.ownerID(ofSlot: clientMap.slot(of: recipient)) ?? 0
        let report = LocationReport(
            point: GeoPoint(latitude: 52.5 + Double(Int.random(in: 0..<100, using: &random)) / 1000, longitude: 13.4), accuracy: 10,
            at: now.roundedToMillisecond)
        if let last = locations[recipient], last.report.at >= report.at { return }
        let request = ControlRequest(
            requestId: nextRequestId(), command: .trigger(.locate(recipient, point: report.point, accuracy: report.accuracy, at: report.at)))
        switch shards[owner].handle(request, from: Self.client, register: register.record, syncsInline: syncsInline(), at: now) {
        case .reply(.trigger):
            locations[recipient] = (report, now, owner)
            note("client: location of \(recipient) acknowledged by shard \(owner)")
        case .reply(.failed(let error)) where error.code == .wrongShard:
            clientMap = register.record.map
        case .reply(.failed(let error)) where [.tryAgain, .storeFull].contains(error.code):
            break
        case .noReply:
            // Unanswered: applied or not; a later acknowledged report supersedes it.
            uncertainLocations.insert(recipient)
        case .reply(let other):
            fail("location of \(recipient): unexpected answer \(other) from shard \(owner)")
        case .encoded:
            // Refused while the store is full (a location report is a change).
            break
        }
        drainDispatches(of: owner)
    }

    func tickStep(_ shard: Int) {
        shards[shard].tick(syncsInline: syncsInline(), at: now)
        drainDispatches(of: shard)
    }

    func readRegisterStep(_ shard: Int) {
        shards[shard].readRegister(register.record)
    }

    func workerStep(_ shard: Int, losesAcks: Bool) {
        for firing in shards[shard].work(deliveringUpTo: Int.random(in: 1...8, using: &random), losesAcks: losesAcks, at: now) {
            delivered[firing.firingId, default: 0] += 1
            stats.deliveries += 1
            if delivered[firing.firingId, default: 0] > 1 { stats.redeliveries += 1 }
        }
        drainDispatches(of: shard)
    }

    func moverStep(_ index: Int) {
        guard movers[index].result == nil, !movers[index].isRefused else { return }
        if !movers[index].isUp {
            // A killed mover is run again: it remembers nothing.
            movers[index].isUp = true
            movers[index].memory = SlotMoveDriver.Memory()
            note("mover \(movers[index].move.id) rerun")
        }
        let move = movers[index].move
        if sabotage == .moverCommitsEarly, let record = Optional(register.record), record.open[move.id] != nil,
            shards[move.source].state?.durable.moves.outgoing[move.id]?.isHandedOver == true, let next = record.committing(move.id)
        {
            _ = try? register.compareAndSwap(expectedVersion: record.version, next)
        }
        do {
            let round = try movers[index].driver.round(move, deadline: movers[index].deadline, now: now, memory: &movers[index].memory)
            switch round {
            case .acted(let step): note("mover \(move.id): \(step)")
            case .idle: break
            case .finished(let result):
                movers[index].result = result
                note("mover \(move.id): finished \(result)")
                if case .committed = result.outcome { stats.committed += 1 } else { stats.aborted += 1 }
                if move.id == SlotMoveID("m1"), movers.count == 1, case .committed = result.outcome, Int.random(in: 0..<2, using: &random) == 0 {
                    // The slots come back: the source's old copy of them must not return.
                    addMover(SlotMove(id: SlotMoveID("m1-back"), slots: move.slots, source: move.target, target: move.source, slotCount: move.slotCount))
                }
            }
        } catch where error.code == .invalidArgument {
            movers[index].isRefused = true
            stats.refused += 1
            note("mover \(move.id): refused (\(error.message))")
        } catch {
            fail("mover \(move.id): \(error)")
        }
        for shard in shards.indices { drainDispatches(of: shard) }
    }

    func crashStep(_ shard: Int) {
        guard shards[shard].isUp else { return }
        stats.recoveryChecks += 1
        if let difference = shards[shard].recoveryDifference() {
            fail("shard \(shard): the state its store recovers differs from the live one: \(difference.prefix(3000))")
        }
        let torn = Int.random(in: 0...3, using: &random)
        let journalBefore = shards[shard].journal.count
        let durableBefore = shards[shard].durableCount
        shards[shard].crash(keepingTorn: torn)
        stats.crashes += 1
        note("shard \(shard): journal \(journalBefore) entries, \(durableBefore) durable, \(shards[shard].journal.count) kept")
        note("shard \(shard): kill -9 (journal \(shards[shard].journal.count), full \(shards[shard].isFull))")
    }

    func restartStep(_ shard: Int) {
        guard !shards[shard].isUp else { return }
        shards[shard].boot(at: now)
        note("shard \(shard): restarted at epoch \(shards[shard].state?.identity.epoch ?? 0)")
        drainDispatches(of: shard)
    }

    func fullDiskStep(_ shard: Int) {
        let full = !shards[shard].isFull
        shards[shard].setFull(full)
        if full { stats.fullDisks += 1 }
        note("shard \(shard): disk \(full ? "full" : "free again")")
    }

    func snapshotStep(_ shard: Int) {
        shards[shard].takeSnapshot(at: now)
        stats.snapshots += 1
    }

    func moverCrashStep(_ index: Int) {
        guard movers[index].isUp, movers[index].result == nil else { return }
        movers[index].isUp = false
        stats.moverCrashes += 1
        note("mover \(movers[index].move.id): kill -9")
    }

    /// An operator restores an older copy of a shard's store (a backup): the journal is cut
    /// at a random point. What it acknowledged after that point is lost by the restore, not by
    /// the protocol, so those keys leave the exact checks; what a move made durable on the
    /// target before its commit stays the target's business.
    func restoreStep(_ shard: Int) {
        if shards[shard].isUp { shards[shard].crash(keepingTorn: 0) }
        let count = shards[shard].journal.count
        let kept = Int.random(in: 0...count, using: &random)
        let cut = kept < count ? shards[shard].submittedAt[kept] : now
        for (key, last) in acknowledged {
            switch last {
            case .scheduled(_, let at, let by), .cancelled(let at, let by):
                if by == shard && at >= cut { uncertain.insert(key) }
            }
        }
        for (recipient, last) in locations where last.shard == shard && last.at >= cut { uncertainLocations.insert(recipient) }
        // A target restored to before its adoption of a committed move loses the move's slots.
        let lostAdoptions = shards[shard].journal.suffix(from: kept).compactMap { entry -> SlotMoveID? in
            if case .slotMove(.adopted(let id, _, _)) = entry { id } else { nil }
        }
        for id in lostAdoptions {
            guard let move = movers.first(where: { $0.move.id == id })?.move else { continue }
            for key in acknowledged.keys where move.covers(key.recipient) { uncertain.insert(key) }
            for recipient in locations.keys where move.covers(recipient) { uncertainLocations.insert(recipient) }
        }
        shards[shard].restore(keeping: kept)
        stats.restores += 1
        note("shard \(shard): restored to \(kept) of \(count) journal entries")
    }
}

extension RecurrenceRule {
    /// `FREQ=MINUTELY;COUNT=3`.
    static let minutelyThrice: RecurrenceRule = {
        do throws(ValidationError) {
            return try RecurrenceRule(parsing: "FREQ=MINUTELY;COUNT=3")
        } catch {
            preconditionFailure("\(error)")
        }
    }()
}
