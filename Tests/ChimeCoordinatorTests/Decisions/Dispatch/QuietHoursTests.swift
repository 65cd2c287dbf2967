import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// Quiet hours in the coordinator: a passive or active firing due in its recipient's quiet
/// window is held (one entry), released at the window's end with the same firing id (one
/// entry), and acknowledged once; levels that break through are not held; a zone change
/// re-times the hold; a cancel drops it; recovery from the journal or a snapshot holds it
/// again without delivering it early. Pure, time passed in.
@Suite struct QuietHoursTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    /// 23:30 in Berlin (CET, +01:00) on 2026-12-24.
    static let lateEvening = Date(timeIntervalSince1970: 1_798_151_400)  // 2026-12-24T22:30:00Z
    /// 07:00 in Berlin on 2026-12-25: the end of the 22:00-07:00 window.
    static let morning = Date(timeIntervalSince1970: 1_798_178_400)  // 2026-12-25T06:00:00Z
    let client = ClientAddress(routing: [Data([1])])
    let night = QuietWindow(start: 22 * 60, end: 7 * 60)

    func makeState() -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        return state
    }

    @discardableResult
    func request(_ state: inout CoordinatorState, _ command: ControlRequest.Command, at now: Date = t0) -> [CoordinatorDirective] {
        state.onRequest(ControlRequest(command: command), from: client, at: now)
    }

    func register(_ state: inout CoordinatorState, zone: String = "Europe/Berlin", grants: AuthorizationGrants = [], at now: Date = t0) {
        request(&state, .register(Recipient(id: "alice", zone: zone, grants: grants, quietHours: [night])), at: now)
    }

    func schedule(_ state: inout CoordinatorState, _ id: ReminderID = "r", level: InterruptionLevel = .active, at instant: Date = lateEvening) {
        request(&state, .schedule([Reminder(
            id: id, recipient: "alice", content: Content(title: "t", interruptionLevel: level),
            trigger: Trigger(start: .instant(instant)))]))
    }

    /// One tick at `now` with a worker of free credit: the entries and the firings dispatched.
    func tick(_ state: inout CoordinatorState, at now: Date) -> (entries: [JournalEntry], firings: [Firing]) {
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 16, delivered: 0), viaDispatch: true, at: now)
        let directives = state.onTick(now: now)
        return (Self.entries(directives), directives.flatMap { directive -> [Firing] in
            if case .dispatch(let batch, _) = directive { return batch.firings }
            return []
        })
    }

    func acknowledge(_ state: inout CoordinatorState, _ firing: Firing, at now: Date) -> [JournalEntry] {
        let ack = WorkerMessage.Acknowledgement(firingId: firing.firingId, firedAt: now, attempt: firing.attempt, epoch: 1)
        return Self.entries(state.onWorkerMessage(
            WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 16, delivered: 0, acks: [ack]), viaDispatch: true, at: now))
    }

    static func entries(_ directives: [CoordinatorDirective]) -> [JournalEntry] {
        directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
    }

    /// One tick at `now` with a worker of free credit that acknowledges, at `now`, every
    /// firing dispatched: the entries journaled and the firings dispatched.
    static func tickAndAcknowledge(_ state: inout CoordinatorState, at now: Date) -> (entries: [JournalEntry], firings: [Firing]) {
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 16, delivered: 0), viaDispatch: true, at: now)
        let directives = state.onTick(now: now)
        var journal = entries(directives)
        var dispatched: [Firing] = []
        for case .dispatch(let batch, _) in directives {
            dispatched += batch.firings
            let acks = batch.firings.map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: now, attempt: 1, epoch: 1) }
            journal += entries(state.onWorkerMessage(
                WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 16, delivered: 0, acks: acks), viaDispatch: true, at: now))
        }
        return (journal, dispatched)
    }

    static let key = ReminderKey("r", of: "alice")
    static let firingId = FiringID(key, dueAt: lateEvening)

    @Test func aFiringDueInQuietHoursIsHeldThenReleasedAtTheWindowEndWithItsId() {
        var state = makeState()
        register(&state)
        schedule(&state)
        let due = tick(&state, at: Self.lateEvening)
        #expect(due.firings.isEmpty)
        #expect(due.entries == [.attention(.held(Self.key, dueAt: Self.lateEvening, next: nil, late: false, missed: 0, until: Self.morning, reason: .quietHours, at: Self.lateEvening))])
        #expect(state.durable.heldCount == 1)
        #expect(state.nextWake == Self.morning)
        #expect(state.entries[Self.key]?.state == .delivered, "the reminder moved on")

        let justBefore = tick(&state, at: Self.morning.addingTimeInterval(-0.001))
        #expect(justBefore.entries.isEmpty && justBefore.firings.isEmpty)

        let released = tick(&state, at: Self.morning)
        #expect(released.entries.first == .attention(.released(Self.firingId, at: Self.morning)))
        #expect(released.firings.map(\.firingId) == [Self.firingId])
        #expect(released.firings.first?.dueAt == Self.lateEvening)
        #expect(state.durable.heldCount == 0)

        let firing = released.firings[0]
        #expect(acknowledge(&state, firing, at: Self.morning).contains { if case .acknowledged = $0 { true } else { false } })
        #expect(acknowledge(&state, firing, at: Self.morning).isEmpty, "acknowledged once")
        #expect(state.entries[Self.key]?.deliveredCount == 1)
        #expect(tick(&state, at: Self.morning.addingTimeInterval(3600)).firings.isEmpty)
    }

    @Test(arguments: [
        (InterruptionLevel.passive, AuthorizationGrants(), true),
        (.active, AuthorizationGrants(), true),
        (.timeSensitive, AuthorizationGrants(), true),  // not granted: delivered as active, so held
        (.timeSensitive, AuthorizationGrants.timeSensitive, false),
        (.critical, AuthorizationGrants.critical, false),
        (.critical, AuthorizationGrants.timeSensitive, true),
    ])
    func levelsThatBreakThroughAreNotHeld(level: InterruptionLevel, grants: AuthorizationGrants, isHeld: Bool) {
        var state = makeState()
        register(&state, grants: grants)
        schedule(&state, level: level)
        let due = tick(&state, at: Self.lateEvening)
        #expect(due.firings.isEmpty == isHeld)
        #expect(state.durable.heldCount == (isHeld ? 1 : 0))
    }

    @Test func aFiringOutsideTheWindowIsNotHeld() {
        var state = makeState()
        register(&state)
        // 21:59 in Berlin: a minute before the window.
        let before = Self.lateEvening.addingTimeInterval(-91 * 60)
        schedule(&state, at: before)
        let due = tick(&state, at: before)
        #expect(due.firings.map(\.dueAt) == [before], "\(due.entries)")
    }

    @Test func aZoneChangeDuringTheHoldRetimesItInTheNewZone() {
        var state = makeState()
        register(&state)
        schedule(&state)
        _ = tick(&state, at: Self.lateEvening)
        // 04:00Z is 23:00 in New York (EST): inside its night, which ends at 07:00 EST = 12:00Z.
        let moved = Self.morning.addingTimeInterval(-2 * 3600)
        register(&state, zone: "America/New_York", at: moved)
        let newEnd = Self.morning.addingTimeInterval(6 * 3600)
        #expect(state.durable.deliveries.holds.deadline(of: Self.firingId) == newEnd)
        #expect(tick(&state, at: Self.morning).firings.isEmpty, "Berlin's morning no longer releases it")
        #expect(tick(&state, at: newEnd).firings.map(\.firingId) == [Self.firingId])
    }

    @Test func aZoneChangeOutOfTheNightReleasesAtOnce() {
        var state = makeState()
        register(&state)
        schedule(&state)
        _ = tick(&state, at: Self.lateEvening)
        // 23:00Z is 08:00 in Tokyo: outside its night.
        let moved = Self.lateEvening.addingTimeInterval(1800)
        register(&state, zone: "Asia/Tokyo", at: moved)
        #expect(state.durable.deliveries.holds.deadline(of: Self.firingId) == moved)
        #expect(tick(&state, at: moved).firings.map(\.firingId) == [Self.firingId])
    }

    @Test func cancellingTheReminderDropsItsHeldFiring() {
        var state = makeState()
        register(&state)
        schedule(&state)
        _ = tick(&state, at: Self.lateEvening)
        request(&state, .cancel(ReminderFilter(ids: ["r"], recipient: "alice")), at: Self.lateEvening.addingTimeInterval(60))
        #expect(state.durable.heldCount == 0)
        #expect(tick(&state, at: Self.morning).firings.isEmpty)
    }

    @Test func recoveryFromTheJournalOrASnapshotHoldsItAgainAndReleasesItOnce() throws {
        var live = makeState()
        var journal: [JournalEntry] = []
        journal += Self.entries(request(&live, .register(Recipient(id: "alice", zone: "Europe/Berlin", quietHours: [night]))))
        journal += Self.entries(request(&live, .schedule([Reminder(
            id: "r", recipient: "alice", content: Content(title: "t"), trigger: Trigger(start: .instant(Self.lateEvening)))])))
        journal += tick(&live, at: Self.lateEvening).entries
        // kill -9 here: a new coordinator folds the journal.
        let restart = Self.lateEvening.addingTimeInterval(3600)
        var recovered = CoordinatorState(configuration: live.configuration, startedAt: restart)
        for entry in journal { recovered.apply(entry) }
        #expect(recovered.durable == live.durable)
        recovered.finishRecovery(at: restart)
        #expect(tick(&recovered, at: restart).firings.isEmpty, "not redelivered before the window ends")
        #expect(tick(&recovered, at: Self.morning).firings.map(\.firingId) == [Self.firingId])

        let payload = live.durable.encodedSnapshot(takenAt: restart)
        let decoded = try DurableState.decodeSnapshot(payload, seed: live.durable.settings)
        #expect(decoded.state == live.durable)
        #expect(decoded.state.deliveries.holds.deadline(of: Self.firingId) == Self.morning)
    }
}

/// The throttle in the coordinator: over `count` in the stretch, a firing is held (one entry)
/// until the slot the throttle gives it, then released with its id; replay agrees.
@Suite struct ThrottleTests {
    static let t0 = QuietHoursTests.t0
    let client = ClientAddress(routing: [Data([1])])

    @Test func firingsOverTheLimitAreHeldUntilTheirSlotsAndNoneIsLost() {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        var journal: [JournalEntry] = []
        journal += QuietHoursTests.entries(state.onRequest(ControlRequest(command: .register(Recipient(
            id: "alice", grants: .critical, throttle: DeliveryThrottle(count: 2, seconds: 3600)))), from: client, at: Self.t0))
        let minute = { (n: Double) in Self.t0.addingTimeInterval(n * 60) }
        journal += QuietHoursTests.entries(state.onRequest(ControlRequest(command: .schedule((1...4).map { n in
            Reminder(id: ReminderID("r\(n)"), recipient: "alice", content: Content(title: "t"), trigger: Trigger(start: .instant(minute(Double(n)))))
        } + [Reminder(
            id: "urgent", recipient: "alice", content: Content(title: "!", interruptionLevel: .critical),
            trigger: Trigger(start: .instant(minute(4))))])), from: client, at: Self.t0))
        var delivered: [String: Date] = [:]
        for now in [1, 2, 3, 4, 60, 61, 62].map(minute) + [minute(60.5), minute(61.5)] {
            let (entries, firings) = QuietHoursTests.tickAndAcknowledge(&state, at: now)
            journal += entries
            for firing in firings { delivered[firing.reminderId.rawValue] = now }
        }
        // Two in the first hour; r3 waits for r1's hour to pass, r4 for r2's; a granted critical goes through.
        #expect(delivered == ["r1": minute(1), "r2": minute(2), "r3": minute(61), "r4": minute(62), "urgent": minute(4)])
        let held = journal.compactMap { entry -> Date? in
            if case .attention(.held(_, _, _, _, _, let until, .throttle?, _)) = entry { return until }
            return nil
        }
        #expect(held == [minute(61), minute(62)], "both held by the throttle, and said so")
        var replayed = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        for entry in journal { replayed.apply(entry) }
        #expect(replayed.durable == state.durable)
        #expect(state.durable.recipients.throttleSlots["alice"] == ["": [minute(61), minute(62)]])
    }
}

/// Preferences in the coordinator: an opted-out category's occurrence is journaled as
/// suppressed with its reason, and the reminder moves on.
@Suite struct PreferenceCoordinatorTests {
    let client = ClientAddress(routing: [Data([1])])

    @Test func anOptedOutFiringIsRecordedNotDelivered() {
        let t0 = QuietHoursTests.t0
        var state = CoordinatorState(configuration: CoordinatorConfiguration(), startedAt: t0)
        state.finishRecovery(at: t0)
        _ = state.onRequest(ControlRequest(command: .register(Recipient(id: "alice", optedOutCategories: ["promo"]))), from: client, at: t0)
        _ = state.onRequest(ControlRequest(command: .schedule([
            Reminder(id: "sale", recipient: "alice", content: Content(title: "Sale", category: "promo"), trigger: Trigger(start: .instant(t0))),
        ])), from: client, at: t0)
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 8, delivered: 0), viaDispatch: true, at: t0)
        let directives = state.onTick(now: t0)
        #expect(QuietHoursTests.entries(directives) == [
            .suppressed(ReminderKey("sale", of: "alice"), dueAt: t0, next: nil, reason: "recipient opted out of category 'promo'", at: t0)
        ])
        #expect(!directives.contains { if case .dispatch = $0 { true } else { false } })
    }
}

/// Scheduled summaries: passive and active firings wait for the next summary time on the
/// recipient's clock, go out together with their ids, announced by one summary event ordered by
/// relevance score.
@Suite struct SummaryTests {
    let client = ClientAddress(routing: [Data([1])])

    @Test func firingsWaitForTheNextSummaryAndAreListedByRelevance() {
        let t0 = QuietHoursTests.t0  // 08:00Z = 09:00 in Berlin
        var state = CoordinatorState(configuration: CoordinatorConfiguration(), startedAt: t0)
        state.finishRecovery(at: t0)
        _ = state.onRequest(ControlRequest(command: .register(Recipient(
            id: "alice", zone: "Europe/Berlin", summaryTimes: [8 * 60, 18 * 60]))), from: client, at: t0)
        let at = { (hours: Double) in t0.addingTimeInterval(hours * 3600) }
        _ = state.onRequest(ControlRequest(command: .schedule([
            Reminder(id: "low", recipient: "alice", content: Content(title: "low", relevanceScore: 0.2), trigger: Trigger(start: .instant(at(1)))),
            Reminder(id: "high", recipient: "alice", content: Content(title: "high", relevanceScore: 0.9), trigger: Trigger(start: .instant(at(3)))),
        ])), from: client, at: t0)
        var summaries: [SummaryEvent] = []
        var dispatched: [ReminderID] = []
        // 18:00 in Berlin is 17:00Z, nine hours after t0.
        for now in [at(1), at(3), at(8.99), at(9)] {
            _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 8, delivered: 0), viaDispatch: true, at: now)
            for directive in state.onTick(now: now) {
                if case .publish(.summary(let event)) = directive { summaries.append(event) }
                if case .dispatch(let batch, _) = directive { dispatched += batch.firings.map(\.reminderId) }
            }
        }
        #expect(Set(dispatched) == ["low", "high"])
        #expect(summaries.count == 1)
        #expect(summaries.first?.at == at(9))
        #expect(summaries.first?.firings.map(\.reminderId) == ["high", "low"])
    }
}
