import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// A shard answers only for the recipients on its slots: every request naming a recipient of
/// another shard's slot gets `wrong_shard` with the owner and the map epoch, and is neither
/// applied nor journaled. Pure: no sockets.
@Suite struct OwnershipTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)
    static let map = ShardMap.evenlySplit(shards: 3) { id in
        let base = 7700 + 10 * id
        return ShardMap.Endpoints(
            control: "tcp://127.0.0.1:\(base)", dispatch: "tcp://127.0.0.1:\(base + 1)", results: "tcp://127.0.0.1:\(base + 2)",
            events: "tcp://127.0.0.1:\(base + 3)", eventsIngest: "tcp://127.0.0.1:\(base + 4)")
    }
    let client = ClientAddress(routing: [Data([1])])

    /// The first recipient `user-<n>` whose slot shard `shard` owns.
    static func recipient(on shard: Int) -> RecipientID {
        for n in 0... {
            let recipient = RecipientID("user-\(n)")
            if map.shard(of: recipient)?.id == shard { return recipient }
        }
        preconditionFailure("unreachable")
    }

    static func state(shard: Int, map: ShardMap? = Self.map) -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.shardMap = map
        configuration.shardID = shard
        return CoordinatorState(configuration: configuration, startedAt: t0)
    }

    static func reminder(_ id: ReminderID, of recipient: RecipientID) -> Reminder {
        Reminder(id: id, recipient: recipient, content: Content(body: "hi"), trigger: Trigger(start: .instant(t0.addingTimeInterval(3600))))
    }

    /// Every single-item operation about `recipient`.
    static func commands(about recipient: RecipientID) -> [ControlRequest.Command] {
        let firing = FiringID(ReminderKey("r-1", of: recipient), dueAtMilliseconds: 1_798_102_800_000)
        let job = "\(ReminderKey.escaped(recipient.rawValue))/r-1@1798102800000#snooze"
        return [
            .schedule([reminder("r-1", of: recipient)]),
            .list(ReminderFilter(recipient: recipient), all: true, limit: nil),
            .cancel(ReminderFilter(recipient: recipient)),
            .cancel(ReminderFilter(ids: ["r-1"], recipient: recipient)),
            .setEnabled(["r-1"], false, recipient: recipient),
            .setEnabled(["r-1"], true, recipient: recipient),
            .events(after: 0, recipient: recipient, limit: nil),
            .register(Recipient(id: recipient)),
            .recipient(recipient),
            .badge(recipient, 3),
            .delivered(recipient, remove: nil),
            .ack(firing),
            .retry(firing),
            .act(firingId: firing, action: "snooze", text: nil, token: nil, snoozeSeconds: nil),
            .job(job),
        ]
    }

    static let cases: [(from: Int, to: Int)] = [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]

    @Test(arguments: cases)
    func everySingleItemRequestToTheWrongShardNamesTheOwnerAndChangesNothing(_ pair: (from: Int, to: Int)) throws {
        let recipient = Self.recipient(on: pair.from)
        for command in Self.commands(about: recipient) {
            var state = Self.state(shard: pair.to)
            let directives = state.onRequest(ControlRequest(requestId: "q1", command: command), from: client, at: Self.t0)
            guard directives.count == 1, case .reply(.failed(let error), let requestId, _) = directives[0] else {
                Issue.record("\(command): expected one wrong_shard reply, got \(directives)")
                continue
            }
            #expect(error.code == .wrongShard, "\(command)")
            #expect(error.shard == pair.from, "\(command)")
            #expect(error.mapEpoch == 1, "\(command)")
            #expect(requestId == "q1")
            #expect(error.message.contains("owned by shard \(pair.from) at tcp://127.0.0.1:\(7700 + 10 * pair.from)"), "\(error.message)")
            #expect(state.reminderCount == 0)
            // Not remembered either: the retry after a map refresh goes to the owner, and a
            // retry here is refused again rather than answered from the request log.
            let again = state.onRequest(ControlRequest(requestId: "q1", command: command), from: client, at: Self.t0)
            #expect(again == directives)
        }
    }

    @Test(arguments: [0, 1, 2])
    func everySingleItemRequestToItsOwnerIsServed(_ shard: Int) {
        let recipient = Self.recipient(on: shard)
        for command in Self.commands(about: recipient) {
            var state = Self.state(shard: shard)
            let directives = state.onRequest(ControlRequest(command: command), from: client, at: Self.t0)
            for case .reply(.failed(let error), _, _) in directives {
                #expect(error.code != .wrongShard, "\(command): \(error)")
            }
        }
        var state = Self.state(shard: shard)
        let directives = state.onRequest(ControlRequest(command: .schedule([Self.reminder("r-1", of: recipient)])), from: client, at: Self.t0)
        #expect(directives.contains { if case .append(.scheduled) = $0 { true } else { false } })
        #expect(state.reminderCount == 1)
    }

    @Test func aScheduleMixingTwoShardsIsRefusedWhole() throws {
        let mine = Self.recipient(on: 0)
        let theirs = Self.recipient(on: 2)
        var state = Self.state(shard: 0)
        let directives = state.onRequest(
            ControlRequest(command: .schedule([Self.reminder("a", of: mine), Self.reminder("b", of: theirs), Self.reminder("c", of: mine)])),
            from: client, at: Self.t0)
        #expect(directives.count == 1)
        guard case .reply(.failed(let error), _, _)? = directives.first else {
            Issue.record("expected a refusal, got \(directives)")
            return
        }
        #expect(error.code == .wrongShard)
        #expect(error.shard == 2)
        #expect(error.field == "reminders[1].recipient")
        #expect(state.reminderCount == 0)
    }

    @Test func requestsAboutNoRecipientAreAnsweredWithThisShardsPart() {
        var state = Self.state(shard: 1)
        let own = Self.recipient(on: 1)
        _ = state.onRequest(ControlRequest(command: .schedule([Self.reminder("r-1", of: own)])), from: client, at: Self.t0)
        let commands: [ControlRequest.Command] = [
            .status, .workers, .stats, .ping, .map, .deadLetters(), .list(ReminderFilter(), all: true, limit: nil),
            .events(after: 0, recipient: nil, limit: nil), .cancel(ReminderFilter(match: ["x": "y"])),
        ]
        for command in commands {
            let directives = state.onRequest(ControlRequest(command: command), from: client, at: Self.t0)
            for case .reply(.failed(let error), _, _) in directives {
                #expect(error.code != .wrongShard, "\(command)")
            }
        }
        let listed = state.onRequest(ControlRequest(command: .list(ReminderFilter(), all: true, limit: nil)), from: client, at: Self.t0)
        guard case .reply(.listed(let page), _, _)? = listed.last else {
            Issue.record("expected a listing, got \(listed)")
            return
        }
        #expect(page.reminders.map(\.reminder.recipient) == [own])
    }

    @Test func aSingleShardOwnsEverySlotAndAnswersStatusAsShardZero() {
        var state = Self.state(shard: 0, map: nil)
        let directives = state.onRequest(ControlRequest(command: .schedule([Self.reminder("r", of: Self.recipient(on: 2))])), from: client, at: Self.t0)
        #expect(state.reminderCount == 1, "\(directives)")
        let status = state.onRequest(ControlRequest(command: .status), from: client, at: Self.t0)
        guard case .reply(.status(let report), _, _)? = status.last else {
            Issue.record("expected status")
            return
        }
        #expect(report.shard == 0)
    }

    @Test func generatedIDsCarryTheShardOnlyInAClusterOfSeveral() throws {
        var clustered = Self.state(shard: 2)
        let own = Self.recipient(on: 2)
        var unnamed = Self.reminder("", of: own)
        unnamed.id = ""
        let directives = clustered.onRequest(ControlRequest(command: .schedule([unnamed])), from: client, at: Self.t0)
        guard case .reply(.scheduled(let result, _), _, _)? = directives.last else {
            Issue.record("expected scheduled, got \(directives)")
            return
        }
        #expect(result.scheduled.map(\.id.rawValue) == ["r2.1-1798099200000-1"])
        var single = Self.state(shard: 0, map: nil)
        let alone = single.onRequest(ControlRequest(command: .schedule([unnamed])), from: client, at: Self.t0)
        guard case .reply(.scheduled(let aloneResult, _), _, _)? = alone.last else {
            Issue.record("expected scheduled, got \(alone)")
            return
        }
        #expect(aloneResult.scheduled.map(\.id.rawValue) == ["r1-1798099200000-1"])
    }
}
