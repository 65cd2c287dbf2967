import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// Localizable keys resolve when a firing is dispatched, in its recipient's registered
/// locale, from the coordinator's string tables; the journal keeps the keys, not the text.
@Suite struct LocalizedDispatchTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)  // 2026-12-24T08:00:00Z
    let client = ClientAddress(routing: [Data([1])])

    func makeState() -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 3600
        configuration.strings = StringTables(
            tables: ["fr": ["GREETING": "Bonjour %@, %2$@ rappels"], "en": ["GREETING": "Hello %@, %2$@ reminders"]])
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        return state
    }

    @Test func keysResolveInEachRecipientsLocaleAtDispatch() throws {
        var state = makeState()
        _ = state.onRequest(ControlRequest(command: .register(Recipient(id: "zoe", locale: "fr-CA"))), from: client, at: Self.t0)
        let content = Content(title: "Fallback", titleKey: "GREETING", titleArgs: ["Zoé", "3"], bodyKey: "MISSING")
        let reminders = ["zoe", "sam"].map { recipient in
            Reminder(id: "r", recipient: RecipientID(recipient), content: content, trigger: Trigger(start: .instant(Self.t0)))
        }
        _ = state.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: Self.t0)
        let due = QuietHoursTests.tickAndAcknowledge(&state, at: Self.t0)
        let byRecipient = Dictionary(uniqueKeysWithValues: due.firings.map { ($0.recipient.rawValue, $0.content) })
        #expect(byRecipient["zoe"]?.title == "Bonjour Zoé, 3 rappels", "fr-CA falls back to fr")
        #expect(byRecipient["sam"]?.title == "Hello Zoé, 3 reminders", "unregistered: the development locale")
        #expect(byRecipient["zoe"]?.body == "MISSING", "no table has the key and the content has no body")
        #expect(byRecipient["zoe"]?.titleKey == "GREETING" && byRecipient["zoe"]?.titleArgs == ["Zoé", "3"])
        // The journal keeps what was scheduled: the text follows the tables of whoever dispatches.
        let scheduled = try #require(state.durable.schedule.entries[ReminderKey("r", of: "zoe")]?.reminder.content)
        #expect(scheduled.title == "Fallback")
        // A catch-up (`events`) reads the log, which keeps the keys: resolved as the live event was.
        let page = state.onRequest(ControlRequest(command: .events(after: 0, recipient: "zoe", limit: nil)), from: client, at: Self.t0)
        guard case .reply(.events(let result), _, _)? = page.last else {
            Issue.record("no events page: \(page)")
            return
        }
        #expect(result.events.map(\.firing.content.title) == ["Bonjour Zoé, 3 rappels"])
    }
}
