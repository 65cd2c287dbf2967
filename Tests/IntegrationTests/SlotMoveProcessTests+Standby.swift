import ChimeClient
import ChimeCoordinator
import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Synchronization
import Testing

/// Issue 27, crash anywhere: a warm standby taking over either side resumes the move. Shards
/// 0 and 2 each run with a warm standby (`chime coordinator --standby` on the same store);
/// slots 0–1023 go 0 → 2 and back under the same load as the other tests, and at a seeded
/// moment of each direction the active source (or target) is killed -9 and not restarted: its
/// standby takes the store and binds the same endpoints, the mover goes on (or is run again,
/// when it gave up), and the same guarantees are checked. A new standby is started for the
/// shard taken over, so that the next round has one too.
extension SlotMoveProcessTests {
    enum MoveSide: String, Sendable { case source, target }

    @Test func aStandbyTakingOverTheSourceMidMoveResumesTheMove() throws {
        try moveWithStandbyTakeovers(killing: .source)
    }

    @Test func aStandbyTakingOverTheTargetMidMoveResumesTheMove() throws {
        try moveWithStandbyTakeovers(killing: .target)
    }

    /// One takeover, as the report counts it.
    struct Takeover: CustomStringConvertible {
        var shard: Int
        /// The kill's seeded moment: this many milliseconds after the `afterOpening`-th move opened.
        var afterOpening: Int
        var delayMilliseconds: Int
        /// Which move of the direction was open in the register when the active coordinator
        /// was killed (0–3), `nil` when none was (before the first opened, after a commit).
        var openMove: Int?
        /// The killed coordinator's part in the move just before the kill (``phase(of:)``).
        var phase: String
        /// From the SIGKILL to the first `ping` the standby answered, in milliseconds.
        var milliseconds: Int
        /// How the move ended: "committed" by the mover that ran across the takeover, or
        /// "rerun: …" when that mover exited without committing.
        var mover: String

        var description: String {
            "shard \(shard) killed \(delayMilliseconds) ms after move \(afterOpening) opened (move \(openMove.map(String.init) ?? "-") open, \(phase)) \(milliseconds) ms, \(mover)"
        }
    }

    /// `CHIME_MOVE_ROUNDS=N` rounds of 2 → 3 → 2 (the long form), `CHIME_MOVE_PROCESS_SEED=S`
    /// other kill moments.
    func moveWithStandbyTakeovers(killing side: MoveSide) throws {
        let rounds = max(1, ProcessInfo.processInfo.environment["CHIME_MOVE_ROUNDS"].flatMap(Int.init) ?? 1)
        let cluster = try LocalCluster(portCount: 3 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        do {
            let map = try Self.startTwoShardsWithRegister(cluster)
            let registerPath = cluster.directory.path("map-register.json")
            var active = [0: "shard-0", 2: "shard-2"]
            var standbyCount = 0
            var standbys: [Int: String] = [:]
            func startStandby(for shard: Int) throws {
                standbyCount += 1
                let name = "standby-\(shard)-\(standbyCount)"
                try cluster.spawn(name, ["coordinator", "--shard", String(shard), "--standby", "--store", "store-\(shard)"] + cluster.shardedArguments)
                standbys[shard] = name
            }
            func waitUntilWarm(_ shard: Int) throws {
                let name = try #require(standbys[shard])
                try expectEventually(timeout: 20, "\(name) to follow the journal") {
                    try cluster.checkChildren()
                    return cluster.log(of: name).contains("standby: warm state loaded")
                }
            }

            let recipients = (0..<40).map { RecipientID("load-\($0)") }
            let load = Load()
            load.run(seeds: map.shards.prefix(2).map(\.endpoints.control), recipients: recipients)
            try startStandby(for: 0)
            try Self.startThirdShard(cluster, map: map)
            try startStandby(for: 2)
            try waitUntilWarm(0)
            try waitUntilWarm(2)

            let seed = ProcessInfo.processInfo.environment["CHIME_MOVE_PROCESS_SEED"].flatMap(UInt64.init) ?? 2727
            var random = SeededRandomNumberGenerator(seed: seed)
            var takeovers: [Takeover] = []
            for _ in 0..<rounds {
                for target in [2, 0] {
                    let source = target == 2 ? 0 : 2
                    let victim = side == .source ? source : target
                    let decidedBefore = try Self.readRegister(registerPath).outcomes.count
                    let arguments = Self.moveArguments(to: target, cluster)
                    let mover = MoverRun()
                    mover.start(binary: cluster.binary, arguments)

                    // The kill: 0–150 ms after the k-th of the four moves opened (a move takes 200–300 ms).
                    let moveIndex = Int.random(in: 0...3, using: &random)
                    let delayMilliseconds = Int.random(in: 0...150, using: &random)
                    try expectEventually(timeout: 30, interval: 0.005, "move \(moveIndex) to shard \(target) to open") {
                        let record = try Self.readRegister(registerPath)
                        return record.outcomes.count + record.open.count > decidedBefore + moveIndex || mover.hasEnded
                    }
                    Thread.sleep(forTimeInterval: Double(delayMilliseconds) / 1000)
                    let record = try Self.readRegister(registerPath)
                    let openMove = record.open.isEmpty ? nil : record.outcomes.count - decidedBefore
                    let phase = Self.phase(of: map.shards[victim].endpoints.control)
                    let killedAt = Date()
                    cluster.crash(try #require(active[victim]))
                    try cluster.waitForCoordinator(at: map.shards[victim].endpoints.control, timeout: 20)
                    let milliseconds = Int(Date().timeIntervalSince(killedAt) * 1000)
                    let standby = try #require(standbys[victim])
                    let status = try ControlClient(endpoint: map.shards[victim].endpoints.control, timeout: .seconds(2), retries: 2)
                        .send(ControlRequest(command: .status), expecting: StatusReport.self).result
                    #expect(status?.pid == cluster.pid(of: standby), "\(standby) serves shard \(victim) now")
                    active[victim] = standby
                    try startStandby(for: victim)

                    var outcome = "committed"
                    let run = try #require(mover.wait(timeout: 60), "the mover to \(target) ended")
                    if run.status != 0 || Self.moveResult(run.output)?["outcome"] as? String != "committed" {
                        // The mover gave up across the takeover (or aborted): run it again.
                        outcome = "rerun after exit \(run.status): \(run.error.split(separator: "\n").last ?? "")"
                        let rerun = try LocalCluster.run(binary: cluster.binary, arguments, timeout: 50)
                        #expect(rerun.status == 0, "move to \(target), rerun: \(rerun.output) \(rerun.error)")
                        #expect(Self.moveResult(rerun.output)?["outcome"] as? String == "committed")
                    }
                    takeovers.append(Takeover(shard: victim, afterOpening: moveIndex, delayMilliseconds: delayMilliseconds, openMove: openMove, phase: phase, milliseconds: milliseconds, mover: outcome))
                    try waitUntilWarm(victim)
                    // The new owner serves and fires the slots for a while before they move again.
                    Thread.sleep(forTimeInterval: target == 2 ? 1 : 0.5)
                }
            }
            load.stop()
            let acknowledged = load.acknowledged
            #expect(load.refused.isEmpty, "\(load.refused.prefix(5))")
            if !load.refused.isEmpty { print(cluster.logs()) }
            #expect(acknowledged.count > 100)
            #expect(takeovers.count == 2 * rounds)
            #expect(takeovers.allSatisfy { $0.milliseconds < 5000 }, "\(takeovers)")

            try Self.expectBackToTwoShards(cluster, rounds: rounds)
            let context = "standby takes over the \(side.rawValue) mid-move"
            let (firings, duplicates) = try Self.expectNothingLost(acknowledged, map: map, context)
            print(
                "slot moves 2 → 3 → 2 × \(rounds), standby takes over the \(side.rawValue): \(acknowledged.count) reminders acknowledged (\(load.unanswered) unanswered, slowest \(Int(load.slowest * 1000)) ms), 0 lost; \(firings) firings, \(duplicates) duplicates (same firing id); takeovers: \(takeovers)")
        } catch {
            cluster.stop()
            print("slot move standby cluster failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }

    /// The coordinator's part in the moves in progress there, by its `move` status: a source
    /// "migrating" or "handed over", a target "importing", "adopted" or "committed"; "idle"
    /// with no move in progress, "?" without an answer.
    static func phase(of endpoint: String) -> String {
        guard let client = try? ControlClient(endpoint: endpoint, timeout: .milliseconds(500), retries: 0),
            let reply = try? client.send(ControlRequest(command: .move(.status())), expecting: SlotMoveStatus.self),
            let status = reply.result
        else { return "?" }
        let sent = status.ledger.outgoing.map { $0.cut == nil ? "migrating" : "handed over" }
        let received = status.ledger.incoming.map { incoming in
            if incoming.isCommitted { return "committed" }
            return incoming.cut != nil ? "adopted" : "importing"
        }
        return (sent + received).isEmpty ? "idle" : (sent + received).joined(separator: "+")
    }

    /// The map register file's record.
    static func readRegister(_ path: String) throws -> SlotMapRecord {
        try JSONDecoder().decode(SlotMapRecord.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A mover (`chime shards move`) run to completion on a thread of its own, so that the
    /// test kills a coordinator meanwhile.
    final class MoverRun: Sendable {
        typealias Result = (status: Int32, output: String, error: String)
        private let result = Mutex<Result?>(nil)
        private let ended = DispatchSemaphore(value: 0)

        var hasEnded: Bool { result.withLock { $0 != nil } }

        func start(binary: URL, _ arguments: [String]) {
            Thread.detachNewThread { [self] in
                let run = (try? LocalCluster.run(binary: binary, arguments, timeout: 50)) ?? (-1, "", "the mover did not start")
                result.withLock { $0 = run }
                ended.signal()
            }
        }

        /// Waits up to `timeout` seconds for the mover's exit.
        /// - Returns: its status and output; `nil` when it has not ended by then.
        func wait(timeout: Double) -> Result? {
            guard ended.wait(timeout: .now() + timeout) == .success else { return nil }
            return result.withLock { $0 }
        }
    }
}
