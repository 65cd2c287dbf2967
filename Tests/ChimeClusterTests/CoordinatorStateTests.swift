import ChimeCore
import ChimeStore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCluster

/// Pure tests of the coordinator's rules: no sockets, no sleeps, time passed in.
@Suite struct CoordinatorStateTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    func makeState(_ configure: (inout CoordinatorConfiguration) -> Void = { _ in }) -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configure(&configuration)
        return CoordinatorState(configuration: configuration, startedAt: Self.t0)
    }

    func reminder(
        _ id: String, at instant: Date, recipient: String = "alice", repeatRule: RepeatRule? = nil,
        userInfo: [String: PropertyListValue]? = nil, enabled: Bool = true
    ) -> Reminder {
        Reminder(
            id: ReminderID(id), recipient: RecipientID(recipient), content: Content(body: id, userInfo: userInfo),
            trigger: Trigger(start: .instant(instant), repeatRule: repeatRule), enabled: enabled)
    }

    @discardableResult
    func request(_ state: inout CoordinatorState, _ command: ControlRequest.Command, requestId: String? = nil, at now: Date = t0)
        -> (ControlOutcome, [CoordinatorDirective])
    {
        let directives = state.onRequest(ControlRequest(requestId: requestId, command: command), from: client, at: now)
        guard case .reply(let outcome, _, let address)? = directives.last else {
            Issue.record("the last directive must be the reply: \(directives)")
            return (.failed(WireError(.internal, "no reply")), directives)
        }
        #expect(address == client)
        return (outcome, directives)
    }

    func firings(_ directives: [CoordinatorDirective]) -> [Firing] {
        directives.flatMap { directive -> [Firing] in
            if case .dispatch(let batch) = directive { return batch.firings }
            return []
        }
    }

    @Test func firesExactlyAtTheDueInstant() {
        var state = makeState()
        let due = Self.t0.addingTimeInterval(60)
        let (outcome, directives) = request(&state, .schedule([reminder("a", at: due)]))
        #expect(directives.first == .append(.scheduled(reminder("a", at: due), at: Self.t0)))
        guard case .scheduled(let result, let warnings) = outcome else { Issue.record("\(outcome)"); return }
        #expect(result.scheduled == [ScheduleResult.Item(id: "a", replaced: false, state: .pending, nextFireAt: due)])
        #expect(warnings.isEmpty)
        #expect(state.nextWake == due)
        #expect(state.onTick(now: due.addingTimeInterval(-0.001)).isEmpty)
        let fired = state.onTick(now: due)
        #expect(fired.count == 2)
        #expect(fired.first == .append(.dispatched(FiringID(reminder: "a", dueAt: due), attempt: 1, at: due)))
        #expect(firings(fired).map(\.firingId.rawValue) == ["a@2026-12-24T08:01:00.000Z"])
        #expect(state.onTick(now: due.addingTimeInterval(1)).isEmpty)
    }

    @Test func oneShotInThePastFiresAtOnceAndSaysSo() {
        var state = makeState()
        let past = Self.t0.addingTimeInterval(-30)
        let (outcome, _) = request(&state, .schedule([reminder("late", at: past)]))
        guard case .scheduled(_, let warnings) = outcome else { Issue.record("\(outcome)"); return }
        #expect(warnings == ["late: its time 2026-12-24T07:59:30.000Z is in the past; it fires now"])
        #expect(firings(state.onTick(now: Self.t0)).map(\.dueAt) == [past])
    }

    @Test func schedulingAnExistingIDReplacesIt() {
        var state = makeState()
        request(&state, .schedule([reminder("a", at: Self.t0.addingTimeInterval(10))]))
        let (outcome, _) = request(&state, .schedule([reminder("a", at: Self.t0.addingTimeInterval(20))]))
        guard case .scheduled(let result, _) = outcome else { Issue.record("\(outcome)"); return }
        #expect(result.scheduled.first?.replaced == true)
        #expect(state.onTick(now: Self.t0.addingTimeInterval(15)).isEmpty)
        #expect(firings(state.onTick(now: Self.t0.addingTimeInterval(20))).count == 1)
        #expect(state.reminderCount == 1)
    }

    @Test func dailyReminderRearmsForTheNextDay() {
        var state = makeState()
        request(&state, .schedule([reminder("d", at: Self.t0, repeatRule: RepeatRule(unit: .day, interval: 1))]))
        #expect(firings(state.onTick(now: Self.t0)).count == 1)
        #expect(state.nextWake == Self.t0.addingTimeInterval(86_400))
    }

    @Test func rruleReminderRearmsAndFinishesAfterItsCount() throws {
        var state = makeState()
        var weekly = reminder("w", at: Self.t0)  // Thursday 2026-12-24
        weekly.trigger.recurrenceRule = try RecurrenceRule(parsing: "FREQ=WEEKLY;BYDAY=TH,MO;COUNT=3")
        request(&state, .schedule([weekly]))
        #expect(firings(state.onTick(now: Self.t0)).count == 1)
        #expect(state.nextWake == Self.t0.addingTimeInterval(4 * 86_400))
        #expect(firings(state.onTick(now: Self.t0.addingTimeInterval(4 * 86_400))).count == 1)
        #expect(state.nextWake == Self.t0.addingTimeInterval(7 * 86_400))
        #expect(firings(state.onTick(now: Self.t0.addingTimeInterval(7 * 86_400))).count == 1)
        #expect(state.entries["w"]?.state == .finished)
    }

    @Test func stalledCoordinatorFiresOnceThenContinuesOnSchedule() {
        var state = makeState()
        request(&state, .schedule([reminder("m", at: Self.t0, repeatRule: RepeatRule(unit: .minute, interval: 1))]))
        let fired = firings(state.onTick(now: Self.t0.addingTimeInterval(330)))
        #expect(fired.map(\.dueAt) == [Self.t0])
        // 08:05:30 now: the next on-schedule occurrence is 08:06, not 08:06:30.
        #expect(state.nextWake == Self.t0.addingTimeInterval(360))
    }

    @Test func redeliversWithTheSameFiringIDAfterLeaseExpiry() {
        var state = makeState { $0.leaseDuration = 10 }
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        let first = state.onTick(now: Self.t0)
        guard case .dispatch(let batch)? = first.last else { Issue.record("no dispatch"); return }
        state.onBatchSent(batch, at: Self.t0)
        #expect(state.onTick(now: Self.t0.addingTimeInterval(9.999)).isEmpty)
        let again = firings(state.onTick(now: Self.t0.addingTimeInterval(10)))
        #expect(again.map(\.firingId) == batch.firings.map(\.firingId))
        #expect(again.map(\.attempt) == [2])
    }

    @Test func leaseStartsOnlyWhenTheBatchLeavesTheCoordinator() {
        var state = makeState { $0.leaseDuration = 10 }
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        _ = state.onTick(now: Self.t0)
        // No worker took the batch yet: no lease runs, so no duplicate piles up.
        #expect(state.onTick(now: Self.t0.addingTimeInterval(60)).isEmpty)
        #expect(state.inFlightCount == 1)
    }

    @Test func acknowledgementCompletesTheFiringAndRecordsLateness() {
        var state = makeState()
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        guard case .dispatch(let batch)? = state.onTick(now: Self.t0).last else { Issue.record("no dispatch"); return }
        state.onBatchSent(batch, at: Self.t0)
        let firingId = batch.firings[0].firingId
        let ack = WorkerMessage.Acknowledgement(firingId: firingId, firedAt: Self.t0.addingTimeInterval(0.004), attempt: 1, epoch: 1)
        let message = WorkerMessage(worker: "w1", host: "h", pid: 7, delivered: 1, acks: [ack])
        #expect(state.onWorkerMessage(message, at: Self.t0) == [.append(.acknowledged(firingId, firedAt: Self.t0.addingTimeInterval(0.004)))])
        #expect(state.inFlightCount == 0)
        #expect(state.onWorkerMessage(message, at: Self.t0).isEmpty, "a duplicate acknowledgement changes nothing")
        #expect(state.onTick(now: Self.t0.addingTimeInterval(60)).isEmpty, "no redelivery after the ack")
        let (outcome, _) = request(&state, .stats)
        guard case .stats(let stats) = outcome else { Issue.record("\(outcome)"); return }
        #expect(stats.acknowledged == 1)
        #expect(stats.fireLateness.map { abs($0.max - 4) < 0.001 } == true)
    }

    @Test func acknowledgementFromAnotherEpochIsFencedOff() {
        var state = makeState { $0.epoch = 5 }
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        guard case .dispatch(let batch)? = state.onTick(now: Self.t0).last else { Issue.record("no dispatch"); return }
        #expect(batch.epoch == 5)
        let stale = WorkerMessage.Acknowledgement(firingId: batch.firings[0].firingId, firedAt: Self.t0, attempt: 1, epoch: 4)
        #expect(state.onWorkerMessage(WorkerMessage(worker: "w", host: "h", pid: 1, delivered: 1, acks: [stale]), at: Self.t0).isEmpty)
        #expect(state.inFlightCount == 1)
    }

    @Test func firingIsDeadLetteredAfterMaxAttempts() {
        var state = makeState { $0.maxAttempts = 2; $0.leaseDuration = 1 }
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        var now = Self.t0
        var attempts: [Int] = []
        for _ in 0..<4 {
            for case .dispatch(let batch) in state.onTick(now: now) {
                attempts += batch.firings.map(\.attempt)
                state.onBatchSent(batch, at: now)
            }
            now = now.addingTimeInterval(1)
        }
        #expect(attempts == [1, 2])
        #expect(state.inFlightCount == 0)
        #expect(state.deadLetters.count == 1)
    }

    @Test func dueFiringsAreBatched() {
        var state = makeState { $0.maxBatchSize = 256 }
        let reminders = (0..<600).map { reminder("r\($0)", at: Self.t0) }
        request(&state, .schedule(reminders))
        let directives = state.onTick(now: Self.t0)
        let sizes = directives.compactMap { directive -> Int? in
            if case .dispatch(let batch) = directive { return batch.firings.count }
            return nil
        }
        #expect(sizes == [256, 256, 88])
        #expect(directives.prefix(600).allSatisfy { if case .append(.dispatched) = $0 { true } else { false } })
    }

    @Test func disabledReminderKeepsItsRecordButDoesNotFire() {
        var state = makeState()
        request(&state, .schedule([reminder("off", at: Self.t0.addingTimeInterval(5), enabled: false)]))
        #expect(state.nextWake == nil)
        let (outcome, _) = request(&state, .list(ReminderFilter(), all: true, limit: nil))
        guard case .listed(let list) = outcome else { Issue.record("\(outcome)"); return }
        #expect(list.reminders.map(\.state) == [.disabled])
    }

    @Test func listsPendingInNextFireOrderWithFilters() {
        var state = makeState()
        request(&state, .schedule([
            reminder("c", at: Self.t0.addingTimeInterval(30), userInfo: ["kind": .string("tea")]),
            reminder("a", at: Self.t0.addingTimeInterval(20), recipient: "bob"),
            reminder("b", at: Self.t0.addingTimeInterval(10), userInfo: ["kind": .string("tea"), "n": .integer(2)]),
        ]))
        func ids(_ filter: ReminderFilter, limit: Int? = nil) -> [String] {
            let (outcome, _) = request(&state, .list(filter, all: false, limit: limit))
            guard case .listed(let list) = outcome else { return [] }
            return list.reminders.map(\.reminder.id.rawValue)
        }
        #expect(ids(ReminderFilter()) == ["b", "a", "c"])
        #expect(ids(ReminderFilter(recipient: "alice")) == ["b", "c"])
        #expect(ids(ReminderFilter(match: ["kind": "tea"])) == ["b", "c"])
        #expect(ids(ReminderFilter(match: ["n": "2"])) == ["b"])
        #expect(ids(ReminderFilter(), limit: 1) == ["b"])
    }

    @Test func cancelsByIDByMatchAndByRecipient() {
        var state = makeState()
        request(&state, .schedule([
            reminder("a", at: Self.t0.addingTimeInterval(10), userInfo: ["k": .string("v")]),
            reminder("b", at: Self.t0.addingTimeInterval(10)),
            reminder("c", at: Self.t0.addingTimeInterval(10), recipient: "bob"),
            reminder("d", at: Self.t0.addingTimeInterval(10), recipient: "bob"),
        ]))
        func cancel(_ filter: ReminderFilter) -> [String] {
            let (outcome, _) = request(&state, .cancel(filter))
            guard case .cancelled(let result) = outcome else { return ["error"] }
            return result.cancelled.map(\.rawValue)
        }
        #expect(cancel(ReminderFilter(match: ["k": "v"])) == ["a"])
        #expect(cancel(ReminderFilter(recipient: "bob")) == ["c", "d"])
        #expect(cancel(ReminderFilter(ids: ["b", "zzz"])) == ["b"])
        #expect(state.reminderCount == 0)
        #expect(state.onTick(now: Self.t0.addingTimeInterval(10)).isEmpty)
    }

    @Test func retriedRequestWithTheSameIDIsAppliedOnce() {
        var state = makeState()
        let (_, first) = request(&state, .schedule([reminder("a", at: Self.t0.addingTimeInterval(5))]), requestId: "q1")
        let (outcome, second) = request(&state, .schedule([reminder("a", at: Self.t0.addingTimeInterval(5))]), requestId: "q1")
        #expect(first.count == 2)
        #expect(second.count == 1, "no journal entry for the retry")
        guard case .scheduled(let result, _) = outcome else { Issue.record("\(outcome)"); return }
        #expect(result.scheduled.first?.replaced == false, "the remembered outcome is replayed")
    }

    @Test func invalidReminderRejectsTheWholeBatch() {
        var state = makeState()
        var bad = reminder("bad", at: Self.t0)
        bad.trigger = Trigger(start: .wallClock(LocalDateTime(year: 2026, month: 12, day: 24, hour: 9, minute: 0, second: 0), zoneIdentifier: "Mars/Olympus"))
        let (outcome, directives) = request(&state, .schedule([reminder("good", at: Self.t0), bad]))
        #expect(directives.count == 1)
        guard case .failed(let error) = outcome else { Issue.record("\(outcome)"); return }
        #expect(error.code == .unknownTimeZone)
        #expect(error.field == "reminders[1].trigger.timeZone")
        #expect(state.reminderCount == 0)
    }

    @Test func workerIsAliveWithinThreeHeartbeats() {
        var state = makeState { $0.heartbeatInterval = 1; $0.heartbeatLiveness = 3 }
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 0), at: Self.t0)
        func alive(at now: Date) -> [Bool] {
            let (outcome, _) = request(&state, .workers, at: now)
            guard case .workers(let result) = outcome else { return [] }
            return result.workers.map(\.alive)
        }
        #expect(alive(at: Self.t0.addingTimeInterval(3)) == [true])
        #expect(alive(at: Self.t0.addingTimeInterval(3.001)) == [false])
    }
}
