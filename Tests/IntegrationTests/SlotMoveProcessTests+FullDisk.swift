import ChimeClient
import ChimeCoordinator
import ChimeCore
import ChimeJournal
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing

/// Issue 36, end to end with real processes and real full disks: a shard's store on a small
/// tmpfs fills at the worst moments of a move, and the shard is killed -9 there. The mover is
/// the shipped `SlotMoveDriver` run round by round in this process (over the register file
/// and control sockets, as `chime shards move` runs it), so the disk fills exactly between
/// two of its steps; `chime shards move` itself then reruns the move.
///
/// Checked each time: no acknowledged reminder is lost (each listed exactly once, on the
/// shard the register's map names), nothing cancelled is listed or fires again, and a rerun
/// of the mover ends in bounded time.
extension SlotMoveProcessTests {
    /// The probe's first loss: the target's disk fills before (round 1) and during (round 2)
    /// the move, then the target is killed -9. It refuses every step with `store_full`, so the
    /// mover never sees an adoption that is not durable and aborts; the source keeps the slots.
    @Test func aTargetWhoseDiskFillsRefusesTheMoveAndLosesNothingWhenKilled() throws {
        try targetDiskFills(withStandby: false)
    }

    /// The same with a warm standby on the target's store, which takes over at the kill.
    @Test func aTargetWhoseDiskFillsLosesNothingWhenItsStandbyTakesOver() throws {
        try targetDiskFills(withStandby: true)
    }

    /// The probe's second loss: the source's disk fills after the target adopted the slice,
    /// so the source's release cannot be written; the move commits, the source is killed -9
    /// and restarted on its full disk. It must not serve, list or fire the moved slots;
    /// reminders cancelled on the new owner never fire and do not come back when the slots
    /// move back.
    @Test func aSourceWhoseDiskFillsAtTheReleaseNeverServesTheMovedSlotsAgain() throws {
        let cluster = try LocalCluster(portCount: 3 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        guard let tmpfs = try Self.smallTmpfs(for: "store-0", in: cluster) else { return }
        do {
            let map = try Self.startTwoShardsWithRegister(cluster)
            try Self.startThirdShard(cluster, map: map)
            let client = try ClusterClient(seeds: map.shards.prefix(2).map(\.endpoints.control), timeout: .seconds(2), retries: 3)
            // Reminders on slots 0–1023 (shard 0's), due once the disk is full and the move is over.
            // 30 s: the move, the fill, the kill and the cancels take about 15 s here.
            let due = Durability.wholeMilliseconds(Date().addingTimeInterval(30))
            let moving = try Self.reminders(count: 120, on: 0...1023, map: map, due: due, prefix: "s")
            #expect(try client.schedule(moving, requestId: "moving").ok)
            let move = SlotMove(id: SlotMoveID("full-source"), slots: Set(0...1023), source: 0, target: 2, slotCount: map.slotCount)
            let mover = try InProcessMover(cluster: cluster, map: map)
            // Round by round until the target holds the slice durably; then the source's disk
            // fills (its journal's last page still has room for a small entry), the mover
            // commits, and writes to the source's other slots use that room up at once, before
            // the source reads the commit in the register (about once a second) and journals
            // its release.
            let (adopted, _) = try mover.drive(move, until: { step, _, target in target?.incoming[move.id]?.isAdopted == true || step == .finished(.aborted) })
            #expect(adopted != .finished(.aborted))
            try tmpfs.fill(with: "filler")
            let (committing, _) = try mover.drive(move, until: { step, _, _ in step == .commit(move.id) || step == .finished(.aborted) })
            #expect(committing == .commit(move.id))
            try Self.writeUntilStoreFull(to: map.shards[0].endpoints.control, slots: 1024...2047, map: map)
            let result = try mover.finish(move, deadline: Date().addingTimeInterval(2))
            #expect(result.outcome == .committed(mapEpoch: 2), "\(result)")
            // The source could not write its release: it still holds the move (or released it
            // in memory only); killed now, its journal has the hand-over and no release.
            cluster.crash("shard-0")
            // Its journal kept the hand-over and not the release.
            var journaled = ""
            for segment in try FileManager.default.contentsOfDirectory(atPath: "\(tmpfs.path)/journal") {
                journaled += try String(contentsOfFile: "\(tmpfs.path)/journal/\(segment)", encoding: .isoLatin1)
            }
            let isReleaseLost = journaled.contains("handedOver") && !journaled.contains("released")
            try cluster.restart("shard-0")
            try cluster.waitForCoordinator(at: map.shards[0].endpoints.control, timeout: 20)
            let source = try ControlClient(endpoint: map.shards[0].endpoints.control, timeout: .seconds(2), retries: 2)
            // Recovered, it holds the moved slice again (the journal has no release); from its
            // first read of the register on, it serves none of it: not listed, not fired.
            try expectEventually(timeout: 10, "the restarted source to read the register") {
                (try? source.send(ControlRequest(command: .status), expecting: StatusReport.self))?.result?.mapEpoch == 2
            }
            #expect(try Self.listedIDs(on: source).isDisjoint(with: moving.map(\.id)))
            // Half of them are cancelled on the new owner.
            let cancelled = Array(moving.prefix(60))
            for reminder in cancelled {
                let reply = try client.cancel(ReminderFilter(ids: [reminder.id], recipient: reminder.recipient))
                #expect(reply.result.cancelled == [reminder.id])
            }
            // Space returns: the source writes its release by itself (its read of the register).
            try FileManager.default.removeItem(atPath: "\(tmpfs.path)/filler")
            try expectEventually(timeout: 15, "the source to release the moved slots") {
                let status = try? mover.status(of: 0)
                return status?.ledger.ended[move.id.rawValue] == .released && status?.ledger.outgoing.isEmpty == true
            }
            // Past the due instant: the kept reminders fired on shard 2, the cancelled ones nowhere.
            let kept = Array(moving.dropFirst(60))
            let events = try Self.waitForFirings(of: kept, map: map, timeout: 60)
            let cancelledIDs = Set(cancelled.map(\.id))
            #expect(events.filter { cancelledIDs.contains($0.event.firing.reminderId) }.isEmpty)
            #expect(Set(events.map(\.shard)) == [2], "fired by shards \(Set(events.map(\.shard)))")
            // The slots move back: the cancelled reminders do not come back with them.
            let back = try LocalCluster.run(
                binary: cluster.binary, ["shards", "move", "0-1023", "--to", "0", "--batch-slots", "1024", "--json", "--timeout", "30"] + cluster.shardedArguments,
                timeout: 60)
            #expect(back.status == 0, "\(back.output) \(back.error)")
            let onSource = try Self.listedIDs(on: source)
            #expect(onSource.isDisjoint(with: cancelledIDs))
            #expect(Set(kept.map(\.id)).isSubset(of: onSource))
            // A rerun has nothing to do and says so at once.
            let started = Date()
            let rerun = try LocalCluster.run(
                binary: cluster.binary, ["shards", "move", "0-1023", "--to", "0", "--json", "--timeout", "30"] + cluster.shardedArguments, timeout: 60)
            #expect(rerun.status == 0 && Self.moveResult(rerun.output)?["alreadyThere"] as? Int == 1024, "\(rerun.output)")
            #expect(isReleaseLost, "the source journaled its release before its disk filled: the case was not reached")
            print("full source disk at the release: 120 moved, the release lost in the kill: \(isReleaseLost); 60 cancelled on the new owner (none fired or came back), \(kept.count) fired once by shard 2; rerun \(String(format: "%.2f", Date().timeIntervalSince(started))) s")
        } catch {
            cluster.stop()
            print("full-disk slot move cluster failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }

    func targetDiskFills(withStandby: Bool) throws {
        let cluster = try LocalCluster(portCount: 3 * LocalCluster.portsPerShard)
        defer { cluster.stop() }
        guard let tmpfs = try Self.smallTmpfs(for: "store-2", in: cluster) else { return }
        do {
            let map = try Self.startTwoShardsWithRegister(cluster)
            try Self.startThirdShard(cluster, map: map)
            var standby = "shard-2"
            func startStandby(_ number: Int) throws {
                standby = "standby-2-\(number)"
                try cluster.spawn(standby, ["coordinator", "--shard", "2", "--standby", "--store", "store-2"] + cluster.shardedArguments)
                try expectEventually(timeout: 20, "\(standby) to follow the journal") {
                    try cluster.checkChildren()
                    return cluster.log(of: standby).contains("standby: warm state loaded")
                }
            }
            if withStandby { try startStandby(1) }
            var active = "shard-2"
            let client = try ClusterClient(seeds: map.shards.prefix(2).map(\.endpoints.control), timeout: .seconds(2), retries: 3)
            var acknowledged = try Self.reminders(count: 200, on: 0...1023, map: map, due: Date().addingTimeInterval(3600), prefix: "t")
            #expect(try client.schedule(acknowledged, requestId: "target-full-1").ok)
            let mover = try InProcessMover(cluster: cluster, map: map)
            var outcomes: [String] = []
            for round in 1...2 {
                let move = SlotMove(id: SlotMoveID("full-target-\(round)"), slots: Set(0...1023), source: 0, target: 2, slotCount: map.slotCount)
                if round == 1 {
                    // Before: the target's disk is full when the move opens.
                    try tmpfs.fill(with: "filler")
                } else {
                    // During: the target journaled `importing`; its disk fills before the slice comes.
                    _ = try mover.drive(move, until: { _, _, target in target?.incoming[move.id] != nil })
                    try tmpfs.fill(with: "filler")
                }
                // Writes to the moving slots go on meanwhile, acknowledged by the source.
                let during = try Self.reminders(count: 20, on: 0...1023, map: map, due: Date().addingTimeInterval(3600), prefix: "t\(round)-")
                #expect(try client.schedule(during, requestId: "target-full-during-\(round)").ok)
                acknowledged += during
                let result = try mover.finish(move, deadline: Date().addingTimeInterval(2))
                #expect(result.outcome == .aborted, "round \(round): \(result)")
                outcomes.append("\(result.outcome)")
                // The target dies with its disk still full.
                cluster.crash(active)
                if withStandby {
                    active = standby
                    try cluster.waitForCoordinator(at: map.shards[2].endpoints.control, timeout: 20)
                    try startStandby(round + 1)
                } else {
                    try cluster.restart(active)
                    try cluster.waitForCoordinator(at: map.shards[2].endpoints.control, timeout: 20)
                }
                try FileManager.default.removeItem(atPath: "\(tmpfs.path)/filler")
                // Nothing moved: every acknowledged reminder is on shard 0, once.
                try Self.expectListedOnce(acknowledged, map: try Self.registerMap(cluster), "target full \(round == 1 ? "before" : "during") the move")
            }
            // With space back, `chime shards move` moves them, in bounded time.
            let started = Date()
            let run = try LocalCluster.run(
                binary: cluster.binary, ["shards", "move", "0-1023", "--to", "2", "--batch-slots", "1024", "--json", "--timeout", "30"] + cluster.shardedArguments,
                timeout: 60)
            let seconds = Date().timeIntervalSince(started)
            #expect(run.status == 0, "\(run.output) \(run.error)")
            let finalMap = try Self.registerMap(cluster)
            #expect(finalMap.ownerID(ofSlot: 0) == 2)
            try Self.expectListedOnce(acknowledged, map: finalMap, "after the move")
            print("full target disk\(withStandby ? " with a warm standby" : ""): \(acknowledged.count) acknowledged, 0 lost; moves \(outcomes); the rerun moved them in \(String(format: "%.2f", seconds)) s")
        } catch {
            cluster.stop()
            print("full-disk slot move cluster failed: \(error)\n\(cluster.logs())")
            throw error
        }
    }
}

/// The shipped mover (`SlotMoveDriver`) in the test's process, over the cluster's register
/// file and one control client per shard, run round by round.
final class InProcessMover {
    let register: SlotMapRegisterFile
    var driver: SlotMoveDriver
    private let clients: [Int: ControlClient]

    init(cluster: LocalCluster, map: ShardMap) throws {
        register = SlotMapRegisterFile(path: cluster.directory.path("map-register.json"))
        var clients: [Int: ControlClient] = [:]
        for shard in map.shards {
            clients[shard.id] = try ControlClient(endpoint: shard.endpoints.control, timeout: .seconds(2), retries: 1)
        }
        self.clients = clients
        driver = SlotMoveDriver(register: register) { shard, move in
            guard let client = clients[shard] else { throw WireError(.notFound, "no shard \(shard)") }
            let reply = try client.send(ControlRequest(requestId: UUID().uuidString, command: .move(move)), expecting: SlotMoveStatus.self)
            guard let status = reply.result else { throw reply.error ?? WireError(.malformed, "no result") }
            return status
        }
        driver.settleGrace = 2
    }

    /// A shard's move status.
    func status(of shard: Int) throws -> SlotMoveStatus {
        guard let client = clients[shard] else { throw WireError(.notFound, "no shard \(shard)") }
        let reply = try client.send(ControlRequest(command: .move(.status())), expecting: SlotMoveStatus.self)
        guard let status = reply.result else { throw reply.error ?? WireError(.malformed, "no result") }
        return status
    }

    /// Runs rounds of `move` until `condition` holds for the step taken and the two shards'
    /// ledgers after it (at most 20 s).
    func drive(
        _ move: SlotMove, until condition: (SlotMoverAction, SlotMoveLedger?, SlotMoveLedger?) -> Bool
    ) throws -> (SlotMoverAction, SlotMoveDriver.Result?) {
        var memory = SlotMoveDriver.Memory()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let round = try driver.round(move, deadline: Date().addingTimeInterval(60), now: Date(), memory: &memory)
            let step: SlotMoverAction
            switch round {
            case .acted(let taken), .idle(let taken): step = taken
            case .finished(let result): return (.finished(result.outcome), result)
            }
            let source = (try? status(of: move.source)).flatMap { try? SlotMoveLedger.viewed($0.ledger) }
            let target = (try? status(of: move.target)).flatMap { try? SlotMoveLedger.viewed($0.ledger) }
            if condition(step, source, target) { return (step, nil) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        throw DeadlineExceeded(what: "\(move) to reach the condition", seconds: 20)
    }

    /// Runs `move` to its end (the driver's `run`), at most until `deadline` and its grace.
    func finish(_ move: SlotMove, deadline: Date = Date().addingTimeInterval(30)) throws -> SlotMoveDriver.Result {
        try driver.run(move, deadline: deadline)
    }
}

extension SlotMoveProcessTests {
    /// An 8 MiB tmpfs mounted on `store` in `cluster`'s directory, or nil (printed) where this
    /// machine cannot mount one (the test is then skipped).
    static func smallTmpfs(for store: String, in cluster: LocalCluster) throws -> Tmpfs? {
        do {
            return try Tmpfs(at: cluster.directory.path(store), size: "8m")
        } catch let unavailable as TmpfsUnavailable {
            print("full-disk slot move test skipped: \(unavailable.reason)")
            return nil
        }
    }

    /// Schedules large reminders for recipients on `slots` at `endpoint` until one is refused
    /// `store_full` (at most 2,000 requests).
    static func writeUntilStoreFull(to endpoint: String, slots: ClosedRange<Int>, map: ShardMap) throws {
        let client = try ControlClient(endpoint: endpoint, timeout: .seconds(1), retries: 0)
        let recipient = try #require((0..<10_000).lazy.map { RecipientID("pad-\($0)") }.first { slots.contains(map.slot(of: $0)) })
        for request in 0..<2_000 {
            let reminder = try Durability.normalized(Reminder(
                id: ReminderID("pad-\(request)"), recipient: recipient, content: Content(body: String(repeating: "p", count: 2_000)),
                trigger: Trigger(start: .instant(Durability.wholeMilliseconds(Date().addingTimeInterval(86_400))))))
            do throws(WireError) {
                _ = try client.send(ControlRequest(command: .schedule([reminder])), expecting: ScheduleResult.self)
            } catch where error.code == .storeFull {
                return
            } catch where error.code == .unavailable {
                // No answer: the write waits for space; the next request is refused.
                continue
            } catch {
                throw error
            }
        }
        Issue.record("\(endpoint) never refused a write with store_full")
    }

    /// `count` one-shot reminders due at `due` for recipients on `slots` (by `map`).
    static func reminders(count: Int, on slots: ClosedRange<Int>, map: ShardMap, due: Date, prefix: String) throws -> [Reminder] {
        var recipients: [RecipientID] = []
        var n = 0
        while recipients.count < 12 {
            let recipient = RecipientID("fd-\(n)")
            if slots.contains(map.slot(of: recipient)) { recipients.append(recipient) }
            n += 1
        }
        return try (0..<count).map { index in
            try Durability.normalized(Reminder(
                id: ReminderID("\(prefix)\(index)"), recipient: recipients[index % recipients.count], content: Content(body: "full disk"),
                trigger: Trigger(start: .instant(Durability.wholeMilliseconds(due)))))
        }
    }

    /// The register file's map.
    static func registerMap(_ cluster: LocalCluster) throws -> ShardMap {
        try SlotMapRegisterFile.decode(Data(contentsOf: URL(fileURLWithPath: cluster.directory.path("map-register.json")))).map
    }

    /// The ids every reminder `client`'s shard lists.
    static func listedIDs(on client: ControlClient) throws -> Set<ReminderID> {
        var ids = Set<ReminderID>()
        var cursor: PageCursor?
        repeat {
            let page = try client.send(ControlRequest(command: .list(ReminderFilter(), all: true, limit: 1000, cursor: cursor)), expecting: ListResult.self)
            for listing in page.result?.reminders ?? [] { ids.insert(listing.reminder.id) }
            cursor = try page.result?.nextCursor.map { text throws(WireError) in try PageCursor(text: text, expecting: .list) }
        } while cursor != nil
        return ids
    }

    /// Every one of `reminders` is listed exactly once, by the shard `map` names.
    static func expectListedOnce(_ reminders: [Reminder], map: ShardMap, _ context: String) throws {
        var holders: [ReminderID: [Int]] = [:]
        for shard in map.shards {
            let client = try ControlClient(endpoint: shard.endpoints.control, timeout: .seconds(3), retries: 2)
            for id in try listedIDs(on: client) { holders[id, default: []].append(shard.id) }
        }
        let misplaced = reminders.filter { holders[$0.id] != [map.shard(of: $0.recipient)?.id ?? -1] }
        #expect(misplaced.isEmpty, "\(context): \(misplaced.count) of \(reminders.count): \(misplaced.prefix(5).map { "\($0.id) on \(holders[$0.id] ?? [])" })")
    }

    /// The fire events of every shard's catch-up, with the shard that published each, once the
    /// firings of all of `reminders` are among them.
    static func waitForFirings(of reminders: [Reminder], map: ShardMap, timeout: Double) throws -> [(shard: Int, event: FireEvent)] {
        let expected = Set(reminders.flatMap { Durability.dueFiringIDs(of: $0, through: .distantFuture) })
        let clients = try map.shards.map { ($0.id, try ControlClient(endpoint: $0.endpoints.control, timeout: .seconds(2), retries: 2)) }
        var seen: [(shard: Int, event: FireEvent)] = []
        try expectEventually(timeout: timeout, interval: 0.2, "the firings of \(reminders.count) reminders") {
            seen = []
            for (shard, client) in clients {
                var after: UInt64 = 0
                while let result = (try? client.send(
                    ControlRequest(command: .events(after: after, recipient: nil, limit: 1000)), expecting: EventsResult.self))?.result
                {
                    seen += result.events.map { (shard, $0) }
                    guard result.through > after, !result.events.isEmpty else { break }
                    after = result.through
                }
            }
            return expected.isSubset(of: Set(seen.map(\.event.firing.firingId)))
        }
        return seen
    }
}
