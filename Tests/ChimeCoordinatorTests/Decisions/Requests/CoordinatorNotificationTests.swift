import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator


/// The local-notification model in the coordinator: settings, badges, the delivered list,
/// actions, the on/off switch and remind-before. Pure, time passed in.
@Suite struct CoordinatorNotificationTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    func makeState(_ configure: (inout CoordinatorConfiguration) -> Void = { _ in }) -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        configure(&configuration)
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 0), viaDispatch: true, at: Self.t0)
        return state
    }

    @discardableResult
    func request(_ state: inout CoordinatorState, _ command: ControlRequest.Command, at now: Date = t0)
        -> (ControlOutcome, [CoordinatorDirective])
    {
        let directives = state.onRequest(ControlRequest(command: command), from: client, at: now)
        guard case .reply(let outcome, _, _)? = directives.last else { return (.failed(WireError(.internal, "")), directives) }
        return (outcome, directives)
    }

    func oneShot(_ id: ReminderID, to recipient: RecipientID = "alice", content: Content, at instant: Date = t0) -> Reminder {
        Reminder(id: id, recipient: recipient, content: content, trigger: Trigger(start: .instant(instant)))
    }

    /// Fires what is due and acknowledges every firing; returns the badge numbers published.
    func deliver(_ state: inout CoordinatorState, at now: Date = t0) -> (firings: [Firing], badges: [Int]) {
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 0), viaDispatch: true, at: now)
        let firings = state.onTick(now: now).flatMap { directive -> [Firing] in
            if case .dispatch(let batch, _) = directive { return batch.firings }
            return []
        }
        let acks = firings.map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: now, attempt: $0.attempt, epoch: 1) }
        let directives = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 0, acks: acks), at: now)
        return (firings, badges(directives))
    }

    func badges(_ directives: [CoordinatorDirective]) -> [Int] {
        directives.compactMap { if case .publish(.badge(let event)) = $0 { event.badge } else { nil } }
    }

    func category() -> NotificationCategory {
        NotificationCategory(identifier: "todo", actions: [
            NotificationAction(identifier: "snooze", title: "Snooze"),
            NotificationAction(identifier: "delete", title: "Delete", destructive: true, authenticationRequired: true),
        ])
    }

    @Test(arguments: [(3, [3]), (0, []), (-1, [])])
    func firingBadgeFollowsTheIOSRules(badge: Int, published: [Int]) {
        var state = makeState()
        request(&state, .schedule([oneShot("r", content: Content(body: "x", badge: badge))]))
        #expect(deliver(&state).badges == published)
    }

    @Test func negativeBadgeClearsAnExistingBadge() {
        var state = makeState()
        request(&state, .badge("alice", 4))
        request(&state, .schedule([oneShot("r", content: Content(body: "x", badge: -1))]))
        #expect(deliver(&state).badges == [0])
    }

    @Test func incrementBadgeCountsUnhandledFiringsAndHandlingDecrements() {
        var state = makeState()
        request(&state, .schedule([
            oneShot("a", content: Content(body: "a", badgeChange: .increment)),
            oneShot("b", content: Content(body: "b", badgeChange: .increment)),
            oneShot("c", content: Content(body: "c", badgeChange: .increment)),
        ]))
        let (firings, published) = deliver(&state)
        #expect(published == [1, 2, 3])
        let (acked, directives) = request(&state, .ack(firings[0].firingId))
        #expect(acked == .badge(BadgeResult(recipient: "alice", badge: 2, changed: true)))
        #expect(badges(directives) == [2])
        #expect(directives.first == .append(.handled(firings[0].firingId, action: nil, at: Self.t0)))
        let (again, repeated) = request(&state, .ack(firings[0].firingId))
        #expect(again == .badge(BadgeResult(recipient: "alice", badge: 2, changed: false)))
        #expect(badges(repeated).isEmpty)
        let (listed, _) = request(&state, .delivered("alice", remove: nil))
        guard case .delivered(let delivered) = listed else { Issue.record("\(listed)"); return }
        #expect(delivered.delivered.map(\.reminderId) == ["c", "b"], "newest first")
    }

    /// Issue 42, case (e): the first ack of a firing without a badge change handles it.
    @Test func firstAckOfAFiringWithoutABadgeChangeReportsItHandled() {
        var state = makeState()
        request(&state, .schedule([oneShot("plain", content: Content(body: "no badge"))]))
        let (firings, published) = deliver(&state)
        #expect(published.isEmpty)
        let (acked, directives) = request(&state, .ack(firings[0].firingId))
        #expect(acked == .badge(BadgeResult(recipient: "alice", badge: 0, changed: true)))
        #expect(badges(directives).isEmpty, "the badge stays 0: nothing to publish")
        let (again, _) = request(&state, .ack(firings[0].firingId))
        #expect(again == .badge(BadgeResult(recipient: "alice", badge: 0, changed: false)))
        let (listed, _) = request(&state, .delivered("alice", remove: nil))
        guard case .delivered(let delivered) = listed else { Issue.record("\(listed)"); return }
        #expect(delivered.delivered.isEmpty)
    }

    @Test func badgeZeroClearsTheDeliveredList() {
        var state = makeState()
        request(&state, .schedule([oneShot("a", content: Content(body: "a", badge: 5))]))
        _ = deliver(&state)
        let (outcome, directives) = request(&state, .badge("alice", 0))
        #expect(outcome == .badge(BadgeResult(recipient: "alice", badge: 0, changed: true)))
        #expect(badges(directives) == [0])
        let (listed, _) = request(&state, .delivered("alice", remove: nil))
        #expect(listed == .delivered(DeliveredResult(recipient: "alice", badge: 0, delivered: [])))
    }

    @Test func partsTheRecipientDidNotAllowAreStripped() {
        var state = makeState()
        request(&state, .register(Recipient(id: "alice", settings: [.sound])))
        request(&state, .schedule([oneShot("r", content: Content(title: "T", body: "B", sound: "default", badge: 2))]))
        let (firings, published) = deliver(&state)
        #expect(firings.map(\.content) == [Content(sound: "default")])
        #expect(published.isEmpty, "badge not allowed")
    }

    @Test func recipientThatAllowsNothingGetsASuppressedRecord() {
        var state = makeState()
        request(&state, .register(Recipient(id: "bob", settings: [])))
        request(&state, .schedule([oneShot("r", to: "bob", content: Content(body: "hidden"))]))
        let directives = state.onTick(now: Self.t0)
        #expect(directives == [.append(.suppressed(
            ReminderKey("r", of: "bob"), dueAt: Self.t0, next: nil, reason: DeliveryPlan.allowsNothingReason, at: Self.t0))])
        let (listed, _) = request(&state, .list(ReminderFilter(), all: true, limit: nil))
        guard case .listed(let list) = listed else { Issue.record("\(listed)"); return }
        #expect(list.reminders.map(\.state) == [.suppressed])
    }

    @Test func requireRegistrationSuppressesUnregisteredRecipients() {
        var state = makeState { $0.requireRegistration = true }
        request(&state, .schedule([oneShot("r", to: "stranger", content: Content(body: "x"))]))
        #expect(deliver(&state).firings.isEmpty)
    }

    @Test func actionMustBelongToTheFiringsCategoryAndAuthenticatedOnesNeedTheToken() {
        var state = makeState()
        request(&state, .register(Recipient(id: "alice", categories: [category()], token: "s3cret")))
        request(&state, .schedule([oneShot("r", content: Content(body: "x", category: "todo"))]))
        let firingId = deliver(&state).firings[0].firingId
        func act(_ action: String, token: String? = nil) -> (ControlOutcome, [CoordinatorDirective]) {
            request(&state, .act(firingId: firingId, action: action, text: nil, token: token, snoozeSeconds: nil))
        }
        let (unknown, _) = act("reply")
        guard case .failed(let unknownError) = unknown else { Issue.record("\(unknown)"); return }
        #expect(unknownError.code == .invalidArgument)
        let (refused, refusedDirectives) = act("delete", token: "wrong")
        guard case .failed(let authError) = refused else { Issue.record("\(refused)"); return }
        #expect(authError.code == .unauthenticated)
        #expect(refusedDirectives.count == 1, "nothing journaled, nothing dispatched")
        let (accepted, directives) = act("delete", token: "s3cret")
        guard case .job(let job) = accepted else { Issue.record("\(accepted)"); return }
        #expect(job.status == "pending")
        #expect(job.job.destructive)
        #expect(directives.contains(.append(.acted(job.job, at: Self.t0))))
        let dispatched = state.onTick(now: Self.t0).compactMap { directive -> [ActionJob]? in
            if case .dispatch(let batch, "w1") = directive { return batch.jobs }
            return nil
        }
        #expect(dispatched == [[job.job]])
    }

    @Test func snoozeSchedulesAOneShotRefiringWithANewFiringID() {
        var state = makeState()
        request(&state, .register(Recipient(id: "alice", categories: [category()])))
        request(&state, .schedule([oneShot("r", content: Content(body: "x", category: "todo"))]))
        let firingId = deliver(&state).firings[0].firingId
        let (accepted, _) = request(&state, .act(firingId: firingId, action: "snooze", text: nil, token: nil, snoozeSeconds: 300))
        guard case .job(let job) = accepted else { Issue.record("\(accepted)"); return }
        #expect(job.job.snoozeSeconds == 300)
        _ = state.onTick(now: Self.t0)
        let outcome = ActionOutcome(
            jobId: job.job.jobId, status: .completed, reason: "snoozed", effects: [.refire(at: Self.t0.addingTimeInterval(300))])
        var message = WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 0)
        message.outcomes = [outcome]
        let directives = state.onWorkerMessage(message, at: Self.t0)
        #expect(directives.contains(.append(.actionFinished(outcome, at: Self.t0))))
        let refired = deliver(&state, at: Self.t0.addingTimeInterval(300)).firings
        #expect(refired.map(\.firingId.text) == ["alice/r.snooze-1798099500000@2026-12-24T08:05:00.000Z"])
        #expect(state.jobResult(job.job.jobId) == .job(JobResult(status: "completed", job: job.job, outcome: outcome)))
    }

    @Test func snoozeIsBuiltInForAReminderWithoutACategory() {
        var state = makeState()
        request(&state, .schedule([oneShot("plain", content: Content(body: "x"))]))
        let firingId = deliver(&state).firings[0].firingId
        let (accepted, _) = request(&state, .act(firingId: firingId, action: "snooze", text: nil, token: nil, snoozeSeconds: nil))
        guard case .job(let job) = accepted else { Issue.record("\(accepted)"); return }
        #expect(job.job.snoozeSeconds == 600, "notifications.snoozeSeconds")
        #expect(job.job.activationMode == .background)
        #expect(job.job.category == nil)
        let (other, _) = request(&state, .act(firingId: firingId, action: "reply", text: nil, token: nil, snoozeSeconds: nil))
        guard case .failed(let error) = other else { Issue.record("\(other)"); return }
        #expect(error.message == "plain has no category, so only open, dismiss and snooze apply")
    }

    @Test func disabledReminderKeepsItsRecordAndEnablingResumesFromNowWithoutABurst() {
        var state = makeState()
        let daily = Reminder(id: "d", recipient: "alice", content: Content(body: "d"),
                             trigger: Trigger(start: .instant(Self.t0), repeatRule: RepeatRule(unit: .day, interval: 1)))
        request(&state, .schedule([daily]), at: Self.t0.addingTimeInterval(-60))
        let (off, _) = request(&state, .setEnabled(["d"], false))
        #expect(off == .switched(SwitchResult(changed: ["d"])))
        #expect(deliver(&state, at: Self.t0).firings.isEmpty)
        let later = Self.t0.addingTimeInterval(3 * 86_400 + 3600)
        request(&state, .setEnabled(["d"], true), at: later)
        #expect(deliver(&state, at: later).firings.isEmpty, "no burst of the three missed days")
        let next = deliver(&state, at: Self.t0.addingTimeInterval(4 * 86_400)).firings
        #expect(next.map(\.dueAt) == [Self.t0.addingTimeInterval(4 * 86_400)])
        let (missing, _) = request(&state, .setEnabled(["nope"], true))
        guard case .failed(let error) = missing else { Issue.record("\(missing)"); return }
        #expect(error.code == .notFound)
    }

    @Test func remindBeforeFiresEarlyAndKeepsTheEventTime() {
        var state = makeState()
        let event = Self.t0.addingTimeInterval(3600)
        let reminder = Reminder(id: "m", recipient: "alice", content: Content(body: "meeting"),
                                trigger: Trigger(start: .instant(event), offset: 300))
        let (scheduled, _) = request(&state, .schedule([reminder]))
        guard case .scheduled(let result, _) = scheduled else { Issue.record("\(scheduled)"); return }
        #expect(result.scheduled.first?.nextFireAt == event.addingTimeInterval(-300))
        let firings = deliver(&state, at: event.addingTimeInterval(-300)).firings
        #expect(firings.map(\.dueAt) == [event.addingTimeInterval(-300)])
        #expect(firings.map(\.eventAt) == [event])
    }

    @Test func naggingRealertsUntilHandled() {
        var state = makeState()
        var reminder = oneShot("n", content: Content(body: "take pills", badge: 1))
        reminder.nag = NagPolicy(count: 3, interval: 600)
        request(&state, .schedule([reminder]))
        let first = deliver(&state).firings
        let nag1 = deliver(&state, at: Self.t0.addingTimeInterval(600))
        #expect(nag1.firings.map(\.firingId.text) == ["alice/n@2026-12-24T08:00:00.000Z#nag1"])
        #expect(nag1.firings.map(\.content.badgeChange) == [nil], "a re-alert does not move the badge")
        request(&state, .ack(first[0].firingId), at: Self.t0.addingTimeInterval(700))
        #expect(deliver(&state, at: Self.t0.addingTimeInterval(1800)).firings.isEmpty, "handling cancelled nags 2 and 3")
    }

    @Test func unusableNamedSoundFallsBackToDefaultWithAWarning() {
        var state = makeState()
        let schedule = ControlRequest(command: .schedule([
            oneShot("good", content: Content(body: "x", sound: "chime.caf")),
            oneShot("bad", content: Content(body: "x", sound: "missing.wav")),
        ]))
        let directives = state.onRequest(
            schedule, from: client, at: Self.t0, soundProblems: ["missing.wav": "is not in the sounds directory"])
        guard case .reply(.scheduled(_, let warnings), _, _)? = directives.last else { Issue.record("\(directives)"); return }
        #expect(warnings == ["bad: sound missing.wav is not in the sounds directory; scheduled with the default sound"])
        #expect(deliver(&state).firings.map(\.content.sound) == ["chime.caf", "default"])
    }

    @Test func truncateToMinuteDropsTheSeconds() {
        var state = makeState { $0.truncateToMinute = true }
        request(&state, .schedule([oneShot("t", content: Content(body: "x"), at: Self.t0.addingTimeInterval(90.5))]))
        #expect(deliver(&state, at: Self.t0.addingTimeInterval(60)).firings.map(\.dueAt) == [Self.t0.addingTimeInterval(60)])
    }

    @Test func onlyTheSoonestFiringsUnderTheRecipientsCapAreArmed() {
        var state = makeState()
        request(&state, .register(Recipient(id: "alice", maxPending: 2)))
        request(&state, .schedule((1...4).map { oneShot(ReminderID("r\($0)"), content: Content(body: "x"), at: Self.t0.addingTimeInterval(Double($0) * 10)) }))
        func armed() -> [String] {
            let (outcome, _) = request(&state, .list(ReminderFilter(recipient: "alice"), all: false, limit: nil))
            guard case .listed(let list) = outcome else { return [] }
            return list.reminders.filter { $0.armed == true }.map(\.reminder.id.rawValue)
        }
        #expect(armed() == ["r1", "r2"])
        #expect(deliver(&state, at: Self.t0.addingTimeInterval(10)).firings.map(\.reminderId) == ["r1"])
        #expect(armed() == ["r2", "r3"], "r3 promoted into the freed slot")
        request(&state, .cancel(ReminderFilter(ids: ["r2"])))
        #expect(armed() == ["r3", "r4"])
        #expect(deliver(&state, at: Self.t0.addingTimeInterval(40)).firings.map(\.reminderId) == ["r3", "r4"])
    }

    @Test func recipientZoneRemindersMoveWithTheRecipientAndAbsoluteOnesDoNot() {
        var state = makeState()
        request(&state, .register(Recipient(id: "alice", zone: "Europe/Berlin")))
        let nine = LocalDateTime(year: 2026, month: 12, day: 25, hour: 9, minute: 0, second: 0)
        let floating = Reminder(id: "f", recipient: "alice", content: Content(body: "f"),
                                trigger: Trigger(start: .wallClock(nine, zoneIdentifier: "recipient"), repeatRule: RepeatRule(unit: .day, interval: 1)))
        let absolute = oneShot("a", content: Content(body: "a"), at: Self.t0.addingTimeInterval(86_400))
        request(&state, .schedule([floating, absolute]))
        func next() -> [String: String] {
            let (outcome, _) = request(&state, .list(ReminderFilter(), all: false, limit: nil))
            guard case .listed(let list) = outcome else { return [:] }
            return Dictionary(uniqueKeysWithValues: list.reminders.map { ($0.reminder.id.rawValue, $0.nextFireAt.map(RFC3339.format) ?? "-") })
        }
        #expect(next() == ["f": "2026-12-25T08:00:00.000Z", "a": "2026-12-25T08:00:00.000Z"])
        request(&state, .register(Recipient(id: "alice", zone: "Asia/Tokyo")))
        #expect(next() == ["f": "2026-12-25T00:00:00.000Z", "a": "2026-12-25T08:00:00.000Z"])
    }

    @Test func replayRebuildsRecipientsBadgesAndTheDeliveredList() {
        var live = makeState()
        var entries: [JournalEntry] = []
        func journal(_ directives: [CoordinatorDirective]) {
            entries += directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
        }
        journal(request(&live, .register(Recipient(id: "alice", settings: [.alert, .badge]))).1)
        journal(request(&live, .schedule([
            oneShot("a", content: Content(body: "a", badgeChange: .increment)),
            oneShot("b", content: Content(body: "b", badgeChange: .increment)),
        ])).1)
        let ticked = live.onTick(now: Self.t0)
        journal(ticked)
        let firings = ticked.flatMap { directive -> [Firing] in
            if case .dispatch(let batch, _) = directive { return batch.firings }
            return []
        }
        let acks = firings.map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: Self.t0, attempt: 1, epoch: 1) }
        journal(live.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, delivered: 2, acks: acks), at: Self.t0))
        journal(request(&live, .ack(firings[0].firingId)).1)

        var recovered = makeState()
        for entry in entries { recovered.apply(entry) }
        recovered.finishRecovery(at: Self.t0)
        #expect(request(&recovered, .recipient("alice")).0 == request(&live, .recipient("alice")).0)
        #expect(request(&recovered, .delivered("alice", remove: nil)).0 == request(&live, .delivered("alice", remove: nil)).0)
    }

    // MARK: - Every recipient-zone path (issue 16)

    func floatingOneShot(_ id: ReminderID, at local: LocalDateTime) -> Reminder {
        Reminder(
            id: id, recipient: "alice", content: Content(body: "\(id)"),
            trigger: Trigger(start: .wallClock(local, zoneIdentifier: CoordinatorState.recipientZone)))
    }

    func nextFire(_ state: inout CoordinatorState, _ id: ReminderID) -> (ReminderState?, String?) {
        let (outcome, _) = request(&state, .list(ReminderFilter(ids: [id]), all: true, limit: nil))
        guard case .listed(let list) = outcome, let listing = list.reminders.first else { return (nil, nil) }
        return (listing.state, listing.nextFireAt.map(RFC3339.format))
    }

    @Test func aFloatingOneShotMovedIntoThePastByAZoneChangeFiresAtOnce() {
        var state = makeState()
        // 2026-12-24 15:00 in the recipient's zone: UTC until it registers one.
        request(&state, .schedule([floatingOneShot("tea", at: LocalDateTime(year: 2026, month: 12, day: 24, hour: 15, minute: 0, second: 0))]))
        #expect(nextFire(&state, "tea") == (.pending, "2026-12-24T15:00:00.000Z"))
        // Tokyo is UTC+9: 15:00 there is 06:00Z, two hours before now (08:00Z).
        request(&state, .register(Recipient(id: "alice", zone: "Asia/Tokyo")))
        #expect(nextFire(&state, "tea") == (.pending, "2026-12-24T06:00:00.000Z"))
        let fired = deliver(&state).firings
        #expect(fired.map(\.firingId.text) == ["alice/tea@2026-12-24T06:00:00.000Z"])
        #expect(fired.map(\.late) == [false], "not a misfire: the coordinator was running")
        #expect(nextFire(&state, "tea").0 == .delivered)
    }

    @Test func aFloatingOneShotMovedLaterOrEarlierInTheFutureIsReArmed() {
        var state = makeState()
        request(&state, .register(Recipient(id: "alice", zone: "Europe/Berlin")))
        request(&state, .schedule([floatingOneShot("tea", at: LocalDateTime(year: 2026, month: 12, day: 24, hour: 20, minute: 0, second: 0))]))
        #expect(nextFire(&state, "tea") == (.pending, "2026-12-24T19:00:00.000Z"))
        request(&state, .register(Recipient(id: "alice", zone: "America/New_York")))
        #expect(nextFire(&state, "tea") == (.pending, "2026-12-25T01:00:00.000Z"))
        request(&state, .register(Recipient(id: "alice", zone: "Asia/Tokyo")))
        #expect(nextFire(&state, "tea") == (.pending, "2026-12-24T11:00:00.000Z"))
        #expect(deliver(&state).firings.isEmpty, "11:00Z is still ahead of 08:00Z")
        #expect(deliver(&state, at: Self.t0.addingTimeInterval(3 * 3600)).firings.map(\.firingId.text) == ["alice/tea@2026-12-24T11:00:00.000Z"])
    }

    @Test func aDisabledFloatingReminderFollowsTheZoneWhenEnabledAgain() {
        var state = makeState()
        request(&state, .schedule([floatingOneShot("tea", at: LocalDateTime(year: 2026, month: 12, day: 24, hour: 20, minute: 0, second: 0))]))
        request(&state, .setEnabled(["tea"], false))
        request(&state, .register(Recipient(id: "alice", zone: "Asia/Tokyo")))
        #expect(nextFire(&state, "tea").0 == .disabled)
        request(&state, .setEnabled(["tea"], true))
        #expect(nextFire(&state, "tea") == (.pending, "2026-12-24T11:00:00.000Z"))
    }

    @Test func aZoneChangeDuringReplayMovesTheOneShotAsItDidLive() {
        var live = makeState()
        var entries: [JournalEntry] = []
        func journal(_ directives: [CoordinatorDirective]) {
            entries += directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
        }
        journal(request(&live, .schedule([floatingOneShot("tea", at: LocalDateTime(year: 2026, month: 12, day: 24, hour: 15, minute: 0, second: 0))])).1)
        journal(request(&live, .register(Recipient(id: "alice", zone: "Asia/Tokyo"))).1)
        var recovered = makeState()
        for entry in entries { recovered.apply(entry) }
        recovered.finishRecovery(at: Self.t0)
        #expect(nextFire(&recovered, "tea") == nextFire(&live, "tea"))
        #expect(deliver(&recovered).firings.map(\.firingId.text) == ["alice/tea@2026-12-24T06:00:00.000Z"])
    }
}
