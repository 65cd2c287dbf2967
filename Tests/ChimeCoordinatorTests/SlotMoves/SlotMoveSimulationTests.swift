import ChimeCore
import ChimeJournal
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

@testable import ChimeCoordinator

/// The slot-move simulator (``SlotMoveSimulation``) over the shipped code: seeded runs of
/// interleaved steps of three real `CoordinatorState`s behind the service's shell rules, the
/// register, real `SlotMoveDriver`s, workers and clients, with kill -9 (torn unsynced tails),
/// full disks, snapshots mid-move, restores of older journals, lost and repeated messages and
/// killed movers; each run settles and is checked.
///
/// `CHIME_MOVE_SEED=N` replays one seed with its trace (`CHIME_MOVE_WATCH=RECIPIENT/ID` prints
/// every line as it happens and every send, firing and dispatch of that reminder);
/// `CHIME_LONG_TESTS=1` runs the long form (`CHIME_MOVE_SEEDS`, default 5,000 seeds).
@Suite struct SlotMoveSimulationTests {
    static let environment = ProcessInfo.processInfo.environment

    struct Exploration {
        var failure: String?
        var runs = 0
        var steps = 0
        var outcomes: [String: Int] = [:]
        var totals: [String: Int] = [:]
    }

    /// Runs `seeds`, stopping at the first failure (reported with its trace).
    static func explore(_ seeds: some Sequence<UInt64>, sabotage: SlotMoveSimulation.Sabotage = .none) -> Exploration {
        var exploration = Exploration()
        for seed in seeds {
            let simulation = SlotMoveSimulation(seed: seed, sabotage: sabotage)
            if let watched = environment["CHIME_MOVE_WATCH"], environment["CHIME_MOVE_SEED"] != nil {
                // Replaying one seed: every line as it happens, and every event of one key
                // (`CHIME_MOVE_WATCH=u4/b`).
                simulation.echoesTrace = true
                let parts = watched.split(separator: "/").map(String.init)
                if parts.count == 2 { simulation.watchedKey = ReminderKey(ReminderID(parts[1]), of: RecipientID(parts[0])) }
            }
            var lengths = SeededRandomNumberGenerator(seed: seed ^ 0x5EED)
            simulation.run(steps: Int.random(in: 60...300, using: &lengths))
            exploration.runs += 1
            exploration.steps += simulation.stats.steps
            let outcome = simulation.register.record.outcomes[SlotMoveID("m1")].map { if case .committed = $0 { "m1 committed" } else { "m1 aborted" } }
                ?? "m1 undecided"
            exploration.outcomes[outcome, default: 0] += 1
            if simulation.register.record.outcomes[SlotMoveID("m1-back")] != nil { exploration.outcomes["moved back", default: 0] += 1 }
            let stats = simulation.stats
            for (name, value) in [
                ("crashes", stats.crashes), ("restores", stats.restores), ("fullDisks", stats.fullDisks), ("snapshots", stats.snapshots),
                ("lostMessages", stats.lostMessages), ("moverCrashes", stats.moverCrashes), ("writesAcknowledged", stats.writesAcknowledged),
                ("tryAgain", stats.tryAgain), ("wrongShard", stats.wrongShard), ("storeFull", stats.storeFull), ("deliveries", stats.deliveries),
                ("recoveryChecks", stats.recoveryChecks),
            ] {
                exploration.totals[name, default: 0] += value
            }
            if !simulation.failures.isEmpty {
                exploration.failure = """
                    slot-move simulation failed at seed \(seed) (replay: CHIME_MOVE_SEED=\(seed)); sabotage \(sabotage.rawValue)
                    \(simulation.failures.prefix(5).joined(separator: "\n"))
                    \(simulation.stats)
                    last steps:
                    \(simulation.trace.suffix(Self.environment["CHIME_MOVE_SEED"] == nil ? 50 : 400).joined(separator: "\n"))
                    """
                return exploration
            }
        }
        return exploration
    }

    @Test func boundedRunsKeepEveryAcknowledgedWrite() {
        let seeds: [UInt64] = Self.environment["CHIME_MOVE_SEED"].flatMap(UInt64.init).map { [$0] } ?? Array(1...150)
        let started = ContinuousClock.now
        let result = Self.explore(seeds)
        #expect(result.failure == nil, "\(result.failure ?? "")")
        print("slot-move simulation: \(result.runs) runs, \(result.steps) steps, \(result.outcomes.sorted { $0.key < $1.key }), \(result.totals.sorted { $0.key < $1.key }), \(ContinuousClock.now - started)")
        guard seeds.count > 1 else { return }
        // The runs reach both outcomes, moves back, and every fault.
        #expect(result.outcomes["m1 committed", default: 0] > 20)
        #expect(result.outcomes["m1 aborted", default: 0] > 5)
        #expect(result.outcomes["moved back", default: 0] > 3)
        for fault in ["crashes", "restores", "fullDisks", "lostMessages", "moverCrashes", "storeFull", "tryAgain"] {
            #expect(result.totals[fault, default: 0] > 10, "\(fault): \(result.totals[fault, default: 0])")
        }
    }

    @Test(.enabled(if: environment["CHIME_LONG_TESTS"] == "1")) func longRuns() {
        let count = Self.environment["CHIME_MOVE_SEEDS"].flatMap(UInt64.init) ?? 5_000
        let started = ContinuousClock.now
        let result = Self.explore(10_000...(10_000 + count - 1))
        #expect(result.failure == nil, "\(result.failure ?? "")")
        print("slot-move simulation long form: \(result.runs) runs, \(result.steps) steps, \(result.outcomes.sorted { $0.key < $1.key }), \(result.totals.sorted { $0.key < $1.key }), \(ContinuousClock.now - started)")
    }

    /// Each deliberately broken rule is found within the bounded seeds.
    @Test(arguments: SlotMoveSimulation.Sabotage.allCases.filter { $0 != .none })
    func theSimulationFindsABrokenRule(_ sabotage: SlotMoveSimulation.Sabotage) {
        let result = Self.explore(1...300, sabotage: sabotage)
        #expect(result.failure != nil, "\(sabotage.rawValue) went unnoticed over \(result.runs) runs")
        if let failure = result.failure { print("sabotage \(sabotage.rawValue) found after \(result.runs) runs: \(failure.split(separator: "\n").dropFirst().first ?? "")") }
    }
}
