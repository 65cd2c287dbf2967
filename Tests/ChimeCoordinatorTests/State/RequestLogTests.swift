import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


/// The idempotency log's two tiers: large replies (bulk chunks) never push out small ones
/// (a `cancel` retried after a 200,000-reminder import had run again).
@Suite struct RequestLogTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z

    static func smallReply(_ index: Int) -> Data {
        Data(#"{"ok":true,"requestId":"s\#(index)","result":{"cancelled":["r\#(index)"]}}"#.utf8)
    }

    @Test func twoHundredLargeRepliesLeaveEveryOneOfTwoHundredSmallOnesRemembered() {
        var log = RequestLog(capacity: 1000, byteLimit: 16 << 20)
        var smallBytes = 0
        for index in 0..<200 {
            log.remember(Self.smallReply(index), for: "s\(index)")
            smallBytes += Self.smallReply(index).count
        }
        let chunkReply = Data(repeating: UInt8(ascii: "x"), count: 200_000)
        for index in 0..<200 { log.remember(chunkReply, for: "chunk\(index)") }

        #expect((0..<200).allSatisfy { log.reply(to: "s\($0)") == Self.smallReply($0) })
        // 16 MiB / 200,000 bytes: the newest 83 chunk replies.
        #expect(log.largeCount == 83)
        #expect(log.largeByteCount == 83 * 200_000)
        #expect(log.count == 283)
        #expect(log.byteCount == smallBytes + 83 * 200_000)
        #expect(log.reply(to: "chunk116") == nil)
        #expect(log.reply(to: "chunk117") == chunkReply)
        #expect(log.entries.map(\.requestId) == (0..<200).map { "s\($0)" } + (117..<200).map { "chunk\($0)" })
    }

    @Test func eachTierForgetsItsOwnOldestBeyondItsOwnBounds() {
        var log = RequestLog(capacity: 2, byteLimit: 100, largeReplyThreshold: 10, largeByteLimit: 30)
        log.remember(Data(count: 4), for: "a")
        log.remember(Data(count: 11), for: "B")
        log.remember(Data(count: 5), for: "b")
        log.remember(Data(count: 12), for: "C")
        log.remember(Data(count: 10), for: "c")  // at the threshold: still small
        #expect(log.entries.map(\.requestId) == ["B", "b", "C", "c"], "count bound of the small tier: a goes")
        log.remember(Data(count: 13), for: "D")
        #expect(log.entries.map(\.requestId) == ["b", "C", "c", "D"], "large bytes 36 > 30: B goes, no small one")
        #expect(log.largeByteCount == 25)
        log.remember(Data(count: 40), for: "E")
        #expect(log.entries.map(\.requestId) == ["b", "c", "E"], "the newest large one stays however large")
        #expect(log.largeCount == 1 && log.largeByteCount == 40 && log.byteCount == 55)
    }

    @Test func aReplacedReplyKeepsItsPlaceInItsTierAndMovesWhenItChangesTier() {
        var log = RequestLog(capacity: 5, byteLimit: 100, largeReplyThreshold: 10, largeByteLimit: 100)
        log.remember(Data(count: 1), for: "a")
        log.remember(Data(count: 20), for: "B")
        log.remember(Data(count: 2), for: "c")
        log.remember(Data(count: 3), for: "a")
        #expect(log.entries.map(\.requestId) == ["a", "B", "c"])
        #expect(log.byteCount == 25)
        log.remember(Data(count: 30), for: "a")
        #expect(log.entries.map(\.requestId) == ["B", "c", "a"])
        #expect(log.largeCount == 2 && log.largeByteCount == 50 && log.byteCount == 52)
        log.remember(Data(count: 4), for: "B")
        #expect(log.entries.map(\.requestId) == ["c", "a", "B"])
        #expect(log.largeCount == 1 && log.largeByteCount == 30 && log.byteCount == 36)
    }

    @Test func rememberingTheEntriesAgainInOrderRebuildsAnEqualLog() {
        var log = RequestLog(capacity: 7, byteLimit: 60, largeReplyThreshold: 16, largeByteLimit: 90)
        var random = SeededRandomNumberGenerator(seed: 15)
        for index in 0..<500 {
            let size = Int.random(in: 0...40, using: &random)
            let id = "q\(Int.random(in: 0...(index / 2), using: &random))"
            log.remember(Data(repeating: UInt8(index % 251), count: size), for: id)

            var rebuilt = RequestLog(capacity: 7, byteLimit: 60, largeReplyThreshold: 16, largeByteLimit: 90)
            for entry in log.entries { rebuilt.remember(entry.reply, for: entry.requestId) }
            #expect(rebuilt == log, "after \(index)")
            #expect(rebuilt.entries.map(\.requestId) == log.entries.map(\.requestId))
            #expect(rebuilt.byteCount == log.byteCount && rebuilt.largeByteCount == log.largeByteCount)
            if rebuilt != log { return }
        }
        #expect(log.count > 7, "both tiers hold replies")
    }

    // MARK: - In the coordinator's state

    let alice = ClientAddress(routing: [Data([1])])

    static func journaled(_ directives: [CoordinatorDirective]) -> [JournalEntry] {
        directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
    }

    static func reminders(_ range: Range<Int>) -> [Reminder] {
        range.map { index in
            Reminder(
                id: ReminderID(String(format: "r-%05d", index)), recipient: "alice", content: Content(body: "b"),
                trigger: Trigger(start: .instant(t0.addingTimeInterval(3600))))
        }
    }

    static func configuration() -> CoordinatorConfiguration {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        // Scaled down 64 times from the defaults, so 10 chunks of 500 overflow a budget.
        configuration.rememberedReplyBytes = 256 << 10
        configuration.largeReplyThreshold = 1 << 10
        configuration.rememberedLargeReplyBytes = 256 << 10
        return configuration
    }

    @Test func aCancelRetriedAfterABulkScheduleGetsItsRememberedReplyAndCancelsNothingNew() throws {
        var state = CoordinatorState(configuration: Self.configuration(), startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        let empty = state
        var journal: [JournalEntry] = []
        journal += Self.journaled(
            state.onRequest(ControlRequest(requestId: "first", command: .schedule(Self.reminders(0..<3))), from: alice, at: Self.t0))
        let cancel = ControlRequest(requestId: "c1", command: .cancel(ReminderFilter(recipient: "alice")))
        var directives = state.onRequest(cancel, from: alice, at: Self.t0)
        journal += Self.journaled(directives)
        guard case .reply(.cancelled(let first), _, _)? = directives.last else {
            Issue.record("\(directives)")
            return
        }
        #expect(first.cancelled == ["r-00000", "r-00001", "r-00002"])
        let remembered = try #require(state.requestLog.reply(to: "c1"))

        // The bulk schedule: 10 chunks of 500 reminders, each reply ~40 KB, 400 KB in all.
        for chunk in 0..<10 {
            let request = ControlRequest(
                requestId: "chunk\(chunk)", command: .schedule(Self.reminders((1000 + chunk * 500)..<(1500 + chunk * 500))))
            journal += Self.journaled(state.onRequest(request, from: alice, at: Self.t0))
        }
        #expect(state.reminderCount == 5000)
        let chunkBytes = try #require(state.requestLog.reply(to: "chunk9")).count
        #expect(chunkBytes > 1 << 10)
        #expect(state.requestLog.largeCount == (256 << 10) / chunkBytes)
        #expect(state.requestLog.largeCount < 10, "the large tier did forget chunks")
        #expect(state.requestLog.count == state.requestLog.largeCount + 2)

        directives = state.onRequest(cancel, from: alice, at: Self.t0)
        #expect(directives == [.replyEncoded(remembered, to: alice)])
        #expect(state.reminderCount == 5000)
        #expect(state.bulkCancels.isEmpty)

        // Replay of the journal and a snapshot load both rebuild the same log.
        var replayed = empty
        for entry in journal { replayed.apply(entry) }
        #expect(replayed.requestLog == state.requestLog)
        var loaded = CoordinatorState(configuration: Self.configuration(), startedAt: Self.t0)
        try loaded.load(snapshot: state.encodedSnapshot(at: Self.t0))
        #expect(loaded.requestLog == state.requestLog)
        #expect(loaded.requestLog.entries.map(\.requestId) == state.requestLog.entries.map(\.requestId))
        loaded.finishRecovery(at: Self.t0)
        #expect(loaded.onRequest(cancel, from: alice, at: Self.t0) == [.replyEncoded(remembered, to: alice)])
    }
}
