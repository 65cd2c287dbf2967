import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator
@testable import ChimeSecurity

/// Issue 37 item 3: `register` was not counted against a restricted key's byte quota (20
/// recipients × 1,000 categories = 84 MB under a 4,000-byte quota). A registration now counts
/// its JSON's bytes in the scope's usage, beside its reminders'; one that would grow the scope
/// past `max-reminder-bytes` is refused with nothing journaled, and the bytes are derived from
/// the registrations (a replay, a snapshot load and a slot move keep them). Pure.
@Suite struct RegistrationQuotaTests {
    static let t0 = TenantQuotaTests.t0
    static let tenantA = TenantQuotaTests.tenantA
    static let hook = Destination.webhook(
        WebhookDestination(url: "https://example.com/hook", secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]))
    let operatorAddress = ClientAddress(routing: [Data([9])])

    func tenant(bytes: Int) -> ClientAddress {
        ClientAddress(routing: [Data([1])], tenant: "key-a", scope: Self.tenantA, quota: TenantQuota(maxReminderBytes: .atMost(bytes)))
    }

    /// `id` registered with `categories` categories named `c0`, `c1`, … (no actions).
    static func registration(_ id: RecipientID, categories: Int) -> Recipient {
        Recipient(id: id, categories: (0..<categories).map { NotificationCategory(identifier: "c\($0)") })
    }

    /// Sends `command` and returns its error (`nil`: applied), with the entries it journaled.
    @discardableResult
    func send(_ command: ControlRequest.Command, to state: inout CoordinatorState, by client: ClientAddress, journal: inout [JournalEntry])
        -> WireError?
    {
        let directives = state.onRequest(ControlRequest(command: command), from: client, at: Self.t0)
        journal += directives.compactMap { if case .append(let entry) = $0 { entry } else { nil } }
        guard case .reply(let outcome, _, _)? = directives.last else { return WireError(.internal, "no reply") }
        if case .failed(let error) = outcome { return error }
        return nil
    }

    @Test func aRegistrationIsMeasuredAsItsJSON() throws {
        // {"id":"a-ann","settings":["alert","sound","badge"],"categories":[]}
        #expect(Self.registration("a-ann", categories: 0).storedBytes == 67)
        // Each category without actions adds {"identifier":"cN","actions":[]} (and a comma after the first).
        #expect(Self.registration("a-ann", categories: 1).storedBytes == 99)
        #expect(Self.registration("a-ann", categories: 10).storedBytes == 396)
        #expect(Self.registration("a-ann", categories: 1000).storedBytes == 34956)
        let recipient = Self.registration("a-ann", categories: 10)
        #expect(recipient.storedBytes == (try JSONEncoder().encode(recipient)).count)
    }

    @Test func aRegisterPastTheBytesQuotaIsRefusedWithNothingJournaledAndASmallerOnePasses() {
        var state = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        let alice = tenant(bytes: 1000)
        #expect(send(.register(Self.registration("a-ann", categories: 10)), to: &state, by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA) == TenantUsage.Usage(reminders: 0, bytes: 396))
        #expect(send(.register(Self.registration("a-bea", categories: 10)), to: &state, by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA).bytes == 792)

        // a-cid's 6 categories (264 bytes) would make 1,056.
        let entriesBefore = journal.count
        let refused = send(.register(Self.registration("a-cid", categories: 6)), to: &state, by: alice, journal: &journal)
        #expect(refused?.code == .quotaExceeded)
        #expect(refused?.field == "recipient")
        #expect(refused?.message
            == "this key's recipients (a-*) hold 792 bytes of reminders, registrations and delivered lists; registering a-cid in 264 bytes (0 now) would make 1056, past the quota of 1000 (max-reminder-bytes, else limits.tenantMaxReminderBytes); register less, cancel some reminders or remove delivered ones first")
        #expect(journal.count == entriesBefore, "nothing of a refused register is journaled")
        #expect(state.recipients["a-cid"] == nil)
        #expect(state.tenantUsage(of: Self.tenantA).bytes == 792)
        // Growing one held is refused the same way: a-ann's 10 → 17 categories (396 → 634 bytes) would make 1,030.
        #expect(send(.register(Self.registration("a-ann", categories: 17)), to: &state, by: alice, journal: &journal)?.code == .quotaExceeded)
        #expect(state.recipients["a-ann"]?.categories.count == 10)

        // A smaller re-registration passes and frees the difference: 10 → 3 categories is 396 → 165.
        #expect(send(.register(Self.registration("a-ann", categories: 3)), to: &state, by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA).bytes == 561)
        #expect(send(.register(Self.registration("a-cid", categories: 6)), to: &state, by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA) == TenantUsage.Usage(reminders: 0, bytes: 825))
        #expect(journal.count == entriesBefore + 2)
    }

    @Test func theSameSizeAlwaysPassesAndTheOperatorIsNotRefusedButCounted() {
        var state = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        // The operator (no quota) registers a-ann large: allowed, and counted for alice's scope.
        #expect(send(.register(Self.registration("a-ann", categories: 30)), to: &state, by: operatorAddress, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA).bytes == 1076)
        // Over its quota, the key may re-register the same size (another zone, as long) and shrink, never grow.
        let alice = tenant(bytes: 100)
        var sameSize = Self.registration("a-ann", categories: 30)
        sameSize.categories[0] = NotificationCategory(identifier: "cX")
        #expect(sameSize.storedBytes == 1076)
        #expect(send(.register(sameSize), to: &state, by: alice, journal: &journal) == nil)
        #expect(state.recipients["a-ann"]?.categories.first?.identifier == "cX")
        #expect(send(.register(Self.registration("a-bea", categories: 0)), to: &state, by: alice, journal: &journal)?.code == .quotaExceeded)
        #expect(send(.register(Self.registration("a-ann", categories: 29)), to: &state, by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA).bytes == 1042)
        // A reminder's bytes and a registration's share the one budget.
        let reminder = TenantQuotaTests.reminder("r1")
        let refused = send(.schedule([reminder]), to: &state, by: alice, journal: &journal)
        #expect(refused?.message
            == "this key's recipients (a-*) hold 1042 bytes of reminders, registrations and delivered lists; \(1042 + reminder.binaryEncoded().count) would pass the quota of 100 (max-reminder-bytes, else limits.tenantMaxReminderBytes); cancel some or remove delivered ones first")
    }

    @Test func theSameRegistrationAgainJournalsNothingAndAnswersTheSame() {
        var state = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        let alice = tenant(bytes: 2000)
        let registration = Self.registration("a-ann", categories: 30)
        #expect(send(.register(registration), to: &state, by: alice, journal: &journal) == nil)
        #expect(journal.count == 1)
        // 1,000 repeats (the hostile probe's loop): no entry, so the journal does not grow.
        for _ in 0..<1000 {
            #expect(send(.register(registration), to: &state, by: alice, journal: &journal) == nil)
        }
        #expect(journal.count == 1)
        let directives = state.onRequest(ControlRequest(command: .register(registration)), from: alice, at: Self.t0)
        guard case .reply(.recipient(let result), _, _)? = directives.last else {
            Issue.record("no recipient reply: \(directives)")
            return
        }
        #expect(result.recipient == registration.redacted())
        // A change, however small, is journaled.
        var changed = registration
        changed.zone = "Europe/Berlin"
        #expect(send(.register(changed), to: &state, by: alice, journal: &journal) == nil)
        #expect(journal.count == 2)
    }

    @Test func aRegistrationPastMaxRegistrationBytesIsRefusedForEveryCallerAndOneHeldMayShrink() {
        var configuration = CoordinatorConfiguration()
        configuration.maxRegistrationBytes = 2048
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        var journal: [JournalEntry] = []
        // 1,076 bytes fits; 100 categories (3,386 bytes) does not, for the operator too.
        #expect(send(.register(Self.registration("a-ann", categories: 30)), to: &state, by: operatorAddress, journal: &journal) == nil)
        let refused = send(.register(Self.registration("a-ann", categories: 100)), to: &state, by: operatorAddress, journal: &journal)
        #expect(refused?.code == .tooLarge)
        #expect(refused?.field == "recipient")
        #expect(refused?.message
            == "recipient a-ann would be stored in \(Self.registration("a-ann", categories: 100).storedBytes) bytes, past the limit of 2048 for one registration (limits.maxRegistrationBytes); use fewer or shorter categories, actions or destinations")
        #expect(journal.count == 1, "nothing journaled for the refusal")
        #expect(state.recipients["a-ann"]?.categories.count == 30)
        // Held from under a higher limit (a replay): it may stay as large, or shrink, never grow.
        _ = state.apply(.registered(Self.registration("a-bea", categories: 100), at: Self.t0))
        var renamed = Self.registration("a-bea", categories: 100)
        renamed.categories[0] = NotificationCategory(identifier: "cX")
        #expect(send(.register(renamed), to: &state, by: operatorAddress, journal: &journal) == nil)
        #expect(send(.register(Self.registration("a-bea", categories: 99)), to: &state, by: operatorAddress, journal: &journal) == nil)
        #expect(send(.register(Self.registration("a-bea", categories: 100)), to: &state, by: operatorAddress, journal: &journal)?.code == .tooLarge)
        #expect(CoordinatorConfiguration().maxRegistrationBytes == 65_536)
    }

    @Test func aDestinationAddThatGrowsPastTheQuotaIsRefusedNamingAdd() {
        var state = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        let alice = tenant(bytes: 100)
        #expect(send(.register(Self.registration("a-ann", categories: 0)), to: &state, by: alice, journal: &journal) == nil)
        let entriesBefore = journal.count
        let refused = send(.destinations("a-ann", add: [Self.hook], remove: []), to: &state, by: alice, journal: &journal)
        #expect(refused?.code == .quotaExceeded)
        #expect(refused?.field == "add")
        #expect(journal.count == entriesBefore)
        #expect(state.recipients["a-ann"]?.destinations == nil)
        #expect(send(.destinations("a-ann", add: [Self.hook], remove: []), to: &state, by: tenant(bytes: 1000), journal: &journal) == nil)
        // Removing one always passes, whatever the quota.
        #expect(send(.destinations("a-ann", add: [], remove: [Self.hook.key]), to: &state, by: alice, journal: &journal) == nil)
        #expect(state.tenantUsage(of: Self.tenantA).bytes == 67)
    }

    @Test func aReplayASnapshotAndASlotMoveKeepTheRegistrationBytes() throws {
        var live = CoordinatorState(startedAt: Self.t0)
        var journal: [JournalEntry] = []
        let alice = tenant(bytes: 1 << 20)
        for (index, id) in ["a-ann", "a-bea", "b-bob", "a-cid"].enumerated() {
            #expect(send(.register(Self.registration(RecipientID(id), categories: 3 * index)), to: &live, by: operatorAddress, journal: &journal) == nil)
        }
        #expect(send(.schedule([TenantQuotaTests.reminder("r1")]), to: &live, by: alice, journal: &journal) == nil)
        let snapshot = live.encodedSnapshot(at: Self.t0)
        let journaledBeforeSnapshot = journal.count
        #expect(send(.register(Self.registration("a-ann", categories: 7)), to: &live, by: alice, journal: &journal) == nil)
        #expect(send(.register(Self.registration("a-cid", categories: 1)), to: &live, by: alice, journal: &journal) == nil)
        #expect(send(.destinations("a-bea", add: [Self.hook], remove: []), to: &live, by: alice, journal: &journal) == nil)
        #expect(send(.register(Self.registration("a-dan", categories: 2)), to: &live, by: alice, journal: &journal) == nil)

        let scopes = [Self.tenantA, RecipientScope(recipients: ["b-bob"]), RecipientScope(prefixes: ["a-b"])]
        // What one pass over the reminders and the registrations counts.
        func counted(_ state: CoordinatorState, _ scope: RecipientScope) -> TenantUsage.Usage {
            var usage = TenantUsage.Usage()
            for entry in state.entries.values where scope.allows(entry.recipient) {
                usage.reminders += 1
                usage.bytes += entry.storedBytes
            }
            for (id, recipient) in state.recipients where scope.allows(id) { usage.bytes += recipient.storedBytes }
            return usage
        }
        let reminderBytes = TenantQuotaTests.reminder("r1").binaryEncoded().count
        // a-ann 7 categories, a-bea 3 and the hook, a-cid 1, a-dan 2.
        let registrations = [("a-ann", 7), ("a-bea", 3), ("a-cid", 1), ("a-dan", 2)].map { id, categories in
            var recipient = Self.registration(RecipientID(id), categories: categories)
            if id == "a-bea" { recipient.destinations = [Self.hook] }
            return recipient.storedBytes
        }
        #expect(registrations == [297, 290, 99, 132])
        #expect(live.tenantUsage(of: Self.tenantA) == TenantUsage.Usage(reminders: 1, bytes: reminderBytes + registrations.reduce(0, +)))
        #expect(live.tenantUsage(of: Self.tenantA) == counted(live, Self.tenantA))

        var replayed = CoordinatorState(startedAt: Self.t0)
        // Tracked before the replay (followed registration by registration) and after it (one pass): equal.
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

        // A slot move: a-bea leaves one state (tracked, in the rest's new recipients tracked
        // again in one pass) and is merged into another that tracks the scope.
        let isBea: (RecipientID) -> Bool = { $0 == "a-bea" }
        var source = live.durable
        _ = source.recipients.track(Self.tenantA)
        let slice = source.slice(where: isBea)
        source.removeSlice(where: isBea)
        #expect(source.recipients.track(Self.tenantA) == registrations[0] + registrations[2] + registrations[3])
        var target = DurableState(settings: source.settings)
        #expect(target.recipients.track(Self.tenantA) == 0)
        target.merge(slice)
        #expect(target.recipients.registrationBytes(of: Self.tenantA) == registrations[1])
    }
}
