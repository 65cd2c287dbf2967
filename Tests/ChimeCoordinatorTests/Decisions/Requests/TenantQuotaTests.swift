import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator
@testable import ChimeSecurity

/// Per-key quotas (issue 24): a restricted key's recipients hold at most so many reminders and
/// bytes; a `schedule` past either is refused whole with `quota_exceeded`; the counts are
/// derived from the entries, so a replay and a snapshot load rebuild them. Pure.
@Suite struct TenantQuotaTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)
    static let tenantA = RecipientScope(prefixes: ["a-"])
    let operatorAddress = ClientAddress(routing: [Data([9])])

    func tenant(_ scope: RecipientScope = tenantA, reminders: TenantQuota.Limit? = nil, bytes: TenantQuota.Limit? = nil) -> ClientAddress {
        ClientAddress(
            routing: [Data([1])], tenant: "key-\(scope.summary)", scope: scope,
            quota: TenantQuota(maxReminders: reminders, maxReminderBytes: bytes))
    }

    static func reminder(_ id: String, _ recipient: String = "a-ann", body: String = "x") -> Reminder {
        Reminder(
            id: ReminderID(id), recipient: RecipientID(recipient), content: Content(body: body),
            trigger: Trigger(start: .instant(t0.addingTimeInterval(3600))))
    }

    /// Schedules and returns the error code and message (`nil`: scheduled), with the entries journaled.
    @discardableResult
    func schedule(
        _ state: inout CoordinatorState, _ reminders: [Reminder], by client: ClientAddress, journal: inout [JournalEntry]
    ) -> WireError? {
        let directives = state.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: Self.t0)
        journal += directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
        guard case .reply(let outcome, _, _)? = directives.last else { return WireError(.internal, "no reply") }
        if case .failed(let error) = outcome { return error }
        return nil
    }

    func cancel(_ state: inout CoordinatorState, _ ids: [ReminderID], by client: ClientAddress, journal: inout [JournalEntry]) {
        let directives = state.onRequest(ControlRequest(command: .cancel(ReminderFilter(ids: ids))), from: client, at: Self.t0)
        journal += directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
    }

    @Test func nAreAllowedTheNextIsRefusedWholeAndACancelFreesOne() {
        var state = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        let alice = tenant(reminders: .atMost(5))
        #expect(schedule(&state, (1...3).map { Self.reminder("r\($0)") }, by: alice, journal: &journal) == nil)
        #expect(schedule(&state, [Self.reminder("r4"), Self.reminder("r5", "a-bea")], by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA).reminders == 5)

        let entriesBefore = journal.count
        let refused = schedule(&state, [Self.reminder("r6")], by: alice, journal: &journal)
        #expect(refused?.code == .quotaExceeded)
        #expect(refused?.field == "reminders")
        #expect(refused?.message
            == "this key's recipients (a-*) hold 5 reminders; 6 would pass the quota of 5 (max-reminders, else limits.tenantMaxReminders); cancel some first")
        #expect(journal.count == entriesBefore, "nothing of a refused request is journaled")
        #expect(state.reminderCount == 5)

        // Replacing one already held adds nothing; the same new id twice in one request counts once.
        #expect(schedule(&state, [Self.reminder("r1", body: "again")], by: alice, journal: &journal) == nil)
        cancel(&state, ["r2"], by: alice, journal: &journal)
        #expect(state.tenantUsage(of: Self.tenantA).reminders == 4)
        // Two new ids with one free place: refused whole, neither placed.
        #expect(schedule(&state, [Self.reminder("r7"), Self.reminder("r8")], by: alice, journal: &journal)?.code == .quotaExceeded)
        #expect(state.entries[ReminderKey("r7", of: "a-ann")] == nil)
        #expect(schedule(&state, [Self.reminder("r7"), Self.reminder("r7", body: "twice")], by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA).reminders == 5)
        #expect(state.reminderCount == 5)
    }

    @Test func anotherTenantAndTheOperatorAreNotCountedAgainstIt() {
        var state = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        let alice = tenant(reminders: .atMost(2))
        let bob = tenant(RecipientScope(prefixes: ["b-"]), reminders: .atMost(2))
        #expect(schedule(&state, [Self.reminder("r1"), Self.reminder("r2")], by: alice, journal: &journal) == nil)
        #expect(schedule(&state, [Self.reminder("r3")], by: alice, journal: &journal)?.code == .quotaExceeded)
        #expect(schedule(&state, [Self.reminder("r1", "b-bob"), Self.reminder("r2", "b-bob")], by: bob, journal: &journal) == nil)
        // The operator has no quota, but what it places for a-ann counts for alice's key.
        #expect(schedule(&state, [Self.reminder("op", "a-ann")], by: operatorAddress, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA).reminders == 3)
        // Over its quota, the tenant may still replace (nothing grows) but not add.
        #expect(schedule(&state, [Self.reminder("r1", body: "")], by: alice, journal: &journal) == nil)
        #expect(schedule(&state, [Self.reminder("r9")], by: alice, journal: &journal)?.code == .quotaExceeded)
    }

    @Test func theBytesQuotaCountsEachReminderAsItIsStored() {
        var state = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        let size = Self.reminder("r1").binaryEncoded().count
        let alice = tenant(bytes: .atMost(3 * size))
        #expect(schedule(&state, (1...3).map { Self.reminder("r\($0)") }, by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA) == TenantUsage.Usage(reminders: 3, bytes: 3 * size))
        let refused = schedule(&state, [Self.reminder("r4")], by: alice, journal: &journal)
        #expect(refused?.message
            == "this key's recipients (a-*) hold \(3 * size) bytes of reminders, registrations and delivered lists; \(4 * size) would pass the quota of \(3 * size) (max-reminder-bytes, else limits.tenantMaxReminderBytes); cancel some or remove delivered ones first")
        // A longer body for one held is more bytes too; a shorter one frees some.
        #expect(schedule(&state, [Self.reminder("r1", body: "xx")], by: alice, journal: &journal)?.code == .quotaExceeded)
        #expect(schedule(&state, [Self.reminder("r1", body: "")], by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA).bytes == 3 * size - 1)
        cancel(&state, ["r2"], by: alice, journal: &journal)
        #expect(schedule(&state, [Self.reminder("r4")], by: alice, journal: &journal) == nil)
    }

    @Test func theConfiguredDefaultsApplyToRestrictedKeysOnly() {
        var configuration = CoordinatorConfiguration()
        #expect(configuration.tenantMaxReminders == 100_000)
        #expect(configuration.tenantMaxReminderBytes == 64 << 20)
        configuration.tenantMaxReminders = 1
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        var journal: [JournalEntry] = []
        #expect(schedule(&state, [Self.reminder("r1")], by: tenant(), journal: &journal) == nil)
        #expect(schedule(&state, [Self.reminder("r2")], by: tenant(), journal: &journal)?.code == .quotaExceeded)
        #expect(schedule(&state, [Self.reminder("r2")], by: tenant(reminders: .unlimited), journal: &journal) == nil)
        #expect(schedule(&state, [Self.reminder("r3")], by: tenant(reminders: .atMost(3)), journal: &journal) == nil)
        // No recipient restriction, no quota: an unrestricted client or the operator.
        #expect(schedule(&state, [Self.reminder("r4"), Self.reminder("r5")], by: operatorAddress, journal: &journal) == nil)
    }

    @Test func aReplayAndASnapshotRebuildTheSameCounts() throws {
        var live = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        let alice = tenant(reminders: .atMost(100))
        let bob = tenant(RecipientScope(recipients: ["b-bob"]), reminders: .atMost(100))
        #expect(schedule(&live, (0..<40).map { Self.reminder("r\($0)", $0 % 3 == 0 ? "a-bea" : "a-ann", body: String(repeating: "x", count: $0)) },
                         by: alice, journal: &journal) == nil)
        let snapshot = live.encodedSnapshot(at: Self.t0)
        let journaledBeforeSnapshot = journal.count
        #expect(schedule(&live, (0..<7).map { Self.reminder("r\($0)", "b-bob") }, by: bob, journal: &journal) == nil)
        cancel(&live, (0..<10).map { ReminderID("r\($0)") }, by: alice, journal: &journal)
        #expect(schedule(&live, [Self.reminder("r11", body: "shorter")], by: alice, journal: &journal) == nil)
        let scopes = [Self.tenantA, RecipientScope(recipients: ["b-bob"]), RecipientScope(prefixes: ["a-b"])]
        // What a pass over the entries counts is what the table kept as they changed.
        func counted(_ state: CoordinatorState, _ scope: RecipientScope) -> TenantUsage.Usage {
            state.entries.reduce(into: TenantUsage.Usage()) { usage, element in
                guard scope.allows(element.value.recipient) else { return }
                usage.reminders += 1
                usage.bytes += element.value.storedBytes
            }
        }
        #expect(live.tenantUsage(of: Self.tenantA).reminders == 30)
        #expect(live.tenantUsage(of: Self.tenantA) == counted(live, Self.tenantA))

        var replayed = CoordinatorState(startedAt: Self.t0)
        // Tracked before the replay (followed entry by entry) and after it (one pass): equal.
        _ = replayed.tenantUsage(of: Self.tenantA)
        for entry in journal { replayed.apply(entry) }
        var loaded = CoordinatorState(startedAt: Self.t0)
        try loaded.load(snapshot: snapshot)
        _ = loaded.tenantUsage(of: Self.tenantA)
        for entry in journal.suffix(from: journaledBeforeSnapshot) { loaded.apply(entry) }
        for scope in scopes {
            let expected = live.tenantUsage(of: scope)
            #expect(replayed.tenantUsage(of: scope) == expected)
            #expect(loaded.tenantUsage(of: scope) == expected)
            #expect(counted(live, scope) == expected)
        }
        #expect(live.tenantUsage(of: RecipientScope(recipients: ["b-bob"])).reminders == 7)
    }

    @Test func aCertificateSetsTheQuotaAndGarbageIsRefused() throws {
        let scope = try #require(try AccessPolicy.scope(["recipient-prefixes": "a-"]))
        #expect(scope == Self.tenantA)
        #expect(try TenantQuota.read(["max-reminders": "5", "max-reminder-bytes": " unlimited "])
            == TenantQuota(maxReminders: .atMost(5), maxReminderBytes: .unlimited))
        #expect(try TenantQuota.read(["recipients": "x"]) == nil)
        for garbage in ["-1", "1e3", "", "5 6", "0x10", "9223372036854775808", "∞", "\u{0}"] {
            #expect(throws: SecurityError.self, "'\(garbage)'") { try TenantQuota.read(["max-reminders": garbage]) }
            #expect(throws: SecurityError.self, "'\(garbage)'") { try TenantQuota.read(["max-reminder-bytes": garbage]) }
        }
        let quota = TenantQuota(maxReminders: .atMost(0), maxReminderBytes: .atMost(1024))
        #expect(try TenantQuota.read(quota.metadata) == quota)
        let own = quota.resolved(defaultReminders: 7, defaultBytes: nil)
        #expect(own.reminders == 0 && own.bytes == 1024)
        let defaults = TenantQuota().resolved(defaultReminders: 7, defaultBytes: nil)
        #expect(defaults.reminders == 7 && defaults.bytes == nil)
    }

    /// Issue 37 item 3: delivered lists are durable bytes a tenant causes. A key that schedules
    /// reminders due now, lets them deliver and cancels them keeps its reminder count at 0
    /// while each recipient's delivered list grows (up to 1,000 firings, over any number of
    /// recipients); the byte quota now counts every listed firing, so the cycle stops at it,
    /// and removing delivered ones (or a badge of 0) frees it. Replay and snapshot agree.
    @Test func deliveredListsCountAgainstTheBytesQuotaUntilRemoved() throws {
        var state = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        func keep(_ directives: [CoordinatorDirective]) {
            journal += directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
        }
        let title = String(repeating: "t", count: 200)
        func due(_ id: String, _ recipient: String) -> Reminder {
            Reminder(id: ReminderID(id), recipient: RecipientID(recipient), content: Content(title: title, body: "x"),
                     trigger: Trigger(start: .instant(Self.t0)))
        }
        // One delivered firing of a-ann's "d00" (not counted toward the badge): 145 + 5 + 2 × 3 + 211 bytes.
        let listed = 145 + 5 + 2 * 3 + 11 + 200
        let alice = tenant(bytes: .atMost(3 * listed + 100))
        keep(state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 100, delivered: 0), viaDispatch: true, at: Self.t0))
        var cycles = 0
        var refusal: WireError?
        while refusal == nil, cycles < 20 {
            let id = String(format: "d%02d", cycles)
            let recipient = cycles % 2 == 0 ? "a-ann" : "a-bob"
            refusal = schedule(&state, [due(id, recipient)], by: alice, journal: &journal)
            guard refusal == nil else { break }
            let directives = state.onTick(now: Self.t0)
            keep(directives)
            let firings = directives.flatMap { directive -> [Firing] in
                if case .dispatch(let batch, _) = directive { return batch.firings }
                return []
            }
            #expect(firings.count == 1)
            let acks = firings.map { WorkerMessage.Acknowledgement(firingId: $0.firingId, firedAt: Self.t0, attempt: $0.attempt, epoch: 1) }
            keep(state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 100, delivered: 0, acks: acks), at: Self.t0))
            cancel(&state, [ReminderID(id)], by: alice, journal: &journal)
            cycles += 1
        }
        // Three listed firings fit with no reminder held; the fourth reminder would pass.
        #expect(cycles == 3)
        #expect(state.tenantUsage(of: Self.tenantA) == TenantUsage.Usage(reminders: 0, bytes: 3 * listed))
        #expect(refusal?.code == .quotaExceeded)
        #expect(refusal?.message.hasPrefix("this key's recipients (a-*) hold \(3 * listed) bytes of reminders, registrations and delivered lists; ") == true)

        // Replayed, and loaded from a snapshot, the lists count the same.
        var replayed = CoordinatorState(startedAt: Self.t0)
        for entry in journal { replayed.apply(entry) }
        var loaded = CoordinatorState(startedAt: Self.t0)
        try loaded.load(snapshot: state.encodedSnapshot(at: Self.t0))
        #expect(replayed.tenantUsage(of: Self.tenantA).bytes == 3 * listed)
        #expect(loaded.tenantUsage(of: Self.tenantA).bytes == 3 * listed)

        // Removing one delivered firing frees its bytes; a badge of 0 empties a list.
        let first = try #require(state.durable.recipients.ledgers["a-ann"]?.delivered.last?.firingId)
        keep(state.onRequest(ControlRequest(command: .delivered("a-ann", remove: first)), from: alice, at: Self.t0))
        #expect(state.tenantUsage(of: Self.tenantA).bytes == 2 * listed)
        keep(state.onRequest(ControlRequest(command: .badge("a-bob", 0)), from: alice, at: Self.t0))
        #expect(state.tenantUsage(of: Self.tenantA).bytes == listed)
        #expect(schedule(&state, [due("d99", "a-ann")], by: alice, journal: &journal) == nil)
    }

    /// Issue 37 item 3: a key limited to 10 reminders snoozed one delivered firing 300 times
    /// (309 held). A snooze schedules a copy when its job finishes, so the copies of the
    /// scope's snoozes still running and the new one count against the quota.
    @Test func aSnoozeCountsTheCopyItWillScheduleAndThoseStillRunning() {
        var state = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        let alice = tenant(reminders: .atMost(3))
        #expect(schedule(&state, [Self.reminder("r1")], by: alice, journal: &journal) == nil)
        let firing = FiringID(ReminderKey("r1", of: "a-ann"), dueAt: Self.t0.addingTimeInterval(3600))
        var second = 0.0
        func snooze() -> WireError? {
            second += 1  // a job's id holds its millisecond: one snooze a second
            let directives = state.onRequest(
                ControlRequest(command: .act(firingId: firing, action: "snooze", text: nil, token: nil, snoozeSeconds: 600)), from: alice,
                at: Self.t0.addingTimeInterval(second))
            guard case .reply(let outcome, _, _)? = directives.last else { return WireError(.internal, "no reply") }
            if case .failed(let error) = outcome { return error }
            return nil
        }
        #expect(snooze() == nil, "1 held + 1 copy")
        #expect(snooze() == nil, "1 held + 2 copies")
        let refused = snooze()
        #expect(refused?.code == .quotaExceeded)
        #expect(refused?.field == "action")
        #expect(refused?.message
            == "a snooze schedules a copy of the reminder: this key's recipients (a-*) hold 1 reminders; 4 would pass the quota of 3 (max-reminders, else limits.tenantMaxReminders); cancel some first")
        #expect(state.jobs.unfinished.count == 2)
        // The operator (no scope) is not counted against the tenant.
        let directives = state.onRequest(
            ControlRequest(command: .act(firingId: firing, action: "snooze", text: nil, token: nil, snoozeSeconds: 600)), from: operatorAddress, at: Self.t0)
        guard case .reply(.job, _, _)? = directives.last else {
            Issue.record("the operator's snooze: \(directives)")
            return
        }
    }
}
