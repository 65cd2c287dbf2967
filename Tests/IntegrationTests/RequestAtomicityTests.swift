import ChimeClient
import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 36 item 3: an unanswered request is applied wholly or not at all. A 1,000-reminder
/// `schedule` (about 4 MB) is sent and the coordinator killed with SIGKILL at a seeded random
/// point — when its journal segment has grown past a random size during the request's write,
/// or after a random delay from the send — then restarted: it holds 0 or all 1,000 of them.
/// 5 kills on every run (about 30 s); `CHIME_LONG_TESTS=1` makes 50 (`CHIME_ATOMIC_KILLS=N`
/// any number), and `CHIME_CRASH_SEED` repeats a run.
@Suite(.serialized) struct RequestAtomicityTests {
    static let reminders = 1_000
    /// Each reminder's body, in bytes: 1,000 of them make a request of about 4 MB.
    static let bodyBytes = 4_000

    /// How one kill went.
    struct Round: CustomStringConvertible {
        var number: Int
        /// How the kill was triggered: `size>N` (the segment grew past N bytes over its size
        /// before the send) or `delay N ms`.
        var trigger: String
        /// How far the segment had grown when the kill was sent, in bytes.
        var grownAtKill: Int
        /// Reminders of the request the restarted coordinator holds.
        var held: Int
        /// Whole records of an incomplete group the restart cut off (0: none, or the cut fell
        /// between groups).
        var incompleteGroupRecords: Int

        var description: String {
            "round \(number): \(trigger), grown \(grownAtKill) bytes at the kill -> \(held) held, incomplete group of \(incompleteGroupRecords) records cut"
        }
    }

    @Test func aLargeRequestKilledDuringItsWriteIsWhollyAppliedOrNotAtAll() throws {
        let environment = ProcessInfo.processInfo.environment
        let kills = environment["CHIME_ATOMIC_KILLS"].flatMap(Int.init) ?? (environment["CHIME_LONG_TESTS"] == "1" ? 50 : 5)
        let seed = environment["CHIME_CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        print("request atomicity: \(kills) kills, seed \(seed) (repeat with CHIME_CRASH_SEED=\(seed))")
        var random = SeededRandomNumberGenerator(seed: seed)
        let started = Date()
        var rounds: [Round] = []
        try withLocalCluster(workers: 0, coordinatorArguments: ["--store", "store"]) { cluster in
            let context = try Context()
            for number in 1...kills {
                let round = try Self.killDuringWrite(round: number, cluster: cluster, context: context, random: &random)
                print(round)
                #expect(round.held == 0 || round.held == Self.reminders, "\(round)")
                rounds.append(round)
                // A fresh store for the next round, so each recovery reads one request.
                #expect(cluster.stop("coordinator")?.status == 0)
                try FileManager.default.removeItem(atPath: cluster.directory.path("store"))
                try cluster.restart("coordinator")
                try cluster.waitForCoordinator(timeout: 30)
            }
        }
        let none = rounds.filter { $0.held == 0 }.count
        let all = rounds.filter { $0.held == Self.reminders }.count
        let cut = rounds.filter { $0.incompleteGroupRecords > 0 }.count
        print(
            "request atomicity: \(kills) kills in \(String(format: "%.1f", Date().timeIntervalSince(started))) s: \(none) held 0, \(all) held all \(Self.reminders), \(kills - none - all) held part; \(cut) restarts cut an incomplete group of whole records")
    }

    /// Sends the request, kills the coordinator at a random point, restarts it and counts.
    static func killDuringWrite(
        round number: Int, cluster: LocalCluster, context: Context, random: inout SeededRandomNumberGenerator
    ) throws -> Round {
        let recipient = RecipientID("atomic-\(number)")
        let due = Date().addingTimeInterval(30 * 86_400)
        let body = String(repeating: "x", count: bodyBytes)
        let batch = try (0..<reminders).map { index in
            try Durability.normalized(Reminder(
                id: ReminderID("big-\(number)-\(index)"), recipient: recipient,
                content: Content(title: "Reminder \(index)", body: body), trigger: Trigger(start: .instant(due))))
        }
        let request = WireCodec().encode(ControlRequest(requestId: "atomic-\(number)", command: .schedule(batch)))
        let segment = try StoreFiles.newest(in: cluster.directory.path("store/journal"), suffix: ".log")
        let before = try Self.size(of: segment)
        let pid = try #require(cluster.pid(of: "coordinator"))
        // Three kills in four wait for the request's own write; the rest come after a delay
        // from the send (during the transfer, the decoding, or the write).
        let expectedGrowth = reminders * (bodyBytes + 150)
        let bySize = Int.random(in: 0..<4, using: &random) < 3
        let threshold = Int.random(in: 1...expectedGrowth, using: &random)
        let delay = Double.random(in: 0...0.6, using: &random)

        // A DEALER of our own, closed (linger 0) before the restart, so nothing of the
        // request is sent again to the restarted coordinator.
        let dealer = try Socket(.dealer, context: context)
        try dealer.set(.linger(milliseconds: 0))
        try dealer.connect(to: cluster.controlEndpoint)
        _ = try dealer.send([Data(), request], dontWait: false)
        let sent = ContinuousClock.now
        var grown = 0
        if bySize {
            let deadline = sent + .seconds(60)
            while ContinuousClock.now < deadline {
                grown = try Self.size(of: segment) - before
                if grown >= threshold { break }
            }
        } else {
            while ContinuousClock.now < sent + .milliseconds(Int(delay * 1000)) {}
        }
        kill(pid, SIGKILL)
        grown = try Self.size(of: segment) - before
        cluster.crash("coordinator")
        dealer.close()

        try cluster.restart("coordinator")
        try cluster.waitForCoordinator(timeout: 60)
        let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(10), retries: 0)
        let status = try #require(try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result)
        let recovered = StoreFiles.lastLine(containing: "INFO coordinator: recovered", in: cluster.log(of: "coordinator"))
        return Round(
            number: number, trigger: bySize ? "size>\(threshold)" : "delay \(Int(delay * 1000)) ms", grownAtKill: grown,
            held: status.reminders["pending"] ?? 0,
            incompleteGroupRecords: recovered?.fields["incompleteGroupRecords"].flatMap(Int.init) ?? 0)
    }

    static func size(of path: String) throws -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else { throw CocoaError(.fileReadNoSuchFile) }
        return Int(status.st_size)
    }
}
