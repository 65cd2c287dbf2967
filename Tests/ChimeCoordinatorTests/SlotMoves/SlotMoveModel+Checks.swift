import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

@testable import ChimeCoordinator

/// Settling a schedule and the properties checked after it.
extension SlotMoveModel {
    /// Brings every process up and runs them, deliveries always acknowledged, until every
    /// move is decided and ended on both shards and everything due has fired and settled.
    mutating func settle() {
        for id in shards.indices where !shards[id].isUp { shards[id].restart(reading: register.record) }
        for index in movers.indices { movers[index].isUp = true }
        for round in 0..<400 {
            advanceClock(by: 5)
            for index in movers.indices where movers[index].outcome == nil {
                moverStep(index, isLagSmall: true)
                moverStep(index, isLagSmall: true)
            }
            for id in shards.indices {
                targetTurn(shard: id)
                sourceTurn(shard: id)
                tick(shard: id)
                while !shards[id].dispatchable.isEmpty { deliver(shard: id, ackLost: false) }
            }
            if !failures.isEmpty { return }
            if round > 60 && isQuiet { return }
        }
        fail("did not settle in 400 rounds: movers \(movers.map { String(describing: $0.outcome) }), ledgers idle \(shards.map(\.ledger.isIdle))")
    }

    /// Every mover done, every ledger idle, nothing armed due and nothing unsettled.
    var isQuiet: Bool {
        movers.allSatisfy { $0.outcome != nil } && shards.allSatisfy { shard in
            shard.ledger.isIdle && shard.durable.deliveries.unsettled.isEmpty
                && (shard.durable.schedule.timer.nextDeadline.map { $0 > now } ?? true)
        }
    }

    /// The properties of a settled schedule.
    mutating func check() {
        let map = register.record.map
        if !register.record.open.isEmpty { fail("moves still open: \(register.record.open.keys.sorted())") }
        let committed = register.record.outcomes.filter { if case .committed = $0.value { true } else { false } }
        if map.mapEpoch != 1 + UInt64(committed.count) {
            fail("map epoch \(map.mapEpoch) after \(committed.count) committed moves")
        }
        // Two movers of overlapping slots cannot both win.
        let committedMoves = movers.map(\.move).filter { committed[$0.id] != nil }
        if Set(committedMoves.map(\.id)).count > 1 { fail("both \(committedMoves.map(\.id)) committed on the same slot") }
        // Every shard holds only what the final map gives it.
        for shard in shards {
            for entry in shard.durable.schedule.entries.values where map.ownerID(ofSlot: map.slot(of: entry.recipient)) != shard.id {
                fail("shard \(shard.id) holds a reminder of \(entry.recipient) on slot \(map.slot(of: entry.recipient)), owned by \(String(describing: map.ownerID(ofSlot: map.slot(of: entry.recipient))))")
            }
            if !shard.staging.values.allSatisfy({ $0.slice == nil }) { fail("shard \(shard.id) still stages a slice") }
        }
        // Every acknowledged location is on exactly its recipient's owner, as last reported.
        for (recipient, report) in acknowledgedLocations.sorted(by: { $0.key < $1.key }) {
            let holders = shards.filter { $0.durable.triggers.locations[recipient] != nil }.map(\.id)
            let owner = map.ownerID(ofSlot: map.slot(of: recipient))
            if holders != [owner].compactMap({ $0 }) {
                fail("\(recipient)'s location is held by shards \(holders), owner \(String(describing: owner))")
            } else if let owner, shards[owner].durable.triggers.locations[recipient] != report {
                fail("\(recipient)'s location on shard \(owner) is not the last acknowledged")
            }
        }
        // Every acknowledged reminder is on exactly its owner, as last acknowledged.
        for (key, last) in acknowledged.sorted(by: { $0.key < $1.key }) {
            let holders = shards.filter { $0.durable.schedule.entries[key] != nil }.map(\.id)
            guard let (reminder, at) = last else {
                if !holders.isEmpty { fail("\(key) was cancelled (acknowledged) but shards \(holders) hold it") }
                continue
            }
            let owner = map.ownerID(ofSlot: map.slot(of: key.recipient))
            guard holders == [owner].compactMap({ $0 }) else {
                fail("\(key) (acknowledged \(reminder.content.body ?? "")) is held by shards \(holders), owner \(String(describing: owner))")
                continue
            }
            if let held = owner.flatMap({ shards[$0].durable.schedule.entries[key]?.reminder }), held != reminder {
                fail("\(key) is held as \(held.content.body ?? "") on shard \(String(describing: owner)), acknowledged as \(reminder.content.body ?? "")")
            }
            // Every occurrence of the last version due by now fired, with its firing id.
            for instant in occurrences(of: reminder, placedAt: at) where instant <= now {
                let firingId = FiringID(key, dueAt: instant)
                if delivered[firingId] == nil { fail("\(firingId) (of \(reminder.content.body ?? "")) was due and never delivered") }
            }
        }
        // Every delivered firing id is an occurrence of an acknowledged version.
        for firingId in delivered.keys.sorted() {
            let known = (versions[firingId.key] ?? []).contains { version in
                occurrences(of: version, placedAt: .distantPast).contains { FiringID(firingId.key, dueAt: $0) == firingId }
            }
            if !known { fail("\(firingId) was delivered but is no occurrence of an acknowledged reminder") }
        }
        // No occurrence of one version was made a firing on two shards.
        for (firing, makers) in made.sorted(by: { $0.key < $1.key }) where makers.count > 1 {
            fail("\(firing) was fired by shards \(makers.sorted())")
        }
    }

    /// The fire instants of a reminder placed at `placedAt`: a one-shot's only one, a
    /// repeating one's from `placedAt` on (as `place` arms it).
    func occurrences(of reminder: Reminder, placedAt: Date) -> [Date] {
        guard let recurrence = try? reminder.trigger.makeRecurrence() else { return [] }
        guard reminder.trigger.isRepeating else { return recurrence.occurrence(at: 0).map { [$0] } ?? [] }
        return (0..<3).compactMap { recurrence.occurrence(at: $0) }.filter { $0 >= placedAt }
    }
}
