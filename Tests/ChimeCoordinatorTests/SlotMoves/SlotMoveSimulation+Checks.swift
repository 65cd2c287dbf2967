import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

@testable import ChimeCoordinator

/// What ``SlotMoveSimulation`` checks: at every step, that no recipient's writes are taken
/// and no recipient's occurrences are fired by two shards at once; after settling, the user's
/// guarantees — every acknowledged write is owned by exactly one shard and fires once under
/// one firing id, nothing cancelled comes back or fires, no slot is served by two shards —
/// and that the register's epochs and outcomes are sound.
extension SlotMoveSimulation {
    /// The invariants that hold at every step.
    func checkStep() {
        for recipient in Self.recipients {
            var accepting: [Int] = []
            var serving: [Int] = []
            for shard in shards {
                guard let state = shard.state else { continue }
                if state.ownershipRefusal(ControlRequest(command: .recipient(recipient)), at: now) == nil { accepting.append(shard.id) }
                if state.serves(recipient) { serving.append(shard.id) }
            }
            if accepting.count > 1 { fail("\(recipient)'s writes are taken by shards \(accepting) at once") }
            if serving.count > 1 { fail("\(recipient)'s occurrences are fired by shards \(serving) at once") }
        }
    }

    /// Everything comes up, faults stop, and every process runs until every write is
    /// acknowledged, every move is decided and followed by both shards, and everything due
    /// has fired and settled.
    func settle() {
        isFaulty = false
        for index in shards.indices {
            if shards[index].isFull { shards[index].setFull(false) }
            if !shards[index].isUp { restartStep(index) }
        }
        for index in movers.indices where !movers[index].isUp { movers[index].isUp = true }
        for round in 0..<900 {
            now = now.addingTimeInterval(2)
            for index in shards.indices {
                shards[index].sync()
                readRegisterStep(index)
                tickStep(index)
                while !shards[index].workerQueue.isEmpty { workerStep(index, losesAcks: false) }
                workerStep(index, losesAcks: false)
            }
            for index in movers.indices {
                for _ in 0..<4 { moverStep(index) }
            }
            for key in writes.keys.sorted() where writes[key].map({ $0.notBefore <= now }) == true { send(key) }
            if !failures.isEmpty { return }
            if round > 20 && isQuiet { return }
        }
        fail("did not settle: writes \(writes.count), movers \(movers.map { "\($0.move.id): \($0.result.map { "\($0)" } ?? ($0.isRefused ? "refused" : "running"))" }), register open \(register.record.open.keys.sorted()), ledgers idle \(shards.map { $0.state?.durable.moves.isIdle ?? false })")
    }

    /// Every write answered, every mover done, every ledger idle, nothing this shard serves
    /// due and nothing it dispatches unsettled.
    var isQuiet: Bool {
        guard writes.isEmpty, register.record.open.isEmpty, movers.allSatisfy({ $0.result != nil || $0.isRefused }) else { return false }
        return shards.allSatisfy { shard in
            guard let state = shard.state else { return false }
            let due = state.schedule.due(at: now, limit: 1) { state.serves($0.recipient) }
            let unsettled = state.unsettled.keys.contains { state.dispatches($0.recipient) }
            return state.durable.moves.isIdle && due.isEmpty && !unsettled && shard.workerQueue.isEmpty
        }
    }

    /// Every reminder each shard lists (`list` of every recipient, all states, page by page),
    /// with the shards that list it.
    func listings() -> [ReminderKey: [(shard: Int, reminder: Reminder)]] {
        var listed: [ReminderKey: [(shard: Int, reminder: Reminder)]] = [:]
        for index in shards.indices {
            var cursor: PageCursor?
            repeat {
                let request = ControlRequest(command: .list(ReminderFilter(), all: true, limit: 1000, cursor: cursor))
                guard case .reply(.listed(let page)) = shards[index].handle(request, from: Self.client, register: register.record, at: now) else {
                    fail("shard \(index) did not answer list")
                    return listed
                }
                for item in page.reminders { listed[item.reminder.key, default: []].append((index, item.reminder)) }
                cursor = page.nextCursor.flatMap { try? PageCursor(text: $0, expecting: .list) }
            } while cursor != nil
        }
        return listed
    }

    /// The invariants of a settled run.
    func check() {
        let record = register.record
        let map = record.map
        if !record.open.isEmpty { fail("moves still open: \(record.open.keys.sorted())") }
        let committed = record.outcomes.filter { if case .committed = $0.value { true } else { false } }
        if map.mapEpoch != 1 + UInt64(committed.count) { fail("map epoch \(map.mapEpoch) after \(committed.count) committed moves") }
        if committed[SlotMoveID("m1")] != nil && committed[SlotMoveID("m2")] != nil { fail("rival moves m1 and m2 of one slot both committed") }

        for (index, shard) in shards.enumerated() where shard.state?.entries.hasConsistentIndexes == false {
            fail("shard \(index)'s recipient index differs from one built from its entries")
        }
        let listed = listings()
        // No reminder is listed by two shards, nor by a shard the final map does not name.
        for (key, holders) in listed.sorted(by: { $0.key < $1.key }) {
            let owner = map.ownerID(ofSlot: map.slot(of: key.recipient))
            if holders.map(\.shard) != [owner].compactMap({ $0 }) {
                fail("\(key) is listed by shards \(holders.map(\.shard)), the map's owner is \(owner.map(String.init) ?? "none")")
            }
        }
        for (key, last) in acknowledged.sorted(by: { $0.key < $1.key }) where !uncertain.contains(key) {
            let holders = listed[key] ?? []
            switch last {
            case .cancelled(let at, let shard):
                if !holders.isEmpty { fail("\(key) was cancelled (acknowledged by shard \(shard) at t+\(Int(at.timeIntervalSince(Self.start)))s) but shards \(holders.map(\.shard)) list it") }
                let firedAfter = firstMade.filter { $0.key.key == key && $0.value > at }.map(\.key)
                if !firedAfter.isEmpty { fail("\(key) was cancelled but fired afterwards: \(firedAfter.sorted())") }
            case .scheduled(let reminder, let at, let shard):
                guard let held = holders.first, holders.count == 1 else {
                    fail("\(key) (\(reminder.content.body ?? ""), acknowledged by shard \(shard)) is listed by shards \(holders.map(\.shard))")
                    continue
                }
                if held.reminder.content.body != reminder.content.body {
                    fail("\(key) is held as \(held.reminder.content.body ?? "") on shard \(held.shard), acknowledged as \(reminder.content.body ?? "")")
                }
                // Every occurrence due since the write was acknowledged fired, or one of the
                // series was made a firing after it was due (a loop that did not turn for a
                // while fires a repeating reminder once and goes on from the next occurrence
                // after now).
                let series = occurrences(of: reminder).map { FiringID(key, dueAt: $0) }
                for firingId in series where firingId.dueAt > at && firingId.dueAt <= now {
                    let isCovered = delivered[firingId] != nil
                        || series.contains { delivered[$0] != nil && (firstMade[$0] ?? .distantPast) >= firingId.dueAt }
                    if !isCovered { fail("\(firingId) (of \(reminder.content.body ?? "")) was due and never delivered, nor a firing of its series made after it") }
                }
            }
        }
        // Every acknowledged location is held by exactly its recipient's final owner, as last
        // reported (an unanswered later report may have superseded it there).
        for (recipient, last) in locations.sorted(by: { $0.key < $1.key }) where !uncertainLocations.contains(recipient) {
            let holders = shards.filter { $0.state?.durable.triggers.locations[recipient] != nil && $0.state?.serves(recipient) == true }.map(\.id)
            let owner = map.ownerID(ofSlot: map.slot(of: recipient))
            if holders != [owner].compactMap({ $0 }) {
                fail("\(recipient)'s location (acknowledged by shard \(last.shard)) is held by shards \(holders), the map's owner is \(owner.map(String.init) ?? "none")")
            } else if let owner, shards[owner].state?.durable.triggers.locations[recipient] != last.report {
                fail("\(recipient)'s location on shard \(owner) is not the last acknowledged")
            }
        }
        // One firing id is made by one shard; every delivered id is an occurrence of a version sent.
        for (firingId, makers) in dispatchedBy.sorted(by: { $0.key < $1.key }) where makers.count > 1 && !uncertain.contains(firingId.key) {
            // A write retried after its answer was lost is applied again where the slots are
            // now (a replace, re-armed at the same instant): its occurrence fires again under
            // the same id, as on one shard. Only an occurrence made twice without that is a
            // slot served twice.
            if case .scheduled(_, let at, _)? = acknowledged[firingId.key], let made = firstMade[firingId], at >= made { continue }
            fail("\(firingId) was dispatched by shards \(makers.sorted())")
        }
        for firingId in delivered.keys.sorted() {
            let known = (sent[firingId.key] ?? []).contains { version in
                occurrences(of: version).contains { FiringID(firingId.key, dueAt: $0) == firingId }
            }
            if !known { fail("\(firingId) was delivered but is no occurrence of a reminder sent") }
        }
    }

    /// The fire instants of a reminder: a one-shot's one, a repeating one's three.
    func occurrences(of reminder: Reminder) -> [Date] {
        guard let recurrence = try? reminder.trigger.makeRecurrence() else { return [] }
        return (0..<(reminder.trigger.isRepeating ? 3 : 1)).compactMap { recurrence.occurrence(at: $0) }
    }
}
