import ChimeCore
import ChimeStore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator
@testable import ChimeWorker


/// Pure tests of the coordinator's rules: no sockets, no sleeps, time passed in.
@Suite struct CoordinatorStateTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    /// A state with one worker `w1` that can take firings, unless `workers` says otherwise.
    func makeState(workers: [WorkerID] = ["w1"], _ configure: (inout CoordinatorConfiguration) -> Void = { _ in })
        -> CoordinatorState
    {
        var configuration = CoordinatorConfiguration()
        // Workers stay alive for the whole test unless a test is about liveness.
        configuration.heartbeatInterval = 3600
        configure(&configuration)
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        for worker in workers { join(&state, worker) }
        return state
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
        batches(directives).flatMap(\.batch.firings)
    }

    func batches(_ directives: [CoordinatorDirective]) -> [(batch: DispatchBatch, worker: WorkerID)] {
        directives.compactMap { directive in
            if case .dispatch(let batch, let worker) = directive { return (batch, worker) }
            return nil
        }
    }

    func nextFire(_ state: inout CoordinatorState, _ id: ReminderID) -> Date? {
        let (outcome, _) = request(&state, .list(ReminderFilter(ids: [id]), all: true, limit: nil))
        guard case .listed(let list) = outcome else { return nil }
        return list.reminders.first?.nextFireAt
    }

    /// A worker announces itself over both connections, as `WorkerService` does.
    @discardableResult
    func join(_ state: inout CoordinatorState, _ worker: WorkerID, capacity: Int = 4096, at now: Date = t0)
        -> [CoordinatorDirective]
    {
        let message = WorkerMessage(worker: worker, host: "h", pid: 1, capacity: capacity, delivered: 0)
        return state.onWorkerMessage(message, viaDispatch: true, at: now)
    }

    func ack(_ state: inout CoordinatorState, _ firings: [Firing], by worker: WorkerID, at now: Date, epoch: UInt64 = 1)
        -> [CoordinatorDirective]
    {
        let acks = firings.map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: now, attempt: $0.attempt, epoch: epoch) }
        return state.onWorkerMessage(WorkerMessage(worker: worker, host: "h", pid: 1, delivered: acks.count, acks: acks), at: now)
    }

    @Test func firesExactlyAtTheDueInstant() {
        // Without a lead (the lead's hand-over: CoordinatorStateTests+DispatchLead).
        var state = makeState { $0.dispatchLead = 0 }
        let due = Self.t0.addingTimeInterval(60)
        let (outcome, directives) = request(&state, .schedule([reminder("a", at: due)]))
        #expect(directives.first == .append(.scheduled(reminder("a", at: due), at: Self.t0)))
        guard case .scheduled(let result, let warnings) = outcome else { Issue.record("\(outcome)"); return }
        #expect(result.scheduled == [ScheduleResult.Item(id: "a", replaced: false, state: .pending, nextFireAt: due)])
        #expect(warnings.isEmpty)
        #expect(state.nextWake == due)
        #expect(state.onTick(now: due.addingTimeInterval(-0.001)).isEmpty)
        let fired = state.onTick(now: due)
        #expect(fired.count == 3)
        #expect(fired.first == .append(.fired(ReminderKey("a", of: "alice"), dueAt: due, next: nil, late: false, at: due)))
        #expect(fired[1] == .append(.seqReserved(through: 1 + state.configuration.eventSeqReservation)))
        #expect(batches(fired).map(\.worker) == ["w1"])
        #expect(firings(fired).map(\.firingId.text) == ["alice/a@2026-12-24T08:01:00.000Z"])
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
        #expect(nextFire(&state, "d") == Self.t0.addingTimeInterval(86_400))
    }

    @Test func rruleReminderRearmsAndFinishesAfterItsCount() throws {
        var state = makeState()
        var weekly = reminder("w", at: Self.t0)  // Thursday 2026-12-24
        weekly.trigger.recurrenceRule = try RecurrenceRule(parsing: "FREQ=WEEKLY;BYDAY=TH,MO;COUNT=3")
        request(&state, .schedule([weekly]))
        #expect(firings(state.onTick(now: Self.t0)).count == 1)
        #expect(nextFire(&state, "w") == Self.t0.addingTimeInterval(4 * 86_400))
        join(&state, "w1", at: Self.t0.addingTimeInterval(4 * 86_400))
        #expect(firings(state.onTick(now: Self.t0.addingTimeInterval(4 * 86_400))).filter { $0.attempt == 1 }.count == 1)
        #expect(nextFire(&state, "w") == Self.t0.addingTimeInterval(7 * 86_400))
        join(&state, "w1", at: Self.t0.addingTimeInterval(7 * 86_400))
        #expect(firings(state.onTick(now: Self.t0.addingTimeInterval(7 * 86_400))).filter { $0.attempt == 1 }.count == 1)
        #expect(state.entries[ReminderKey("w", of: "alice")]?.state == .finished)
    }

    @Test func stalledCoordinatorFiresOnceThenContinuesOnSchedule() {
        var state = makeState()
        request(&state, .schedule([reminder("m", at: Self.t0, repeatRule: RepeatRule(unit: .minute, interval: 1))]))
        let fired = firings(state.onTick(now: Self.t0.addingTimeInterval(330)))
        #expect(fired.map(\.dueAt) == [Self.t0])
        // 08:05:30 now: the next on-schedule occurrence is 08:06, not 08:06:30.
        #expect(nextFire(&state, "m") == Self.t0.addingTimeInterval(360))
    }

    @Test func redeliversWithTheSameFiringIDAfterLeaseExpiry() {
        var state = makeState { $0.leaseDuration = 10 }
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        let first = firings(state.onTick(now: Self.t0))
        #expect(state.onTick(now: Self.t0.addingTimeInterval(9.999)).isEmpty)
        join(&state, "w1", at: Self.t0.addingTimeInterval(9))
        let again = firings(state.onTick(now: Self.t0.addingTimeInterval(10)))
        #expect(again.map(\.firingId) == first.map(\.firingId))
        #expect(again.map(\.attempt) == [2])
    }

    @Test func aRedeliveredFiringKeepsOnlyItsNewLease() {
        var state = makeState { $0.leaseDuration = 10 }
        request(&state, .schedule([reminder("a", at: Self.t0), reminder("b", at: Self.t0.addingTimeInterval(5))]))
        let first = firings(state.onTick(now: Self.t0))
        let b = firings(state.onTick(now: Self.t0.addingTimeInterval(5)))
        _ = ack(&state, b, by: "w1", at: Self.t0.addingTimeInterval(6))
        join(&state, "w1", at: Self.t0.addingTimeInterval(9))
        let second = firings(state.onTick(now: Self.t0.addingTimeInterval(10)))
        #expect(second.map(\.firingId) == first.map(\.firingId))
        #expect(state.onTick(now: Self.t0.addingTimeInterval(15)).isEmpty, "b was acknowledged: its lease is void")
        join(&state, "w1", at: Self.t0.addingTimeInterval(18))
        #expect(state.onTick(now: Self.t0.addingTimeInterval(19.999)).isEmpty, "the first lease of a is void")
        let third = firings(state.onTick(now: Self.t0.addingTimeInterval(20)))
        #expect(third.map(\.firingId) == first.map(\.firingId))
        #expect(third.map(\.attempt) == [3])
    }

    @Test func firingsWaitWhileNoWorkerIsConnected() {
        var state = makeState(workers: [])
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        #expect(state.onTick(now: Self.t0) == [.append(.fired(ReminderKey("a", of: "alice"), dueAt: Self.t0, next: nil, late: false, at: Self.t0))],
                "the firing is made (journaled) and waits")
        #expect(state.waitingCount == 1)
        // No lease runs while nobody holds the firing, so no duplicate piles up.
        #expect(state.onTick(now: Self.t0.addingTimeInterval(60)).isEmpty)
        join(&state, "w9", at: Self.t0.addingTimeInterval(61))
        let directives = state.onTick(now: Self.t0.addingTimeInterval(61))
        #expect(batches(directives).map(\.worker) == ["w9"])
        #expect(firings(directives).map(\.attempt) == [1])
    }

    @Test func workerHeardOnlyOnTheResultsSocketGetsNothingUntilItsDispatchRouteIsKnown() {
        var state = makeState(workers: [])
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 0), at: Self.t0)
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        #expect(batches(state.onTick(now: Self.t0)).isEmpty)
        join(&state, "w1")
        #expect(firings(state.onTick(now: Self.t0)).count == 1)
    }

    @Test func silentWorkerLosesItsFiringsToAnotherWorkerAtOnce() {
        var state = makeState(workers: ["w1"]) { $0.heartbeatInterval = 1; $0.heartbeatLiveness = 3; $0.leaseDuration = 30 }
        request(&state, .schedule([reminder("a", at: Self.t0), reminder("b", at: Self.t0)]))
        let first = batches(state.onTick(now: Self.t0))
        #expect(first.map(\.worker) == ["w1"])
        join(&state, "w2", at: Self.t0.addingTimeInterval(3))
        #expect(state.nextWake == Self.t0.addingTimeInterval(3), "w1's liveness deadline")
        #expect(state.onTick(now: Self.t0.addingTimeInterval(3)).isEmpty)
        let moved = state.onTick(now: Self.t0.addingTimeInterval(3.001))
        #expect(batches(moved).map(\.worker) == ["w2"])
        #expect(firings(moved).map(\.firingId) == first[0].batch.firings.map(\.firingId))
        #expect(firings(moved).map(\.attempt) == [2, 2])
        let (outcome, _) = request(&state, .workers, at: Self.t0.addingTimeInterval(3.001))
        guard case .workers(let result) = outcome else { Issue.record("\(outcome)"); return }
        #expect(result.workers.map(\.alive) == [false, true])
    }

    @Test func restartedWorkerRejoinsWithoutOperatorAction() {
        var state = makeState(workers: ["w1"]) { $0.heartbeatInterval = 1; $0.heartbeatLiveness = 3 }
        _ = state.onTick(now: Self.t0.addingTimeInterval(10))
        request(&state, .schedule([reminder("a", at: Self.t0.addingTimeInterval(10))]), at: Self.t0.addingTimeInterval(10))
        #expect(batches(state.onTick(now: Self.t0.addingTimeInterval(10))).isEmpty, "w1 is silent: nothing is assigned")
        join(&state, "w1", at: Self.t0.addingTimeInterval(11))
        #expect(firings(state.onTick(now: Self.t0.addingTimeInterval(11))).count == 1)
    }

    @Test func workerNeverHoldsMoreThanItsCapacity() {
        var state = makeState(workers: []) { $0.maxBatchSize = 256 }
        join(&state, "small", capacity: 3)
        request(&state, .schedule((0..<5).map { reminder("r\($0)", at: Self.t0) }))
        let first = state.onTick(now: Self.t0)
        #expect(batches(first).map(\.batch.firings.count) == [3])
        #expect(state.waitingCount == 2)
        _ = ack(&state, Array(firings(first).prefix(2)), by: "small", at: Self.t0)
        #expect(batches(state.onTick(now: Self.t0)).map(\.batch.firings.count) == [2])
    }

    @Test func failedHandOffPutsTheFiringsBackInLineWithTheSameAttempt() {
        var state = makeState(workers: ["w1"])
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        guard let (batch, worker) = batches(state.onTick(now: Self.t0)).first else { Issue.record("no batch"); return }
        state.onDispatchFailed(batch, to: worker, at: Self.t0)
        #expect(state.inFlightCount == 0)
        #expect(state.waitingCount == 1)
        #expect(state.onTick(now: Self.t0).isEmpty, "w1 is unreachable until it announces itself again")
        join(&state, "w1")
        #expect(firings(state.onTick(now: Self.t0)).map(\.attempt) == [1])
    }

    @Test func acknowledgementCompletesTheFiringAndRecordsLateness() {
        var state = makeState()
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        let dispatched = firings(state.onTick(now: Self.t0))
        let firingId = dispatched[0].firingId
        let acked = ack(&state, dispatched, by: "w1", at: Self.t0.addingTimeInterval(0.004))
        #expect(acked == [.append(.acknowledged(firingId, seq: 1, worker: "w1", firedAt: Self.t0.addingTimeInterval(0.004)))])
        #expect(state.inFlightCount == 0)
        #expect(ack(&state, dispatched, by: "w1", at: Self.t0.addingTimeInterval(0.005)).isEmpty, "a duplicate acknowledgement changes nothing")
        #expect(state.onTick(now: Self.t0.addingTimeInterval(60)).isEmpty, "no redelivery after the ack")
        let (outcome, _) = request(&state, .stats, at: Self.t0.addingTimeInterval(60))
        guard case .stats(let stats) = outcome else { Issue.record("\(outcome)"); return }
        #expect(stats.acknowledged == 1)
        #expect(stats.fireLateness.map { abs($0.max - 4) < 0.001 } == true)
    }

    @Test func acknowledgementFromAnotherEpochIsFencedOff() {
        var state = makeState()
        state.takeOver(as: CoordinatorIdentity(epoch: 5, startedAt: Self.t0))
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        guard let (batch, _) = batches(state.onTick(now: Self.t0)).first else { Issue.record("no dispatch"); return }
        #expect(batch.epoch == 5)
        #expect(ack(&state, batch.firings, by: "w1", at: Self.t0, epoch: 4).isEmpty)
        #expect(state.inFlightCount == 1)
    }

    @Test func firingIsDeadLetteredAfterMaxAttempts() {
        var state = makeState { $0.maxAttempts = 2; $0.leaseDuration = 1; $0.heartbeatInterval = 100 }
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        var now = Self.t0
        var attempts: [Int] = []
        var deadLettered: [CoordinatorDirective] = []
        for _ in 0..<4 {
            let directives = state.onTick(now: now)
            attempts += firings(directives).map(\.attempt)
            deadLettered += directives.filter { if case .append(.deadLettered) = $0 { true } else { false } }
            now = now.addingTimeInterval(1)
        }
        #expect(attempts == [1, 2])
        #expect(deadLettered == [.append(.deadLettered(FiringID(ReminderKey("a", of: "alice"), dueAt: Self.t0), at: Self.t0.addingTimeInterval(2)))])
        #expect(state.inFlightCount == 0)
        #expect(state.deadLetters.count == 1)
    }

    @Test func deadLetteredFiringCanBeListedAndRetriedWithItsFiringID() {
        var state = makeState { $0.maxAttempts = 1; $0.leaseDuration = 1 }
        request(&state, .schedule([reminder("a", at: Self.t0)]))
        _ = state.onTick(now: Self.t0)
        _ = state.onTick(now: Self.t0.addingTimeInterval(1))
        let (listed, _) = request(&state, .deadLetters())
        guard case .deadLetters(let result) = listed else { Issue.record("\(listed)"); return }
        let firingId = FiringID(ReminderKey("a", of: "alice"), dueAt: Self.t0)
        #expect(result.firings.map(\.firingId) == [firingId])
        let (retried, directives) = request(&state, .retry(firingId), at: Self.t0.addingTimeInterval(2))
        #expect(retried == .retried(RetryResult(firingId: firingId)))
        #expect(directives.first == .append(.retried(firingId, at: Self.t0.addingTimeInterval(2))))
        let again = firings(state.onTick(now: Self.t0.addingTimeInterval(2)))
        #expect(again.map(\.firingId) == [firingId])
        #expect(again.map(\.attempt) == [1])
        let (missing, _) = request(&state, .retry(firingId))
        guard case .failed(let error) = missing else { Issue.record("\(missing)"); return }
        #expect(error.code == .notFound)
    }

    @Test func eventsCatchUpListsAcknowledgedEventsInSeqOrderWithTheSettledWatermark() {
        var state = makeState { $0.eventRetention = 2 }
        request(&state, .schedule([reminder("a", at: Self.t0), reminder("b", at: Self.t0), reminder("c", at: Self.t0, recipient: "bob")]))
        let dispatched = firings(state.onTick(now: Self.t0))
        #expect(dispatched.map(\.seq) == [1, 2, 3])
        _ = ack(&state, [dispatched[0], dispatched[2]], by: "w1", at: Self.t0)
        func events(after: UInt64, recipient: RecipientID? = nil) -> EventsResult? {
            let (outcome, _) = request(&state, .events(after: after, recipient: recipient, limit: nil))
            guard case .events(let result) = outcome else { return nil }
            return result
        }
        #expect(events(after: 0)?.events.map(\.seq) == [1, 3])
        #expect(events(after: 0)?.through == 1, "seq 2 is still in flight")
        #expect(events(after: 0, recipient: "bob")?.events.map(\.firing.reminderId) == ["c"])
        _ = ack(&state, [dispatched[1]], by: "w1", at: Self.t0)
        #expect(events(after: 1)?.events.map(\.seq) == [2, 3], "retention keeps the last 2 acknowledged")
        #expect(events(after: 0)?.through == 3)
        #expect(events(after: 0)?.oldestRetained == 2)
    }

    @Test func dueFiringsAreBatched() {
        var state = makeState { $0.maxBatchSize = 256 }
        let reminders = (0..<600).map { reminder("r\($0)", at: Self.t0) }
        request(&state, .schedule(reminders))
        let directives = state.onTick(now: Self.t0)
        #expect(batches(directives).map(\.batch.firings.count) == [256, 256, 88])
        #expect(directives.prefix(256).allSatisfy { if case .append(.fired) = $0 { true } else { false } })
    }

    @Test func disabledReminderKeepsItsRecordButDoesNotFire() {
        var state = makeState()
        request(&state, .schedule([reminder("off", at: Self.t0.addingTimeInterval(5), enabled: false)]))
        #expect(state.nextWake == nil)
        let (outcome, _) = request(&state, .list(ReminderFilter(), all: true, limit: nil))
        guard case .listed(let list) = outcome else { Issue.record("\(outcome)"); return }
        #expect(list.reminders.map(\.state) == [.disabled])
    }

    @Test func listsPendingInIDOrderWithFilters() {
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
        #expect(ids(ReminderFilter()) == ["a", "b", "c"])
        #expect(ids(ReminderFilter(recipient: "alice")) == ["b", "c"])
        #expect(ids(ReminderFilter(match: ["kind": "tea"])) == ["b", "c"])
        #expect(ids(ReminderFilter(match: ["n": "2"])) == ["b"])
        #expect(ids(ReminderFilter(), limit: 1) == ["a"])
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
        let second = state.onRequest(
            ControlRequest(requestId: "q1", command: .schedule([reminder("a", at: Self.t0.addingTimeInterval(5))])),
            from: client, at: Self.t0)
        #expect(first.count == 3, "scheduled, answered, reply")
        guard case .append(.answered("q1", let sent, _, _)) = first[1] else { Issue.record("\(first)"); return }
        guard second.count == 1, case .replyEncoded(let replayed, client) = second[0] else {
            Issue.record("no journal entry for the retry, only the remembered reply: \(second)")
            return
        }
        #expect(replayed == sent, "the retry gets the first reply byte for byte")
        let reply = try? WireCodec().decode(ControlReply<ScheduleResult>.self, from: replayed)
        #expect(reply?.requestId == "q1")
        #expect(reply?.result?.scheduled.map(\.replaced) == [false], "the remembered outcome is replayed")
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
        var state = makeState(workers: ["w1"]) { $0.heartbeatInterval = 1; $0.heartbeatLiveness = 3 }
        func alive(at now: Date) -> [Bool] {
            let (outcome, _) = request(&state, .workers, at: now)
            guard case .workers(let result) = outcome else { return [] }
            return result.workers.map(\.alive)
        }
        #expect(alive(at: Self.t0.addingTimeInterval(3)) == [true])
        #expect(alive(at: Self.t0.addingTimeInterval(3.001)) == [false])
    }
}
