import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
import ChimeClient

/// The rounds of the `kill -9` test: schedule while crashing the coordinator and/or a
/// worker at a random moment, restart what was killed, then check what survived and what
/// was delivered.
struct CrashRounds {
    let cluster: LocalCluster
    let collector: EventCollector
    /// For checks: patient, with retries (a lost check request is harmless to resend).
    let client: ControlClient
    let ledger = RequestLedger()
    let catchUp = CatchUpLog()
    var kills: [String] = []
    var recoverySeconds: [Double] = []

    init(cluster: LocalCluster) throws {
        self.cluster = cluster
        collector = EventCollector(endpoint: cluster.eventsEndpoint)
        client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(2), retries: 3)
    }

    /// One round: 30 rich reminders (one in three repeating every minute) due 1–2 s ahead in
    /// one to three requests, while a second thread keeps scheduling small batches; a
    /// SIGKILL 20 ms–2.2 s in; a restart 0–400 ms later; then `check`.
    mutating func run(round: Int, random: inout SeededRandomNumberGenerator) throws {
        let victims = Self.victims(round: round, random: &random)
        let firstDue = Date().addingTimeInterval(1)
        let reminders = try (0..<30).map { index in
            try Durability.normalized(
                Durability.richReminder(id: "r\(round)-\(index)", index: index, round: round, due: firstDue + Double(index) / 30))
        }
        let requests = Self.split(reminders, into: Int.random(in: 1...3, using: &random))
        let streamSeed = random.next()
        let stop = StopFlag()
        let senders = DispatchGroup()
        let endpoint = cluster.controlEndpoint
        let ledger = ledger
        // A short timeout and no retry: a request cut off by a crash stays unacknowledged.
        DispatchQueue.global().async(group: senders) {
            guard let client = try? ControlClient(endpoint: endpoint, timeout: .seconds(1), retries: 0) else { return }
            for request in requests { ledger.schedule(request, round: round, with: client) }
        }
        DispatchQueue.global().async(group: senders) {
            var random = SeededRandomNumberGenerator(seed: streamSeed)
            guard let client = try? ControlClient(endpoint: endpoint, timeout: .seconds(1), retries: 0) else { return }
            var count = 0
            while !stop.isRaised {
                count += 1
                let due = Date().addingTimeInterval(Double.random(in: 0.3...1.5, using: &random))
                guard let batch = try? (0..<Int.random(in: 1...3, using: &random)).map({
                    try Durability.plainReminder(id: "s\(round)-\(count)-\($0)", due: due, recipient: "stream")
                }) else { preconditionFailure("a reminder that does not survive the codec") }
                ledger.schedule(batch, round: round, with: client)
                Thread.sleep(forTimeInterval: 0.01)
            }
        }

        let killAfter = Double.random(in: 0.02...2.2, using: &random)
        Thread.sleep(forTimeInterval: killAfter)
        for victim in victims { cluster.crash(victim) }
        let downFor = Double.random(in: 0...0.4, using: &random)
        Thread.sleep(forTimeInterval: downFor)
        for victim in victims { try cluster.restart(victim) }
        let recovery = try cluster.waitForCoordinator(timeout: 20)
        try cluster.waitForAliveWorkers(2, timeout: 20)
        stop.raise()
        try #require(senders.wait(timeout: .now() + 15) == .success, "the senders to finish")
        kills.append(victims.joined(separator: "+"))
        if victims.contains("coordinator") { recoverySeconds.append(recovery) }
        print(String(format: "round %2d: SIGKILL %@ at +%.2f s, restarted %.2f s later, answering after %.2f s",
                     round, victims.joined(separator: " and "), killAfter, downFor, recovery))
        try check(round: round)
    }

    /// Stored state first (acknowledged reminders exact, unacknowledged all-or-nothing),
    /// then delivery (every due occurrence at least once, duplicates under one firing id).
    func check(round: Int) throws {
        let context = "round \(round)"
        let listing = try Durability.listAll(cluster)
        let requests = ledger.all
        var lostOrChanged: [String] = []
        var halfApplied: [String] = []
        for request in requests {
            let present = request.reminders.filter { listing[$0.id] != nil }
            let mustAllExist = request.outcome == .acknowledged
            for reminder in (mustAllExist ? request.reminders : present) where listing[reminder.id]?.reminder != reminder {
                let stored = listing[reminder.id].map { "stored as \($0.reminder), sent as \(reminder)" } ?? "missing"
                lostOrChanged.append("\(reminder.id) (\(request.outcome), round \(request.round)): \(stored)")
            }
            if !mustAllExist && !present.isEmpty && present.count != request.reminders.count {
                halfApplied.append("\(present.map(\.id)) of \(request.reminders.map(\.id))")
            }
            if case .rejected(let reason) = request.outcome, !present.isEmpty {
                halfApplied.append("rejected (\(reason)) but stored: \(present.map(\.id))")
            }
        }
        // Counts, not the arrays, in the expectations: a failure prints the captured values.
        let lostCount = lostOrChanged.count
        let halfAppliedCount = halfApplied.count
        #expect(lostCount == 0, "\(context): \(lostOrChanged.count) reminders lost or changed, first: \(lostOrChanged.prefix(1))")
        #expect(halfAppliedCount == 0, "\(context): unacknowledged requests half applied: \(halfApplied.prefix(5))")
        let unknown = Set(listing.keys).subtracting(requests.flatMap { $0.reminders.map(\.id) })
        let unknownCount = unknown.count
        #expect(unknownCount == 0, "\(context): stored reminders nobody sent: \(unknown.prefix(5))")

        let dueThisRound = requests.filter { $0.round == round }.flatMap(\.reminders).compactMap { reminder -> Date? in
            if case .instant(let due) = reminder.trigger.start { return due }
            return nil
        }
        let cutoff = max(Date(), dueThisRound.max() ?? .distantPast)
        var requestOf: [ReminderID: SentRequest] = [:]
        for request in requests { for reminder in request.reminders { requestOf[reminder.id] = request } }
        let expected = Set(listing.values.flatMap { stored in
            Durability.dueFiringIDs(of: stored.reminder, from: Self.firstCertainOccurrence(of: stored.reminder, requestOf[stored.reminder.id]), through: cutoff)
        })
        func delivered() -> Set<FiringID> { Set((collector.received + catchUp.events).map(\.firing.firingId)) }
        do {
            try expectEventually(timeout: 20, interval: 0.1, "\(context): every due firing to reach a subscriber") {
                catchUp.fetch(with: client)
                return expected.isSubset(of: delivered())
            }
        } catch {
            let missing = expected.subtracting(delivered()).sorted()
            let deadLetters = try? client.send(ControlRequest(command: .deadLetters()), expecting: DeadLettersResult.self)
            let now = try? Durability.listAll(cluster)
            let details = missing.prefix(10).map { firing in
                let id = firing.reminder
                let listed = now?[id].map { "\($0.state), next \($0.nextFireAt.map(RFC3339.format) ?? "-"), delivered \($0.deliveredCount)" } ?? "?"
                let request = requestOf[id].map { "\($0.outcome), armed at \($0.armedAt[id].map(RFC3339.format) ?? "-")" } ?? "?"
                return "\(firing) (\(listed); request \(request))"
            }
            Issue.record("\(context): \(missing.count) due firings never arrived: \(details); dead letters: \(deadLetters?.result?.firings.map(\.firingId) ?? [])")
            throw error
        }

        let events = collector.received + catchUp.events
        Durability.expectDuplicatesShareTheirFiringID(events, context)
        var strays: [String] = []
        for event in events {
            guard let stored = listing[event.firing.reminderId] else {
                strays.append("\(event.firing.firingId) fired but its reminder is not stored")
                continue
            }
            if event.firing.content != stored.reminder.content {
                strays.append("\(event.firing.firingId) delivered other content than stored")
            }
            if !Durability.dueFiringIDs(of: stored.reminder, through: Date().addingTimeInterval(1)).contains(event.firing.firingId) {
                strays.append("\(event.firing.firingId) is no occurrence of its reminder")
            }
        }
        let strayCount = strays.count
        #expect(strayCount == 0, "\(context): \(strays.count) deliveries that match nothing stored: \(strays.prefix(5))")
    }

    func printSummary(seconds: Double) throws {
        let stored = Set(try Durability.listAll(cluster).keys)
        let requests = ledger.all
        let acknowledged = requests.filter { $0.outcome == .acknowledged }
        let unanswered = requests.filter { $0.outcome != .acknowledged }
        let heldUp = acknowledged.flatMap { request in
            request.reminders.filter { reminder in
                guard case .instant(let start) = reminder.trigger.start, let armed = request.armedAt[reminder.id] else { return false }
                return armed > start
            }
        }.count
        let live = collector.received
        let firings = Set((live + catchUp.events).map(\.firing.firingId))
        let log = cluster.log(of: "coordinator")
        func count(_ marker: String) -> Int { log.components(separatedBy: marker).count - 1 }
        let kinds = Dictionary(kills.map { ($0, 1) }, uniquingKeysWith: +).sorted { $0.key < $1.key }
        print("""
            kill -9 rounds: \(kills.count) in \(String(format: "%.1f", seconds)) s; kills \(kinds.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))
              requests: \(acknowledged.count) acknowledged (\(acknowledged.reduce(0) { $0 + $1.reminders.count }) reminders), \(unanswered.count) unanswered \
            (\(unanswered.filter { $0.reminders.allSatisfy { stored.contains($0.id) } }.count) of them applied in full, the others not at all); \
            \(heldUp) repeating reminders applied after their start, so armed at their next occurrence
              firings: \(firings.count) distinct; \(live.count - Set(live.map(\.firing.firingId)).count) duplicate live deliveries; \
            \(Set((live + catchUp.events).filter(\.firing.late).map(\.firing.firingId)).count) late; highest attempt \((live + catchUp.events).map(\.firing.attempt).max() ?? 0); \
            \(firings.subtracting(live.map(\.firing.firingId)).count) seen only through catch-up
              coordinator answering after restart: max \(String(format: "%.2f", recoverySeconds.max() ?? 0)) s; \
            \(count("INFO coordinator: snapshot written")) snapshots written, \
            \(count("snapshotSequence=")) of \(count("INFO coordinator: recovered")) starts recovered from a snapshot, \
            \(count("journal tail truncated")) torn journal tails truncated
            """)
    }

    /// The first occurrence `reminder` must fire at: the one its ok reply armed; without a
    /// reply, the start of a one-shot (a past one fires at once) but the second occurrence
    /// of a repeating reminder, which starts at its next occurrence when it is applied after
    /// its start (a request held up by a crash), and no crash holds one up for a minute.
    static func firstCertainOccurrence(of reminder: Reminder, _ request: SentRequest?) -> Date? {
        if let request, request.outcome == .acknowledged { return request.armedAt[reminder.id] ?? .distantFuture }
        guard case .instant(let start) = reminder.trigger.start else { return nil }
        return start.addingTimeInterval(reminder.trigger.repeatRule.map { Double($0.interval) * 60 } ?? 0)
    }

    /// Rounds 1–3 crash the coordinator, a worker, then both; later rounds pick at random.
    static func victims(round: Int, random: inout SeededRandomNumberGenerator) -> [String] {
        let worker = "worker-\(Int.random(in: 1...2, using: &random))"
        switch round {
        case 1: return ["coordinator"]
        case 2: return [worker]
        case 3: return ["coordinator", worker]
        default:
            switch Int.random(in: 0..<4, using: &random) {
            case 0, 1: return ["coordinator"]
            case 2: return [worker]
            default: return ["coordinator", worker]
            }
        }
    }

    static func split(_ reminders: [Reminder], into parts: Int) -> [[Reminder]] {
        let size = (reminders.count + parts - 1) / parts
        return stride(from: 0, to: reminders.count, by: size).map { Array(reminders[$0..<min($0 + size, reminders.count)]) }
    }
}
