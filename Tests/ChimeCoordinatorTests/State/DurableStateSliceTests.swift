import ChimeCore
import ChimeStore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// Slices of the durable state, on random states: the seeded model runs of the
/// crash-equivalence test, split by every subset of their recipients after every operation.
@Suite struct DurableStateSliceTests {
    /// Every subset of the model run's recipients (and one no state holds).
    static let subsets: [Set<RecipientID>] = [[], ["alice"], ["bob"], ["alice", "bob"], ["carol"]]

    @Test(arguments: 0..<4) func mergingTheSplitPartsGivesBackTheState(chunk: Int) throws {
        var splits = 0
        for seed in stride(from: UInt64(1 + chunk), through: 120, by: 4) {
            var run = ModelRun(seed: seed)
            for _ in 0..<(20 + Int(seed % 25)) {
                run.perform(run.makeOperation())
                let state = run.live.durable
                for subset in Self.subsets {
                    let (slice, rest) = state.split { subset.contains($0) }
                    try Self.checkHolds(slice, only: Array(subset), seed: seed)
                    try Self.checkHolds(rest, only: ["alice", "bob", "carol"].filter { !subset.contains($0) }, seed: seed)
                    // Retained events are the shard's stream (its seqs): they stay with the rest.
                    #expect(slice.deliveries.eventLog.events.isEmpty, "seed \(seed)")
                    #expect(rest.deliveries.eventLog == state.deliveries.eventLog, "seed \(seed)")
                    // What a source ships and what it keeps, made without the other half.
                    #expect(state.slice { subset.contains($0) } == slice, "seed \(seed), slice alone \(subset.sorted())")
                    var kept = state
                    kept.removeSlice { subset.contains($0) }
                    #expect(kept == rest, "seed \(seed), rest in place \(subset.sorted()): \(ModelRun.describe(rest, kept))")
                    var merged = rest
                    merged.merge(slice)
                    #expect(merged == state, "seed \(seed), slice \(subset.sorted()): \(ModelRun.describe(state, merged))")
                    // The other way round too: the slice takes in the rest.
                    var reversed = slice
                    reversed.merge(rest)
                    #expect(reversed == state, "seed \(seed), rest into slice \(subset.sorted()): \(ModelRun.describe(state, reversed))")
                    // Derived, so `==` does not see it: each part's recipient index is its entries'.
                    for (part, name) in [(slice, "slice"), (rest, "rest"), (kept, "kept"), (merged, "merged"), (reversed, "reversed")] {
                        #expect(part.schedule.entries.hasConsistentIndexes, "seed \(seed), \(name) of \(subset.sorted())")
                    }
                    splits += 1
                }
            }
        }
        #expect(splits > 500)
    }

    /// A slice encodes on its own (a snapshot of it decodes to it), and taken into a fresh
    /// state it is the whole of its recipients' data.
    @Test func aSliceEncodesOnItsOwnAndMovesIntoAnotherState() throws {
        var run = ModelRun(seed: 7)
        for _ in 0..<60 { run.perform(run.makeOperation()) }
        let state = run.live.durable
        let (slice, rest) = state.split { $0 == "alice" }
        let decoded = try DurableState.decodeSnapshot(slice.encodedSnapshot(takenAt: nil), seed: state.settings)
        #expect(decoded.state == slice)
        var receiver = DurableState(settings: state.settings)
        receiver.merge(decoded.state)
        #expect(receiver == slice)
        #expect(rest.schedule.entries.values.allSatisfy { $0.recipient != "alice" })
    }

    /// Checks that `state` holds data of `recipients` only.
    static func checkHolds(_ state: DurableState, only recipients: [RecipientID], seed: UInt64) throws {
        let allowed = Set(recipients)
        func check(_ recipient: RecipientID, _ what: String) {
            #expect(allowed.contains(recipient), "seed \(seed): \(what) of \(recipient) outside \(recipients)")
        }
        for entry in state.schedule.entries.values { check(entry.recipient, "a reminder") }
        for key in state.schedule.index { check(key.recipient, "an indexed key") }
        for recipient in state.schedule.caps.keys { check(recipient, "a cap") }
        for shared in state.deliveries.unsettled.values { check(shared.firing.recipient, "an unsettled firing") }
        for firing in state.deliveries.deadLetters.values { check(firing.recipient, "a dead letter") }
        for firing in state.deliveries.nagFirings.values { check(firing.recipient, "a nag") }
        for recipient in state.recipients.registered.keys { check(recipient, "a registration") }
        for recipient in state.recipients.ledgers.keys { check(recipient, "a ledger") }
        for job in state.actionJobs.unfinished { check(job.recipient, "a job") }
        for record in state.actionJobs.finished { check(record.job.recipient, "a finished job") }
        for answer in state.requestLog.taggedEntries { if let recipient = answer.recipient { check(recipient, "a reply") } }
    }
}
