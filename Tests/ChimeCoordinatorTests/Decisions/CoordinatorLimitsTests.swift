import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


/// Limits before work and bounded state per peer (issue 12), on the pure coordinator.
@Suite struct CoordinatorLimitsTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    func makeState(_ configure: (inout CoordinatorConfiguration) -> Void = { _ in }) -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        // These tests send tens of thousands of reminders in one request (the default takes 1,000).
        configuration.maxRemindersPerRequest = 100_000
        configure(&configuration)
        return CoordinatorState(configuration: configuration, startedAt: Self.t0)
    }

    /// A 256-byte reminder id, the longest allowed.
    static func longID(_ number: Int) -> ReminderID {
        let prefix = String(number)
        return ReminderID(prefix + String(repeating: "x", count: 256 - prefix.count))
    }

    static func reminder(_ id: ReminderID, at instant: Date = t0, body: String? = nil) -> Reminder {
        Reminder(id: id, recipient: "alice", content: Content(body: body), trigger: Trigger(start: .instant(instant)))
    }

    func heartbeat(_ state: inout CoordinatorState, _ worker: WorkerID, capacity: Int = 16, at now: Date) {
        let message = WorkerMessage(worker: worker, host: "h", pid: 1, capacity: capacity, delivered: 0)
        _ = state.onWorkerMessage(message, viaDispatch: true, at: now)
    }

    func workerIDs(_ state: inout CoordinatorState, at now: Date) -> [WorkerID] {
        guard case .reply(.workers(let result), _, _)? = state.onRequest(
            ControlRequest(command: .workers), from: client, at: now).last
        else { return [] }
        return result.workers.map(\.id)
    }

    static func appended(_ directives: [CoordinatorDirective]) -> [JournalEntry] {
        directives.compactMap { directive in
            if case .append(let entry) = directive { return entry }
            return nil
        }
    }

    @Test func aReplyTooLargeToRememberIsAnsweredAndNotRemembered() throws {
        var state = makeState()
        // Past one-shots: each reply item comes with a warning, about 640 bytes a reminder.
        let reminders = (0..<30_000).map { Self.reminder(Self.longID($0), at: Self.t0.addingTimeInterval(-86_400)) }
        let request = ControlRequest(requestId: "big", command: .schedule(reminders))
        let directives = state.onRequest(request, from: client, at: Self.t0)
        #expect(!Self.appended(directives).contains { if case .answered = $0 { true } else { false } })
        guard case .replyEncoded(let body, let address)? = directives.last else {
            Issue.record("expected the encoded reply last, got \(String(describing: directives.last))")
            return
        }
        #expect(address == client)
        #expect(body.count > RecordFraming.maximumPayloadLength)
        #expect(body.starts(with: Data(#"{"ok":true,"requestId":"big""#.utf8)))
        #expect(state.requestLog.reply(to: "big") == nil)
        #expect(state.reminderCount == 30_000)
        // Not remembered, so a retry is applied again: every reminder is replaced.
        let retry = state.onRequest(request, from: client, at: Self.t0)
        #expect(Self.appended(retry).count == 30_000)
    }

    @Test func aReplyThatFitsIsRemembered() {
        // Kind, instant, three lengths, a 4-byte request id and room for a 256-byte recipient.
        #expect(CoordinatorState.fitsOneRecord(answeredReplyBytes: RecordFraming.maximumPayloadLength - 281, requestIdBytes: 4))
        #expect(!CoordinatorState.fitsOneRecord(answeredReplyBytes: RecordFraming.maximumPayloadLength - 280, requestIdBytes: 4))
    }

    @Test func cancellingManyLongIDsSplitsIntoEntriesThatEachFitARecord() throws {
        var state = makeState()
        let ids = (0..<30_000).map(Self.longID)
        _ = state.onRequest(ControlRequest(command: .schedule(ids.map { Self.reminder($0) })), from: client, at: Self.t0)
        var directives = state.onRequest(
            ControlRequest(requestId: "all", command: .cancel(ReminderFilter())), from: client, at: Self.t0)
        // The cancel walks in slices, one a loop turn (`CoordinatorState+BulkCancel.swift`).
        var turns = 0
        while !state.bulkCancels.isEmpty && turns < 1000 {
            directives += state.onTick(now: Self.t0)
            turns += 1
        }
        let cancelled = Self.appended(directives).compactMap { entry -> [ReminderKey]? in
            if case .cancelled(let keys, _) = entry { return keys }
            return nil
        }
        #expect(cancelled.map(\.count) == Array(repeating: CoordinatorState.cancelSlice, count: 30_000 / CoordinatorState.cancelSlice))
        #expect(cancelled.flatMap { $0 }.map(\.id) == ids.sorted())
        for run in cancelled {
            let json = try JSONEncoder().encode(JournalEntry.cancelled(run, at: Self.t0))
            #expect(json.count < RecordFraming.maximumPayloadLength / 2)
        }
        #expect(state.reminderCount == 0)
        #expect(state.requestLog.reply(to: "all") != nil)
    }

    @Test func aReminderTooLargeForOneRecordIsRefusedBeforeAnythingIsApplied() {
        var state = makeState()
        let huge = String(repeating: "b", count: RecordFraming.maximumPayloadLength)
        let request = ControlRequest(
            requestId: "huge", command: .schedule([Self.reminder("small"), Self.reminder("huge", body: huge)]))
        let directives = state.onRequest(request, from: client, at: Self.t0)
        guard case .reply(.failed(let error), _, _)? = directives.last else {
            Issue.record("expected a refusal, got \(String(describing: directives.last))")
            return
        }
        #expect(error.code == .tooLarge)
        #expect(error.field == "reminders[1]")
        #expect(error.message == "the reminder takes 16777250 bytes; a journal record holds at most 16777216")
        #expect(state.reminderCount == 0)
        // Only the (small) refusal is remembered, as every answered mutating request is.
        #expect(Self.appended(directives).count == 1)
    }

    @Test func workersAnnouncingIntMaxCapacityCannotOverflowTheCredit() {
        var state = makeState()
        heartbeat(&state, "w1", capacity: .max, at: Self.t0)
        heartbeat(&state, "w2", capacity: .max, at: Self.t0)
        #expect(state.freeCredit() == 2 * WorkerMessage.maximumCapacity)
        _ = state.onRequest(ControlRequest(command: .schedule([Self.reminder("a")])), from: client, at: Self.t0)
        let dispatched = state.onTick(now: Self.t0).compactMap { directive -> DispatchBatch? in
            if case .dispatch(let batch, _) = directive { return batch }
            return nil
        }
        #expect(dispatched.flatMap(\.firings).map(\.reminderId) == ["a"])
    }

    @Test func lostWorkersAreForgottenAfterTheirRetentionAndTheCapHolds() {
        var state = makeState {
            $0.heartbeatInterval = 1
            $0.heartbeatLiveness = 3
            $0.maxWorkers = 2
            $0.deadWorkerRetention = 10
        }
        heartbeat(&state, "w1", at: Self.t0)
        heartbeat(&state, "w2", at: Self.t0)
        // Both alive: a third id is refused and leaves nothing behind.
        heartbeat(&state, "w3", at: Self.t0)
        #expect(state.refusedWorkerMessages == 1)
        #expect(workerIDs(&state, at: Self.t0) == ["w1", "w2"])
        heartbeat(&state, "w2", at: Self.t0.addingTimeInterval(2))
        // w1 is lost at t0 + 3: its record makes room for w3.
        _ = state.onTick(now: Self.t0.addingTimeInterval(4))
        heartbeat(&state, "w3", at: Self.t0.addingTimeInterval(4))
        #expect(state.refusedWorkerMessages == 1)
        #expect(workerIDs(&state, at: Self.t0.addingTimeInterval(4)) == ["w2", "w3"])
        // w2 (last seen t0 + 2) is listed as lost until t0 + 15, then forgotten.
        _ = state.onTick(now: Self.t0.addingTimeInterval(15))
        #expect(workerIDs(&state, at: Self.t0.addingTimeInterval(15)) == ["w2", "w3"])
        _ = state.onTick(now: Self.t0.addingTimeInterval(15.001))
        #expect(workerIDs(&state, at: Self.t0.addingTimeInterval(15.001)) == ["w3"])
    }

    @Test func aNonFiniteAcknowledgementCannotBreakTheStatsReply() throws {
        var state = makeState()
        heartbeat(&state, "w1", at: Self.t0)
        _ = state.onRequest(ControlRequest(command: .schedule([Self.reminder("a")])), from: client, at: Self.t0)
        let firing = try #require(state.onTick(now: Self.t0).compactMap { directive -> Firing? in
            if case .dispatch(let batch, _) = directive { return batch.firings.first }
            return nil
        }.first)
        let ack = WorkerMessage.Acknowledgement(
            firingId: firing.firingId, firedAt: Date(timeIntervalSinceReferenceDate: .nan), attempt: 1, epoch: 1)
        _ = state.onWorkerMessage(
            WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 1, acks: [ack]), at: Self.t0)
        guard case .reply(let outcome, _, _)? = state.onRequest(ControlRequest(command: .stats), from: client, at: Self.t0).last
        else {
            Issue.record("no reply")
            return
        }
        let reply = outcome.encodedReply(requestId: nil)
        #expect(reply.starts(with: Data(#"{"ok":true"#.utf8)))
    }
}
