import ChimeCore
import ChimeWire
import Foundation
import Testing
import ZeroMQ
@testable import ChimeCoordinator
@testable import ChimeSecurity


/// Which control requests each role may make, and a restricted client's recipients: pure.
@Suite struct AuthorizationTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)
    let client = ClientAddress(routing: [Data([1])])
    let key = "k"

    /// A state with reminder `b-1` for recipient `b-bob` and a registered `a-ann` with a token.
    func makeState() -> CoordinatorState {
        var state = CoordinatorState(configuration: CoordinatorConfiguration(), startedAt: Self.t0)
        let reminder = Reminder(
            id: "b-1", recipient: "b-bob", content: Content(body: "hi"),
            trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(3600))))
        _ = state.onRequest(ControlRequest(command: .schedule([reminder])), from: client, at: Self.t0)
        _ = state.onRequest(
            ControlRequest(command: .register(Recipient(id: "a-ann", token: "old-secret"))), from: client, at: Self.t0)
        return state
    }

    func check(
        _ command: ControlRequest.Command, as role: Role, scope: RecipientScope? = nil, currentToken: String? = nil
    ) -> WireError.Code? {
        makeState().authorize(
            ControlRequest(command: command, currentToken: currentToken), for: Principal(role: role, publicKey: key),
            grant: .init(role: role, scope: scope, name: "test"))?.code
    }

    func message(_ command: ControlRequest.Command, scope: RecipientScope) -> String {
        makeState().authorize(
            ControlRequest(command: command), for: Principal(role: .client, publicKey: key),
            grant: .init(role: .client, scope: scope, name: "test"))?.message ?? "allowed"
    }

    @Test func anOperatorMayDoEverything() {
        #expect(check(.status, as: .operator) == nil)
        #expect(check(.compact, as: .operator) == nil)
        #expect(check(.cancel(ReminderFilter()), as: .operator) == nil)
        #expect(check(.register(Recipient(id: "a-ann", token: "new")), as: .operator) == nil)
    }

    @Test(arguments: [
        ControlRequest.Command.status, .workers, .stats, .deadLetters(), .retry(FiringID(ReminderKey("b-1", of: "b-bob"), dueAtMilliseconds: 0)),
        .snapshot, .compact, .store,
    ])
    func aClientGetsForbiddenForOperatorOperations(_ command: ControlRequest.Command) {
        #expect(check(command, as: .client) == .forbidden)
    }

    @Test func aWorkerMayOnlyReadTheMapOnControlAndASubscriberOnlyCatchUp() {
        #expect(check(.map, as: .worker) == nil)
        #expect(check(.ping, as: .worker) == .forbidden)
        #expect(check(.schedule([]), as: .worker) == .forbidden)
        #expect(check(.list(ReminderFilter(), all: false, limit: nil), as: .worker) == .forbidden)
        #expect(check(.events(after: 0, recipient: nil, limit: nil), as: .subscriber) == nil)
        #expect(check(.ping, as: .subscriber) == .forbidden)
        #expect(check(.schedule([]), as: .subscriber) == .forbidden)
    }

    @Test func aClientRestrictedToAPrefixCannotTouchOtherRecipients() {
        let scope = RecipientScope(prefixes: ["a-"])
        let mine = Reminder(id: "a-1", recipient: "a-ann", content: Content(body: "x"), trigger: Trigger(start: .instant(Self.t0)))
        var takeover = mine
        takeover.id = "b-1"

        #expect(check(.schedule([mine]), as: .client, scope: scope) == nil)
        // Ids are per recipient: a-ann's "b-1" is another reminder than b-bob's "b-1".
        #expect(check(.schedule([takeover]), as: .client, scope: scope) == nil)
        #expect(check(.list(ReminderFilter(recipient: "a-ann"), all: false, limit: nil), as: .client, scope: scope) == nil)
        #expect(check(.list(ReminderFilter(recipient: "b-bob"), all: false, limit: nil), as: .client, scope: scope) == .forbidden)
        #expect(check(.list(ReminderFilter(), all: true, limit: nil), as: .client, scope: scope) == .forbidden)
        // Another tenant's reminder is answered as a missing one, word for word (no existence oracle).
        #expect(check(.cancel(ReminderFilter(ids: ["b-1"])), as: .client, scope: scope) == .notFound)
        #expect(check(.cancel(ReminderFilter(ids: ["a-missing"])), as: .client, scope: scope) == .notFound)
        #expect(message(.cancel(ReminderFilter(ids: ["b-1"])), scope: scope)
            == message(.cancel(ReminderFilter(ids: ["b-missing"])), scope: scope).replacingOccurrences(of: "b-missing", with: "b-1"))
        #expect(check(.cancel(ReminderFilter()), as: .client, scope: scope) == .forbidden)
        #expect(check(.setEnabled(["b-1"], false), as: .client, scope: scope) == .notFound)
        #expect(check(.badge("b-bob", 3), as: .client, scope: scope) == .forbidden)
        #expect(check(.ack(FiringID(ReminderKey("b-1", of: "b-bob"), dueAtMilliseconds: 0)), as: .client, scope: scope) == .notFound)
        #expect(message(.ack(FiringID(ReminderKey("b-1", of: "b-bob"), dueAtMilliseconds: 0)), scope: scope)
            == "no firing b-bob/b-1@1970-01-01T00:00:00.000Z among this key's recipients")
        #expect(check(.events(after: 0, recipient: nil, limit: nil), as: .client, scope: scope) == .forbidden)
        #expect(check(.events(after: 0, recipient: "a-ann", limit: nil), as: .client, scope: scope) == nil)
    }

    @Test func aTokenIsReplacedOnlyWithTheCurrentOneOrByAnOperator() {
        #expect(check(.register(Recipient(id: "a-ann", token: "mine-now")), as: .client) == .forbidden)
        #expect(check(.register(Recipient(id: "a-ann")), as: .client) == .forbidden)
        #expect(check(.register(Recipient(id: "a-ann", token: "mine-now")), as: .client, currentToken: "old-secret") == nil)
        #expect(check(.register(Recipient(id: "a-ann", token: "old-secret")), as: .client) == nil)
        #expect(check(.register(Recipient(id: "c-new", token: "first")), as: .client) == nil)
    }

    @Test func aKeyRemovedOrMovedToAnotherRoleByAReloadIsForbidden() {
        let state = makeState()
        let principal = Principal(role: .operator, publicKey: key)
        #expect(state.authorize(ControlRequest(command: .ping), for: principal, grant: nil)?.code == .forbidden)
        #expect(
            state.authorize(ControlRequest(command: .ping), for: principal, grant: .init(role: .client, name: "moved"))?.code
                == .forbidden)
    }

    @Test(arguments: [
        ("tcp://127.0.0.1:7700", true), ("tcp://127.9.0.1:1", true), ("tcp://localhost:7700", true),
        ("tcp://[::1]:7700", true), ("ipc:///run/chime.sock", true), ("inproc://x", true),
        ("tcp://0.0.0.0:7700", false), ("tcp://*:7700", false), ("tcp://10.0.0.5:7700", false),
        ("tcp://eth0:7700", false), ("tcp://127.0.0.1.evil:1", false), ("pgm://eth0;239.1.1.1:5555", false),
    ])
    func onlyLoopbackAndLocalTransportsCountAsLocal(endpoint: String, isLocal: Bool) {
        #expect(SecuritySettings.isLocal(endpoint) == isLocal)
    }

    /// Reminder ids are per recipient: two tenants may each hold an `x`. Ids a restricted key
    /// names without a recipient reach its own recipients' reminders only.
    @Test func idsARestrictedKeyNamesWithoutARecipientReachOnlyItsRecipients() {
        var state = makeState()
        let scoped = ClientAddress(routing: [Data([2])], tenant: "k", scope: RecipientScope(prefixes: ["a-"]))
        let reminders = ["a-ann", "b-bob"].map { recipient in
            Reminder(id: "x", recipient: RecipientID(recipient), content: Content(body: "x"),
                     trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(7200))))
        }
        _ = state.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: Self.t0)
        let listed = state.onRequest(ControlRequest(command: .list(ReminderFilter(ids: ["x"]), all: false, limit: nil)), from: scoped, at: Self.t0)
        guard case .reply(.listed(let page), _, _)? = listed.last else { Issue.record("\(listed)"); return }
        #expect(page.items.count == 1)
        _ = state.onRequest(ControlRequest(command: .setEnabled(["x"], false)), from: scoped, at: Self.t0)
        #expect(state.entries[ReminderKey("x", of: "a-ann")]?.state == .disabled)
        #expect(state.entries[ReminderKey("x", of: "b-bob")]?.state == .pending)
        _ = state.onRequest(ControlRequest(command: .cancel(ReminderFilter(ids: ["x"]))), from: scoped, at: Self.t0)
        #expect(state.entries[ReminderKey("x", of: "a-ann")] == nil)
        #expect(state.entries[ReminderKey("x", of: "b-bob")]?.state == .pending, "the other tenant's x stays")
    }
}
