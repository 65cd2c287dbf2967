import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

@testable import ChimeCoordinator

/// The movers' steps and the faults.
extension SlotMoveModel {
    /// A mover reads (the register and both shards' ledgers) and decides; its next step acts
    /// on that read (a compare-and-swap with the version it read, or a request to a shard).
    mutating func moverStep(_ index: Int, isLagSmall: Bool) {
        guard movers[index].isUp, movers[index].outcome == nil else { return }
        let move = movers[index].move
        guard let read = movers[index].read else {
            let record = register.record
            let source = shards[move.source].isUp ? shards[move.source].ledger : nil
            let target = shards[move.target].isUp ? shards[move.target].ledger : nil
            let step = SlotMover.nextStep(
                for: move, record: record, source: source, target: target, isLagSmall: isLagSmall, at: now,
                deadline: movers[index].deadline, pause: 20)
            movers[index].read = (record, step)
            return
        }
        movers[index].read = nil
        var step = read.step
        if sabotage == .moverCommitsEarly, case .pauseSource(let id, _) = step {
            // Broken on purpose: committed before the target adopted anything.
            step = .commit(id)
        }
        switch step {
        case .open(let move):
            if let next = read.record.opening(move) { swap(read.record, next, by: index, "opened \(move.id)") }
        case .commit(let id):
            if let next = read.record.committing(id) { swap(read.record, next, by: index, "committed \(id)") }
        case .abort(let id):
            if let next = read.record.aborting(id) { swap(read.record, next, by: index, "aborted \(id)") }
        case .startSource(let move):
            guard shards[move.source].isUp else { return }
            if let entry = SlotMoveSource.start(move, shard: move.source, ledger: shards[move.source].ledger, record: register.record, at: now) {
                shards[move.source].record(.move(entry))
                note("source \(move.source) migrating \(move.id)")
            }
        case .startTarget(let move):
            guard shards[move.target].isUp else { return }
            if let entry = SlotMoveTarget.start(move, shard: move.target, ledger: shards[move.target].ledger, record: register.record, at: now) {
                shards[move.target].record(.move(entry))
                note("target \(move.target) importing \(move.id)")
            }
        case .pauseSource(let id, let until):
            guard shards[move.source].isUp, shards[move.source].ledger.outgoing[id]?.isHandedOver == false else { return }
            shards[move.source].pausedUntil[id] = until
            note("source \(move.source) paused \(id)")
        case .finished, .refused:
            movers[index].outcome = step
        case .wait:
            break
        }
    }

    /// A compare-and-swap on the register, checking what every winning write must keep: the
    /// map epoch never falls, a decided outcome never changes, no slot is in two open moves.
    mutating func swap(_ read: SlotMapRecord, _ next: SlotMapRecord, by mover: Int, _ what: String) {
        let before = register.record
        guard register.compareAndSwap(expectedVersion: read.version, next) else {
            note("mover \(mover) lost a compare-and-swap (\(what))")
            return
        }
        let after = register.record
        note("mover \(mover) \(what); map epoch \(after.map.mapEpoch)")
        if after.map.mapEpoch < before.map.mapEpoch { fail("the map epoch fell from \(before.map.mapEpoch) to \(after.map.mapEpoch)") }
        for (id, outcome) in before.outcomes where after.outcomes[id] != outcome {
            fail("the outcome of \(id) changed from \(outcome) to \(String(describing: after.outcomes[id]))")
        }
        let open = after.open.values.sorted { $0.id < $1.id }
        for (index, move) in open.enumerated() {
            for other in open[(index + 1)...] where !move.slots.isDisjoint(with: other.slots) {
                fail("moves \(move.id) and \(other.id) are open on the same slots")
            }
        }
        do {
            try after.map.validate()
        } catch {
            fail("the committed map does not validate: \(error)")
        }
        switch after.outcomes.count - before.outcomes.count {
        case 1 where after.map.mapEpoch > before.map.mapEpoch: stats.committed += 1
        case 1: stats.aborted += 1
        default: break
        }
    }

    /// A kill -9 of a shard (checked: its journal rebuilds exactly what it held) or a mover.
    mutating func crashSomething() {
        let victim = Int.random(in: 0..<(shards.count + movers.count), using: &random)
        if victim < shards.count {
            guard shards[victim].isUp else { return }
            if shards[victim].recovered() != shards[victim].durable {
                fail("shard \(victim): the state rebuilt from its journal differs from the live one")
            }
            shards[victim].crash()
            note("shard \(victim) killed")
        } else {
            movers[victim - shards.count].isUp = false
            movers[victim - shards.count].read = nil
            note("mover \(victim - shards.count) killed")
        }
        stats.crashes += 1
    }

    mutating func restartSomething() {
        let victim = Int.random(in: 0..<(shards.count + movers.count), using: &random)
        if victim < shards.count {
            guard !shards[victim].isUp else { return }
            shards[victim].restart(reading: register.record)
            note("shard \(victim) restarted")
        } else {
            movers[victim - shards.count].isUp = true
        }
    }
}
