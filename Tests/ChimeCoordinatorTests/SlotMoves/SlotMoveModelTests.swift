import ChimeCore
import ChimeJournal
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// The model test of the slot-move protocol: seeded schedules of interleaved steps of the
/// source, the target, one or two movers, a client, due firings, deliveries with lost
/// acknowledgements, and crashes and restarts of every process at every step, over the real
/// `DurableState` folds; each settled schedule is checked (see `SlotMoveModel.check()`).
///
/// `CHIME_MOVE_SEED=N` replays one seed with its trace; `CHIME_LONG_TESTS=1` runs the long form
/// (`CHIME_MOVE_SEEDS`, default 20,000 seeds).
@Suite struct SlotMoveModelTests {
    static let environment = ProcessInfo.processInfo.environment

    /// Runs seeds `seeds`, returning the first failure's report and the totals.
    static func explore(_ seeds: some Sequence<UInt64>, sabotage: SlotMoveModel.Sabotage = .none)
        -> (failure: String?, totals: SlotMoveModel.Stats, schedules: Int, outcomes: [String: Int])
    {
        var totals = SlotMoveModel.Stats()
        var schedules = 0
        var outcomes: [String: Int] = [:]
        for seed in seeds {
            var model = SlotMoveModel(seed: seed, sabotage: sabotage)
            var lengths = SeededRandomNumberGenerator(seed: seed ^ 0x5EED)
            model.run(steps: Int.random(in: 40...240, using: &lengths))
            schedules += 1
            totals.steps += model.stats.steps
            totals.writesAccepted += model.stats.writesAccepted
            totals.writesRefused += model.stats.writesRefused
            totals.crashes += model.stats.crashes
            totals.committed += model.stats.committed
            totals.aborted += model.stats.aborted
            totals.duplicates += model.stats.duplicates
            totals.tryAgain += model.stats.tryAgain
            totals.wrongShard += model.stats.wrongShard
            totals.handOvers += model.stats.handOvers
            totals.heldAtAdoption += model.stats.heldAtAdoption
            totals.tailEntriesAfterCommit += model.stats.tailEntriesAfterCommit
            let outcome = model.register.record.outcomes[SlotMoveID("m1")].map { "\($0)" } ?? "m1 not decided"
            outcomes[outcome.hasPrefix("committed") ? "m1 committed" : outcome == "aborted" ? "m1 aborted" : outcome, default: 0] += 1
            if !model.failures.isEmpty {
                let report = """
                    slot-move model failed at seed \(seed) (replay: CHIME_MOVE_SEED=\(seed)); sabotage \(sabotage.rawValue)
                    \(model.failures.prefix(5).joined(separator: "\n"))
                    last steps:
                    \(model.trace.suffix(40).joined(separator: "\n"))
                    """
                return (report, totals, schedules, outcomes)
            }
        }
        return (nil, totals, schedules, outcomes)
    }

    @Test func boundedExplorationKeepsEveryAcknowledgedReminderAndFiring() {
        let seeds: [UInt64] = Self.environment["CHIME_MOVE_SEED"].flatMap(UInt64.init).map { [$0] } ?? Array(1...200)
        let started = ContinuousClock.now
        let result = Self.explore(seeds)
        #expect(result.failure == nil, "\(result.failure ?? "")")
        print("slot-move model: \(result.schedules) schedules, \(result.totals.steps) steps, \(result.outcomes), \(result.totals), \(ContinuousClock.now - started)")
        guard seeds.count > 1 else { return }
        // The exploration reaches both outcomes, crashes and refused writes.
        #expect(result.outcomes["m1 committed", default: 0] > 30)
        #expect(result.outcomes["m1 aborted", default: 0] > 10)
        #expect(result.totals.crashes > 300)
        #expect(result.totals.writesRefused > 100)
    }

    @Test(.enabled(if: environment["CHIME_LONG_TESTS"] == "1")) func longExploration() {
        let count = Self.environment["CHIME_MOVE_SEEDS"].flatMap(UInt64.init) ?? 20_000
        let started = ContinuousClock.now
        let result = Self.explore(1_000...(1_000 + count - 1))
        #expect(result.failure == nil, "\(result.failure ?? "")")
        print("slot-move model long form: \(result.schedules) schedules, \(result.totals.steps) steps, \(result.outcomes), \(result.totals), \(ContinuousClock.now - started)")
    }

    /// Each deliberately broken rule is found within the bounded seeds.
    @Test(arguments: [SlotMoveModel.Sabotage.sourceFiresAfterCut, .sourceDeletesBeforeCommit, .moverCommitsEarly])
    func theExplorerFindsABrokenRule(_ sabotage: SlotMoveModel.Sabotage) {
        let result = Self.explore(1...300, sabotage: sabotage)
        #expect(result.failure != nil, "\(sabotage.rawValue) went unnoticed over \(result.schedules) schedules")
    }
}
