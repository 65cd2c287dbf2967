import ChimeClient
import ChimeCore
import ChimeWire
import Foundation
import Synchronization
import Testing
import ZeroMQ

/// The cluster client against fake shards (in-process ROUTER stubs): routing by slot,
/// schedule split and merge, `wrong_shard` redirects, scatter-gather and `partial`.
@Suite struct ClusterClientTests {
    /// Three fake shards serving `map`, each answering other requests with `answer`.
    struct Rig {
        let context: Context
        let map: ShardMap
        let shards: [FakeShard]
        let client: ClusterClient

        init(
            tag: String, count: Int = 3, silent: Set<Int> = [], retries: Int = 0, map given: ShardMap? = nil,
            answer: @escaping @Sendable (FakeShard, ControlRequest) -> Data? = { _, _ in nil }
        ) throws {
            let context = try Context()
            let map = given ?? fakeMap(tag: tag, shards: count)
            let shards = try (0..<count).map { id in
                try FakeShard(id: id, context: context, tag: tag) { shard, request in
                    if silent.contains(shard.id) { return nil }
                    if request.command == .map { return FakeShard.ok(request, map) }
                    return answer(shard, request)
                }
            }
            self.context = context
            self.map = map
            self.shards = shards
            client = try ClusterClient(
                seeds: [shards[0].endpoint], timeout: .milliseconds(300), retries: retries, context: context)
        }

        /// How many `cancel` requests each shard received.
        var cancelsReceived: [[ControlRequest]] {
            shards.map { shard in shard.requests.filter { if case .cancel = $0.command { true } else { false } } }
        }

        func stop() {
            for shard in shards { shard.stop() }
            context.shutdown()
        }
    }

    @Test func routesEachRequestToItsRecipientsShard() throws {
        let map = fakeMap(tag: "route", shards: 3)
        let rig = try Rig(tag: "route") { shard, request in
            guard case .recipient(let id) = request.command else { return nil }
            // As a real shard: a recipient of another shard's slot is refused with its owner.
            if let owner = map.shard(of: id)?.id, owner != shard.id { return FakeShard.wrongShard(request, owner: owner, epoch: 1) }
            return FakeShard.ok(request, BadgeResult(recipient: id, badge: shard.id, changed: false))
        }
        defer { rig.stop() }
        #expect(rig.map.slot(of: "alice") == 654)
        #expect(rig.map.slot(of: "bob") == 1748)
        for shard in 0..<3 {
            let recipient = recipient(on: shard, of: rig.map)
            let (reply, _) = try rig.client.send(ControlRequest(command: .recipient(recipient)), expecting: BadgeResult.self)
            #expect(reply.result?.badge == shard)
        }
        // Shard 0 (the seed) answered its recipient before any map was asked for; shard 1's
        // recipient was first sent there too, refused, and the map asked for once.
        #expect(rig.shards.map { $0.requests.filter { $0.command != .map }.count } == [2, 1, 1])
        #expect(rig.shards.map { $0.requests.filter { $0.command == .map }.count } == [1, 0, 0])
        #expect(rig.client.map?.shards.count == 3)
    }

    /// A request about one recipient costs one round trip while no map is cached: it goes
    /// to the seed (or to its owner in the configured map) and the map is asked for only when
    /// a shard answers `wrong_shard` or a scatter needs it.
    @Test func aRoutedRequestMakesNoMapRoundTripUntilWrongShard() throws {
        let tag = "direct"
        let map = fakeMap(tag: tag, shards: 2)
        let rig = try Rig(tag: tag, count: 2) { shard, request in
            switch request.command {
            case .recipient(let id), .badge(let id, _):
                if let owner = map.shard(of: id)?.id, owner != shard.id { return FakeShard.wrongShard(request, owner: owner, epoch: 1) }
                return FakeShard.ok(request, BadgeResult(recipient: id, badge: shard.id, changed: false))
            case .schedule(let reminders):
                return FakeShard.ok(request, ScheduleResult(scheduled: reminders.map {
                    .init(id: $0.id, replaced: false, state: .pending, nextFireAt: nil)
                }))
            default: return nil
            }
        }
        defer { rig.stop() }
        let on = (0..<2).map { recipient(on: $0, of: map) }
        func operations(_ shard: Int) -> [ControlOperation] { rig.shards[shard].requests.map(\.operation) }

        // The seed's own recipient: one request each, no map.
        _ = try rig.client.send(ControlRequest(command: .recipient(on[0])), expecting: BadgeResult.self)
        _ = try rig.client.schedule([fakeReminder("s", of: on[0])])
        #expect(operations(0) == [.recipient, .schedule])
        #expect(rig.client.map == nil)

        // A configured map routes straight to the owner, still without asking for the map.
        let hinted = try ClusterClient(
            seeds: [rig.shards[0].endpoint], timeout: .milliseconds(300), retries: 0, context: rig.context, routingHint: map)
        let (reply, _) = try hinted.send(ControlRequest(command: .recipient(on[1])), expecting: BadgeResult.self)
        #expect(reply.result?.badge == 1)
        #expect(operations(1) == [.recipient])
        #expect(hinted.map == nil)

        // Another shard's recipient sent to the seed: refused, the map asked for, resent.
        let (moved, _) = try rig.client.send(ControlRequest(command: .badge(on[1], 3)), expecting: BadgeResult.self)
        #expect(moved.result?.badge == 1)
        #expect(operations(0) == [.recipient, .schedule, .badge, .map])
        #expect(operations(1) == [.recipient, .badge])
        #expect(rig.client.map?.mapEpoch == 1)
    }

    @Test func splitsAScheduleByShardAndMergesInTheCallersOrder() throws {
        let rig = try Rig(tag: "split") { _, request in
            guard case .schedule(let reminders) = request.command else { return nil }
            return FakeShard.ok(request, ScheduleResult(scheduled: reminders.map {
                .init(id: ReminderID("\($0.id.rawValue)@\($0.recipient.rawValue)"), replaced: false, state: .pending, nextFireAt: nil)
            }))
        }
        defer { rig.stop() }
        let on = (0..<3).map { recipient(on: $0, of: rig.map) }
        let reminders = [
            fakeReminder("a", of: on[1]), fakeReminder("b", of: on[0]), fakeReminder("c", of: on[2]), fakeReminder("d", of: on[1]),
        ]
        let reply = try rig.client.schedule(reminders, requestId: "split-1")
        #expect(reply.result?.scheduled.map(\.id.rawValue) == ["a@\(on[1])", "b@\(on[0])", "c@\(on[2])", "d@\(on[1])"])
        let scheduleRequests = rig.shards.map { $0.requests.filter { $0.operation == .schedule } }
        #expect(scheduleRequests.map { $0.map(\.requestId) } == [["split-1"], ["split-1"], ["split-1"]])
        guard case .schedule(let onShard1) = scheduleRequests[1].first?.command else {
            Issue.record("shard 1 got no schedule")
            return
        }
        #expect(onShard1.map(\.id.rawValue) == ["a", "d"])
    }

    @Test func reindexesARefusedRemindersFieldToTheCallersIndex() throws {
        let rig = try Rig(tag: "refuse") { shard, request in
            guard case .schedule(let reminders) = request.command else { return nil }
            if shard.id == 2 {
                return FakeShard.refuse(request, WireError(.invalidArgument, "bad zone", field: "reminder.trigger.timeZone"))
            }
            return FakeShard.ok(request, ScheduleResult(scheduled: reminders.map {
                .init(id: $0.id, replaced: false, state: .pending, nextFireAt: nil)
            }))
        }
        defer { rig.stop() }
        let on = (0..<3).map { recipient(on: $0, of: rig.map) }
        let reminders = [fakeReminder("a", of: on[0]), fakeReminder("b", of: on[1]), fakeReminder("c", of: on[2])]
        #expect(throws: WireError(.invalidArgument, "")) { try rig.client.schedule(reminders) }
        do {
            _ = try rig.client.schedule(reminders)
        } catch {
            #expect(error.field == "reminders[2].trigger.timeZone")
        }
    }

    /// A mixed run: the client holds map epoch 1, the cluster moved bob's slot to shard 1
    /// under epoch 2; shard 0 answers `wrong_shard`, the client refreshes from shard 1 and
    /// resends the same requestId there.
    @Test func followsWrongShardFromAnOldMapEpochWithTheSameRequestId() throws {
        let context = try Context()
        defer { context.shutdown() }
        let tag = "epoch"
        var old = fakeMap(tag: tag, shards: 2, epoch: 1)
        old.shards[0].slots = [ShardMap.SlotRange(0, 2047)]
        old.shards[1].slots = [ShardMap.SlotRange(2048, 4095)]
        var new = old
        new.mapEpoch = 2
        new.shards[0].slots = [ShardMap.SlotRange(0, 1023)]
        new.shards[1].slots = [ShardMap.SlotRange(1024, 4095)]
        let oldMap = old
        let newMap = new
        let mapsServed = Atomic<Int>(0)
        let shard0 = try FakeShard(id: 0, context: context, tag: tag) { _, request in
            if request.command == .map {
                // The first map this shard serves is the old one (the client's stale view).
                return FakeShard.ok(request, mapsServed.add(1, ordering: .relaxed).oldValue == 0 ? oldMap : newMap)
            }
            return FakeShard.wrongShard(request, owner: 1, epoch: 2)
        }
        let shard1 = try FakeShard(id: 1, context: context, tag: tag) { _, request in
            if request.command == .map { return FakeShard.ok(request, newMap) }
            guard case .badge(let id, let value) = request.command else { return nil }
            return FakeShard.ok(request, BadgeResult(recipient: id, badge: value, changed: true))
        }
        defer {
            shard0.stop()
            shard1.stop()
        }
        let client = try ClusterClient(seeds: [shard0.endpoint], timeout: .milliseconds(300), retries: 0, context: context)
        #expect(try client.currentMap().mapEpoch == 1)
        let (reply, _) = try client.send(ControlRequest(requestId: "moved-1", command: .badge("bob", 7)), expecting: BadgeResult.self)
        #expect(reply.result?.badge == 7)
        #expect(client.map?.mapEpoch == 2)
        #expect(shard0.requests.filter { $0.operation == .badge }.map(\.requestId) == ["moved-1"])
        #expect(shard1.requests.filter { $0.operation == .badge }.map(\.requestId) == ["moved-1"])
        #expect(shard1.requests.first?.command == .map)
    }

    @Test func givesUpAfterTwoRedirects() throws {
        let rig = try Rig(tag: "loop", count: 2) { shard, request in
            FakeShard.wrongShard(request, owner: 1 - shard.id, epoch: 1)
        }
        defer { rig.stop() }
        #expect(throws: WireError(.wrongShard, "")) {
            try rig.client.send(ControlRequest(command: .badge("bob", 1)), expecting: BadgeResult.self)
        }
        let attempts = rig.shards.map { $0.requests.filter { $0.operation == .badge }.count }.reduce(0, +)
        #expect(attempts == ClusterClient.maximumRedirects + 1)
    }

    @Test func listsEveryShardInKeyOrderExactlyOnceAcrossPages() throws {
        let tag = "list"
        let map = fakeMap(tag: tag, shards: 3)
        let on = (0..<3).map { recipient(on: $0, of: map) }
        let held: [[Reminder]] = (0..<3).map { shard in
            ["a", "c", "e", "g", "k"].enumerated().compactMap { index, id in
                index % 3 == shard || shard == 2 ? fakeReminder("\(id)\(shard)", of: on[shard]) : nil
            }
        }
        let rig = try Rig(tag: tag) { shard, request in listPage(request, of: held[shard.id]) }
        defer { rig.stop() }
        var cursor: String?
        var listed: [String] = []
        var pages = 0
        repeat {
            let page = try rig.client.list(ReminderFilter(), all: false, limit: 2, cursor: cursor)
            #expect(page.partial == nil)
            #expect(page.result.reminders.count <= 2)
            listed += page.result.reminders.map { "\($0.reminder.id.rawValue)/\($0.reminder.recipient.rawValue)" }
            cursor = page.result.nextCursor
            if let cursor { #expect(ClusterCursor.isClusterCursor(cursor)) }
            pages += 1
        } while cursor != nil && pages < 20
        let expected = held.flatMap { $0 }.map { (ReminderKey($0.id, of: $0.recipient).storage, "\($0.id.rawValue)/\($0.recipient.rawValue)") }
            .sorted { $0.0 < $1.0 }.map(\.1)
        #expect(listed == expected)
        #expect(listed.count == 9)
        #expect(pages == 5)
    }

    @Test func aSilentShardMakesThePageAndTheStatusPartialNamingIt() throws {
        let tag = "silent"
        let map = fakeMap(tag: tag, shards: 3)
        let on = (0..<3).map { recipient(on: $0, of: map) }
        let rig = try Rig(tag: tag, silent: [2]) { shard, request in
            switch request.command {
            case .list: return listPage(request, of: [fakeReminder("x\(shard.id)", of: on[shard.id])])
            case .status:
                return FakeShard.ok(request, StatusReport(
                    version: "t", pid: Int32(100 + shard.id), startedAt: Date(timeIntervalSince1970: 0), uptimeSeconds: 1,
                    reminders: ["pending": shard.id + 1], inFlight: 1, workersAlive: 2, nextFireAt: nil))
            default: return nil
            }
        }
        defer { rig.stop() }
        let page = try rig.client.list(ReminderFilter(), all: false, limit: 10, cursor: nil)
        #expect(page.result.reminders.map(\.reminder.id.rawValue) == ["x0", "x1"])
        #expect(page.partial?.code == .partial)
        #expect(page.partial?.shard == 2)
        #expect(page.partial?.message.contains("shard 2") == true)
        #expect(page.result.total == nil)
        // The silent shard keeps its start position: the next page asks it again.
        let next = try #require(page.result.nextCursor)
        let cursor = try ClusterCursor(text: next, expecting: .list)
        #expect(cursor.positions[2] == .start)
        #expect(cursor.positions[0] == .done)
        let (report, partial) = try rig.client.report(.status, StatusReport.self, total: StatusTotal.init)
        #expect(report.shards.map(\.shard) == [0, 1])
        #expect(report.total.reminders == ["pending": 3])
        #expect(report.total.inFlight == 2)
        #expect(report.total.workersAlive == 2)
        #expect(report.missing == [2])
        #expect(partial?.shard == 2)
    }

    @Test func aPartialResultNamesEveryShardThatDidNotAnswer() throws {
        let tag = "silent2"
        let map = fakeMap(tag: tag, shards: 3)
        let on = (0..<3).map { recipient(on: $0, of: map) }
        let rig = try Rig(tag: tag, silent: [1, 2]) { shard, request in
            listPage(request, of: [fakeReminder("x\(shard.id)", of: on[shard.id])])
        }
        defer { rig.stop() }
        let page = try rig.client.list(ReminderFilter(), all: false, limit: 10, cursor: nil)
        let partial = try #require(page.partial)
        #expect(page.result.reminders.map(\.reminder.id.rawValue) == ["x0"])
        #expect(partial.code == .partial)
        #expect(partial.shards == [1, 2])
        #expect(partial.shard == 1, "the first missing shard, as before")
        #expect(partial.message.hasPrefix("2 of 3 shard(s) did not answer: shard 1 ("))
        let json = String(decoding: try JSONEncoder().encode(partial), as: UTF8.self)
        #expect(json.contains(#""shards":[1,2]"#))
        let decoded = try JSONDecoder().decode(WireError.self, from: Data(json.utf8))
        #expect(decoded.shards == [1, 2] && decoded.shard == 1)
    }

    /// A scatter polls every shard from the calling thread (no thread per shard), and each
    /// keeps what one client's exchange gives it: a shard that asks to wait (`rate_limited`)
    /// is asked again with the same bytes after its `retryAfterMs`, a silent one `retries + 1`
    /// times on fresh sockets, the others once, all with one `requestId`.
    @Test func aScatterWaitsOutEachShardOnItsOwn() throws {
        let refusedOnce = Atomic<Bool>(false)
        let rig = try Rig(tag: "scatter-poll", count: 6, silent: [5], retries: 1, answer: { shard, request in
            if shard.id == 3 && !refusedOnce.exchange(true, ordering: .relaxed) {
                return FakeShard.refuse(request, WireError(.rateLimited, "slow down", retryAfterMilliseconds: 50))
            }
            return FakeShard.ok(request, CancelResult(cancelled: [ReminderID("c\(shard.id)")]))
        })
        defer { rig.stop() }
        let (result, partial) = try rig.client.cancel(ReminderFilter())
        #expect(result.cancelled.map(\.rawValue) == ["c0", "c1", "c2", "c3", "c4"])
        #expect(partial?.shards == [5])
        #expect(partial?.message.contains("after 2 attempts") == true)
        let cancels = rig.cancelsReceived
        #expect(cancels.map(\.count) == [1, 1, 1, 2, 1, 2])
        #expect(Set(cancels.flatMap { $0.map(\.requestId) }).count == 1)
    }

    /// A map that names one endpoint for two shards (a misconfiguration): each shard's
    /// exchange still gets a socket of its own, so neither takes the other's reply.
    @Test func twoShardsAtOneEndpointEachGetTheirOwnExchange() throws {
        var shared = fakeMap(tag: "shared-endpoint", shards: 3)
        shared.shards[2].endpoints.control = shared.shards[1].endpoints.control
        let rig = try Rig(
            tag: "shared-endpoint", map: shared,
            answer: { shard, request in
                FakeShard.ok(request, CancelResult(cancelled: [ReminderID("c\(shard.id)-\(UUID().uuidString.prefix(4))")]))
            })
        defer { rig.stop() }
        let (result, partial) = try rig.client.cancel(ReminderFilter())
        #expect(partial == nil)
        #expect(result.cancelled.count == 3)
        #expect(result.cancelled.filter { $0.rawValue.hasPrefix("c1-") }.count == 2)
        #expect(rig.cancelsReceived.map(\.count) == [1, 2, 0])
    }

    @Test func cancelAllGoesToEveryShardWithOneRequestId() throws {
        let rig = try Rig(tag: "cancel") { shard, request in
            FakeShard.ok(request, CancelResult(cancelled: [ReminderID("z\(shard.id)"), ReminderID("a\(shard.id)")]))
        }
        defer { rig.stop() }
        let (result, partial) = try rig.client.cancel(ReminderFilter(), requestId: "cancel-all-1")
        #expect(partial == nil)
        #expect(result.cancelled.map(\.rawValue) == ["a0", "a1", "a2", "z0", "z1", "z2"])
        for shard in rig.shards {
            #expect(shard.requests.filter { $0.operation == .cancel }.map(\.requestId) == ["cancel-all-1"])
        }
    }

    /// One shard: the seed is used for everything (not the map's own endpoint) and a
    /// listing comes back as the coordinator wrote it.
    @Test func aSingleShardClusterPassesRepliesThroughUnchanged() throws {
        let context = try Context()
        defer { context.shutdown() }
        let single = ShardMap.single(ShardMap.Endpoints(
            control: "tcp://unreachable.invalid:1", dispatch: "", results: "", events: "", eventsIngest: ""))
        let shard = try FakeShard(id: 0, context: context, tag: "single") { _, request in
            if request.command == .map { return FakeShard.ok(request, single) }
            return listPage(request, of: [fakeReminder("only", of: "alice")])
        }
        defer { shard.stop() }
        let client = try ClusterClient(seeds: [shard.endpoint], timeout: .milliseconds(300), retries: 0, context: context)
        let page = try client.list(ReminderFilter(), all: false, limit: nil, cursor: nil)
        #expect(page.bytes != nil)
        #expect(page.result.total == 1)
        #expect(page.result.reminders.map(\.reminder.id.rawValue) == ["only"])
    }
}
