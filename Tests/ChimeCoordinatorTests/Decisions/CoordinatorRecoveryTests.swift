import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


/// Recovery from the journal and snapshots, and misfire policies: pure, time passed in.
@Suite struct CoordinatorRecoveryTests {
    static let noon = Date(timeIntervalSince1970: 1_798_113_600)  // 2026-12-24T12:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    func makeState() -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        var state = CoordinatorState(configuration: configuration, startedAt: Self.noon)
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 0), viaDispatch: true, at: Self.noon)
        return state
    }

    /// Runs `directives` through a journal as the service would, returning the entries.
    func journal(_ directives: [CoordinatorDirective]) -> [JournalEntry] {
        directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
    }

    func schedule(_ state: inout CoordinatorState, _ reminders: [Reminder], at now: Date) -> [JournalEntry] {
        journal(state.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: now))
    }

    func recover(_ entries: [JournalEntry], at now: Date) -> CoordinatorState {
        var state = makeState()
        for entry in entries { state.apply(entry) }
        state.finishRecovery(at: now)
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 2, delivered: 0), viaDispatch: true, at: now)
        return state
    }

    func daily(_ id: ReminderID, at hour: Int, misfire: MisfirePolicy? = nil, threshold: Double? = nil) -> Reminder {
        let start = LocalDateTime(year: 2026, month: 12, day: 24, hour: hour, minute: 0, second: 0)
        return Reminder(
            id: id, recipient: "alice", content: Content(body: "\(id)"),
            trigger: Trigger(
                start: .wallClock(start, zoneIdentifier: "UTC"), repeatRule: RepeatRule(unit: .day, interval: 1),
                misfire: misfire, misfireThreshold: threshold))
    }

    func listing(_ state: inout CoordinatorState, at now: Date) -> [ReminderListing] {
        let directives = state.onRequest(ControlRequest(command: .list(ReminderFilter(), all: true, limit: nil)), from: client, at: now)
        guard case .reply(.listed(let list), _, _)? = directives.last else { return [] }
        return list.reminders
    }

    func firings(_ directives: [CoordinatorDirective]) -> [Firing] {
        directives.flatMap { directive -> [Firing] in
            if case .dispatch(let batch, _) = directive { return batch.firings }
            return []
        }
    }

    @Test func replayRebuildsTheScheduleAndRedeliversWhatWasNeverAcknowledged() {
        var live = makeState()
        var entries = schedule(&live, [
            Reminder(id: "acked", recipient: "a", content: Content(), trigger: Trigger(start: .instant(Self.noon))),
            Reminder(id: "unacked", recipient: "a", content: Content(), trigger: Trigger(start: .instant(Self.noon))),
            Reminder(id: "later", recipient: "b", content: Content(title: "x"), trigger: Trigger(start: .instant(Self.noon.addingTimeInterval(3600)))),
        ], at: Self.noon.addingTimeInterval(-60))
        let tick = live.onTick(now: Self.noon)
        entries += journal(tick)
        let acked = firings(tick).filter { $0.reminderId == "acked" }
        let ack = WorkerMessage.Acknowledgement(firingId: acked[0].firingId, firedAt: Self.noon, attempt: 1, epoch: 1)
        entries += journal(live.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 1, acks: [ack]), at: Self.noon))

        var recovered = recover(entries, at: Self.noon.addingTimeInterval(30))
        #expect(listing(&recovered, at: Self.noon) == listing(&live, at: Self.noon))
        let redelivered = firings(recovered.onTick(now: Self.noon.addingTimeInterval(30)))
        #expect(redelivered.map(\.firingId.text) == ["a/unacked@2026-12-24T12:00:00.000Z"])
        #expect(redelivered.map(\.attempt) == [1], "a coordinator crash is not a failed attempt of the firing")
        #expect(recovered.inFlightCount == 1, "the redelivery is in flight")
        #expect(recovered.schedule.nextDeadline == Self.noon.addingTimeInterval(3600), "\"later\" stays armed")
    }

    @Test func snapshotPlusLaterEntriesEqualsTheFullJournal() throws {
        var live = makeState()
        var before = schedule(&live, (0..<20).map { daily(ReminderID("d\($0)"), at: 13 + $0 % 5) }, at: Self.noon)
        before += journal(live.onTick(now: Self.noon.addingTimeInterval(3600)))
        let data = live.encodedSnapshot()
        var after = schedule(&live, [daily("late", at: 20)], at: Self.noon.addingTimeInterval(3700))
        after += journal(live.onRequest(ControlRequest(command: .cancel(ReminderFilter(ids: ["d3"]))), from: client, at: Self.noon.addingTimeInterval(3800)))

        var fromSnapshot = makeState()
        try fromSnapshot.load(snapshot: data)
        for entry in after { fromSnapshot.apply(entry) }
        fromSnapshot.finishRecovery(at: Self.noon.addingTimeInterval(3900))
        let fromJournal = recover(before + after, at: Self.noon.addingTimeInterval(3900))
        var a = fromSnapshot
        var b = fromJournal
        // Read when recovered: before 13:00 the firings made at 13:00 have not fired, and a
        // reading from before them would show them pending.
        let listed = listing(&a, at: Self.noon.addingTimeInterval(3900))
        #expect(listed.count == 20)
        #expect(listed == listing(&b, at: Self.noon.addingTimeInterval(3900)))
        #expect(a.waitingCount == b.waitingCount)
    }

    @Test func snapshotKeepsCapsZonesAndAnswers() throws {
        var live = makeState()
        var entries = journal(live.onRequest(
            ControlRequest(command: .register(Recipient(id: "alice", zone: "Asia/Tokyo", maxPending: 1))), from: client,
            at: Self.noon))
        let nine = LocalDateTime(year: 2026, month: 12, day: 25, hour: 9, minute: 0, second: 0)
        let local = Reminder(
            id: "local", recipient: "alice", content: Content(body: "tea"),
            trigger: Trigger(start: .wallClock(nine, zoneIdentifier: CoordinatorState.recipientZone),
                             repeatRule: RepeatRule(unit: .day, interval: 1)))
        let later = Reminder(id: "later", recipient: "alice", content: Content(), trigger: Trigger(start: .instant(Self.noon.addingTimeInterval(86_400 * 3))))
        entries += journal(live.onRequest(ControlRequest(requestId: "q1", command: .schedule([local, later])), from: client, at: Self.noon))
        var loaded = makeState()
        try loaded.load(snapshot: live.encodedSnapshot(at: Self.noon))
        loaded.finishRecovery(at: Self.noon)
        var replayed = recover(entries, at: Self.noon)
        var reference = live
        let listed = listing(&loaded, at: Self.noon)
        #expect(listed == listing(&reference, at: Self.noon))
        #expect(listed == listing(&replayed, at: Self.noon))
        // Listings come in id order: "later", then "local".
        #expect(listed.map(\.reminder.id) == ["later", "local"])
        #expect(listed.map(\.armed) == [false, true], "alice's cap of 1 still holds back the later one")
        #expect(listed.last?.nextFireAt == Date(timeIntervalSince1970: 1_798_156_800), "09:00 in Tokyo, 2026-12-25T00:00:00Z")
        let retry = loaded.onRequest(ControlRequest(requestId: "q1", command: .schedule([local])), from: client, at: Self.noon)
        guard case .replyEncoded(let reply, _)? = retry.first, retry.count == 1 else {
            Issue.record("the remembered answer survives the snapshot: \(retry)")
            return
        }
        #expect(try WireCodec().decode(ControlReply<ScheduleResult>.self, from: reply).result?.scheduled.map(\.id) == ["local", "later"])
    }

    @Test func recoveryResumesEventSeqsAfterTheReservedBlock() {
        var live = makeState()
        var entries = schedule(&live, [Reminder(id: "a", recipient: "a", content: Content(), trigger: Trigger(start: .instant(Self.noon)))], at: Self.noon.addingTimeInterval(-1))
        entries += journal(live.onTick(now: Self.noon))
        var state = makeState()
        for entry in entries { state.apply(entry) }
        let reservation = state.configuration.eventSeqReservation
        #expect(entries.contains(.seqReserved(through: 1 + reservation)), "the first dispatch reserved a block")
        state.finishRecovery(at: Self.noon.addingTimeInterval(10))
        _ = state.onRequest(ControlRequest(command: .schedule([Reminder(id: "b", recipient: "a", content: Content(), trigger: Trigger(start: .instant(Self.noon)))])), from: client, at: Self.noon.addingTimeInterval(10))
        let seqs = firings(state.onTick(now: Self.noon.addingTimeInterval(10))).compactMap(\.seq).sorted()
        #expect(seqs == [2 + reservation, 3 + reservation])
    }

    /// Found by the crash-equivalence test: the delivered count was read as a length, so a
    /// snapshot whose last reminder had delivered more times than bytes followed was refused.
    @Test func snapshotKeepsADeliveredCountLargerThanTheBytesAfterIt() throws {
        let reminder = Reminder(id: "r", recipient: "a", content: Content(), trigger: Trigger(start: .instant(Self.noon)))
        var durable = makeState().durable
        durable.apply(.scheduled(reminder, at: Self.noon))
        var entry = try #require(durable.schedule.entries[ReminderKey("r", of: "a")])
        entry.state = .delivered
        entry.deliveredCount = 500
        entry.lastFiredAt = Self.noon
        durable.schedule.entries[ReminderKey("r", of: "a")] = entry
        durable.schedule.timer.remove(ReminderKey("r", of: "a"))
        var loaded = makeState()
        try loaded.load(snapshot: durable.encodedSnapshot(takenAt: Self.noon))
        #expect(loaded.entries[ReminderKey("r", of: "a")]?.deliveredCount == 500)
        #expect(loaded.entries[ReminderKey("r", of: "a")]?.lastFiredAt == Self.noon)
        #expect(loaded.durable == durable)
    }

    /// Counters read from the store saturate instead of trapping.
    @Test func extremeCountersFromTheStoreDoNotTrap() throws {
        var durable = makeState().durable
        var firing = Firing(reminderId: "x", recipient: "a", dueAt: Self.noon, content: Content(), attempt: Int.max)
        firing.seq = nil
        durable.deliveries.unsettled[firing.firingId] = SharedFiring(firing)
        durable.deliveries.eventSeqReserved = .max
        durable.schedule.lateFirings[ReminderKey("x", of: "a")] = Int.max
        var state = makeState()
        try state.load(snapshot: durable.encodedSnapshot(takenAt: Self.noon))
        state.apply(.leaseExpired(firing.firingId, at: Self.noon))
        state.finishRecovery(at: Self.noon)
        let dispatched = firings(state.onTick(now: Self.noon))
        #expect(dispatched.map(\.attempt) == [Int.max])
        #expect(dispatched.map(\.seq) == [UInt64.max])
        #expect(state.durable.deliveries.eventSeqReserved == .max)
    }

    @Test func snapshotFromANewerFormatIsRefused() {
        var state = makeState()
        var payload = [UInt8](state.encodedSnapshot())
        let header = String(decoding: payload, as: UTF8.self)
        #expect(header.contains("\"formatVersion\":5"))
        let marker = Array("\"formatVersion\":5".utf8)
        let at = (0...(payload.count - marker.count)).first { Array(payload[$0..<$0 + marker.count]) == marker }!
        payload[at + marker.count - 1] = UInt8(ascii: "9")
        #expect(throws: WireError(.invalidArgument, "")) { try state.load(snapshot: Data(payload)) }
        #expect(throws: WireError(.invalidArgument, "")) { try state.load(snapshot: Data([99, 0, 0, 0, 0])) }
    }

    @Test func fireOnceFiresOneLateFiringThenKeepsItsOwnSchedule() {
        var live = makeState()
        let entries = schedule(&live, [daily("six", at: 18)], at: Self.noon)
        // Down from 12:00 until 19:00: the 18:00 occurrence was missed.
        let restart = Self.noon.addingTimeInterval(7 * 3600)
        var state = recover(entries, at: restart)
        let fired = firings(state.onTick(now: restart))
        #expect(fired.map(\.dueAt) == [Self.noon.addingTimeInterval(6 * 3600)])
        #expect(fired.map(\.late) == [true])
        #expect(listing(&state, at: restart).first?.nextFireAt == Self.noon.addingTimeInterval(30 * 3600), "tomorrow 18:00, not 19:00")
    }

    @Test func skipFiresNothingLate() {
        var live = makeState()
        let entries = schedule(&live, [daily("six", at: 18, misfire: .skip)], at: Self.noon)
        let restart = Self.noon.addingTimeInterval(7 * 3600)
        var state = recover(entries, at: restart)
        #expect(firings(state.onTick(now: restart)).isEmpty)
        #expect(listing(&state, at: restart).first?.nextFireAt == Self.noon.addingTimeInterval(30 * 3600))
    }

    @Test func fireAllFiresEveryMissedOccurrenceThenContinues() {
        var live = makeState()
        let start = Self.noon.addingTimeInterval(60)
        let minutely = Reminder(
            id: "m", recipient: "a", content: Content(),
            trigger: Trigger(start: .instant(start), repeatRule: RepeatRule(unit: .minute, interval: 1), misfire: .fireAll))
        let entries = schedule(&live, [minutely], at: Self.noon)
        let restart = Self.noon.addingTimeInterval(5 * 60 + 30)
        var state = recover(entries, at: restart)
        var fired: [Firing] = []
        for _ in 0..<10 { fired += firings(state.onTick(now: restart)) }
        #expect(fired.map { Int($0.dueAt.timeIntervalSince(Self.noon)) } == [60, 120, 180, 240, 300])
        #expect(fired.allSatisfy { $0.late })
        #expect(listing(&state, at: restart).first?.nextFireAt == Self.noon.addingTimeInterval(360))
    }

    @Test func missedOccurrenceOlderThanTheThresholdIsSkipped() {
        var live = makeState()
        let entries = schedule(&live, [daily("six", at: 18, threshold: 1800)], at: Self.noon)
        let restart = Self.noon.addingTimeInterval(7 * 3600)
        var state = recover(entries, at: restart)
        #expect(firings(state.onTick(now: restart)).isEmpty, "an hour late is past the 30 min threshold")
        let recent = recover(entries, at: Self.noon.addingTimeInterval(6 * 3600 + 600))
        var recentState = recent
        #expect(firings(recentState.onTick(now: Self.noon.addingTimeInterval(6 * 3600 + 600))).count == 1)
    }

    @Test func oneShotDueWhileDownFiresLateOnce() {
        var live = makeState()
        let entries = schedule(&live, [Reminder(id: "once", recipient: "a", content: Content(), trigger: Trigger(start: .instant(Self.noon.addingTimeInterval(60))))], at: Self.noon)
        let restart = Self.noon.addingTimeInterval(600)
        var state = recover(entries, at: restart)
        let fired = firings(state.onTick(now: restart))
        #expect(fired.map(\.late) == [true])
        #expect(fired.map(\.firingId.text) == ["a/once@2026-12-24T12:01:00.000Z"])
    }

    // MARK: - Misfires judged on the newest missed occurrence (issue 16)

    func minutely(_ id: ReminderID, from start: Date, misfire: MisfirePolicy? = nil, threshold: Double? = nil) -> Reminder {
        Reminder(
            id: id, recipient: "a", content: Content(),
            trigger: Trigger(
                start: .instant(start), repeatRule: RepeatRule(unit: .minute, interval: 1), misfire: misfire,
                misfireThreshold: threshold))
    }

    @Test func fireOnceReportsTheNewestMissedOccurrenceAndHowManyItStandsFor() {
        var live = makeState()
        let entries = schedule(&live, [minutely("m", from: Self.noon.addingTimeInterval(60))], at: Self.noon)
        // Down until 12:05:30: 12:01 … 12:05 were missed.
        let restart = Self.noon.addingTimeInterval(330)
        var state = recover(entries, at: restart)
        let turn = state.onTick(now: restart)
        let fired = firings(turn)
        #expect(fired.map(\.firingId.text) == ["a/m@2026-12-24T12:05:00.000Z"])
        #expect(fired.map(\.missed) == [5] && fired.map(\.late) == [true])
        #expect(journal(turn).first == .fired(
            ReminderKey("m", of: "a"), dueAt: Self.noon.addingTimeInterval(300), next: Occurrence(index: 5, instant: Self.noon.addingTimeInterval(360)),
            late: true, missed: 5, at: restart))
        #expect(listing(&state, at: restart).first?.nextFireAt == Self.noon.addingTimeInterval(360))
        // The fold rebuilds the same firing from the entry alone.
        var recovered = recover(entries + journal(turn), at: restart)
        #expect(firings(recovered.onTick(now: restart)).map(\.missed) == [5])
    }

    @Test func theThresholdIsJudgedOnTheNewestMissedOccurrence() {
        var live = makeState()
        // A minute repeat, a 90 s threshold, 150 s down: the oldest missed (12:01) is 149 s
        // old, the newest (12:02) 89 s: it fires.
        let entries = schedule(&live, [minutely("m", from: Self.noon.addingTimeInterval(60), threshold: 90)], at: Self.noon)
        let restart = Self.noon.addingTimeInterval(209)
        var state = recover(entries, at: restart)
        let fired = firings(state.onTick(now: restart))
        #expect(fired.map(\.firingId.text) == ["a/m@2026-12-24T12:03:00.000Z"])
        #expect(fired.map(\.missed) == [3])
        // With a 30 s threshold, 31 s after the newest (12:05): skipped, and the reminder
        // goes on from the next minute.
        var strict = makeState()
        let strictEntries = schedule(&strict, [minutely("m", from: Self.noon.addingTimeInterval(60), threshold: 30)], at: Self.noon)
        let late = Self.noon.addingTimeInterval(331)
        var skipped = recover(strictEntries, at: late)
        let turn = skipped.onTick(now: late)
        #expect(firings(turn).isEmpty)
        #expect(journal(turn).first == .skipped(
            ReminderKey("m", of: "a"), dueAt: Self.noon.addingTimeInterval(300), next: Occurrence(index: 5, instant: Self.noon.addingTimeInterval(360)),
            at: late))
    }

    @Test func theDailyThresholdCaseFiresTheRecentOccurrenceAfterALongOutage() {
        var live = makeState()
        // Daily at 18:00 with a 2 h threshold, down from the 24th 12:00 to the 26th 19:00:
        // 24th and 25th are long past, the 26th's 18:00 is one hour old.
        let entries = schedule(&live, [daily("six", at: 18, threshold: 7200)], at: Self.noon)
        let restart = Self.noon.addingTimeInterval(2 * 86_400 + 7 * 3600)
        var state = recover(entries, at: restart)
        let fired = firings(state.onTick(now: restart))
        #expect(fired.map(\.firingId.text) == ["alice/six@2026-12-26T18:00:00.000Z"])
        #expect(fired.map(\.missed) == [3])
    }

    @Test func aOneShotSkippedByItsThresholdIsFinishedWithAReason() {
        var live = makeState()
        let once = Reminder(
            id: "once", recipient: "a", content: Content(),
            trigger: Trigger(start: .instant(Self.noon.addingTimeInterval(60)), misfireThreshold: 60))
        let entries = schedule(&live, [once], at: Self.noon)
        let restart = Self.noon.addingTimeInterval(600)
        var state = recover(entries, at: restart)
        #expect(firings(state.onTick(now: restart)).isEmpty)
        let listed = listing(&state, at: restart)
        #expect(listed.map(\.state) == [.finished])
        #expect(listed.map(\.reason) == ["skipped: misfire"])
        #expect(listed.map(\.deliveredCount) == [0])
    }

    @Test func aDeliveredOneShotHasNoReason() {
        var state = makeState()
        let once = Reminder(id: "once", recipient: "a", content: Content(), trigger: Trigger(start: .instant(Self.noon)))
        _ = schedule(&state, [once], at: Self.noon)
        let fired = firings(state.onTick(now: Self.noon))
        _ = state.onWorkerMessage(
            WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 1, acks: fired.map {
                .init(firingId: $0.firingId, firedAt: Self.noon, attempt: 1, epoch: 0)
            }), at: Self.noon)
        let listed = listing(&state, at: Self.noon)
        #expect(listed.map(\.state) == [.delivered] && listed.map(\.reason) == [nil])
    }
}
