import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// Issue 40 item 1, categories and actions as UserNotifications has them: a text-input action
/// (`UNTextInputNotificationAction`) is the only one `act --text` is taken for; icons;
/// `hiddenPreviewsBodyPlaceholder`; a category's summary format filling the summary event's
/// line for it. JSON round trips and refusals. Pure, time passed in.
@Suite struct CategoryOptionsTests {
    let client = ClientAddress(routing: [Data([1])])
    static let t0 = CoordinatorNotificationTests.t0

    static let chat = NotificationCategory(
        identifier: "chat",
        actions: [
            NotificationAction(
                identifier: "reply", title: "Reply", textInput: TextInputOptions(buttonTitle: "Send", placeholder: "Say something"),
                icon: .system("arrowshape.turn.up.left")),
            NotificationAction(identifier: "like", title: "Like", icon: .template("heart")),
        ],
        hiddenPreviewsBodyPlaceholder: "New message", summaryFormat: "%u more messages (100%%)")

    @Test func theCategoryRoundTripsInJSONAndOldShapesStayTheSame() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let encoded = String(decoding: try encoder.encode(Self.chat), as: UTF8.self)
        #expect(encoded.contains(#""textInput":{"buttonTitle":"Send","placeholder":"Say something"}"#))
        #expect(encoded.contains(#""icon":{"systemImageName":"arrowshape.turn.up.left"}"#))
        #expect(encoded.contains(#""icon":{"templateImageName":"heart"}"#))
        #expect(encoded.contains(#""hiddenPreviewsBodyPlaceholder":"New message""#))
        #expect(encoded.contains(#""summaryFormat":"%u more messages (100%%)""#))
        #expect(try JSONDecoder().decode(NotificationCategory.self, from: Data(encoded.utf8)) == Self.chat)
        // Without the new fields a category encodes as before they existed.
        let plain = NotificationCategory(identifier: "todo", actions: [NotificationAction(identifier: "done", title: "Done")])
        let plainJSON = String(decoding: try JSONEncoder().encode(plain), as: UTF8.self)
        for key in ["textInput", "icon", "hiddenPreviewsBodyPlaceholder", "summaryFormat"] {
            #expect(!plainJSON.contains(key), "\(key) in \(plainJSON)")
        }
        try Self.chat.validate(field: "categories[0]")
    }

    @Test(arguments: [
        (#"{"identifier":"c","actions":[{"identifier":"a","title":"A","icon":{}}]}"#, "neither icon name"),
        (#"{"identifier":"c","actions":[{"identifier":"a","title":"A","icon":{"systemImageName":"x","templateImageName":"y"}}]}"#, "both icon names"),
        (#"{"identifier":"c","actions":[{"identifier":"a","title":"A","textInput":{"placeholder":"p"}}]}"#, "no button title"),
        (#"{"identifier":"c","actions":[{"identifier":"a","title":"A","textInput":{"buttonTitle":"B","size":3}}]}"#, "an unknown key"),
    ])
    func malformedOptionsAreRefusedWhenDecoding(json: String, what: String) {
        #expect(throws: DecodingError.self, "\(what)") { try JSONDecoder().decode(NotificationCategory.self, from: Data(json.utf8)) }
    }

    @Test(arguments: [
        (NotificationCategory(identifier: "c", summaryFormat: "%u from %@"), "categories[0].summaryFormat",
         "takes %u (the count) and %% only, not %@ in '%u from %@'"),
        (NotificationCategory(identifier: "c", summaryFormat: "%u %"), "categories[0].summaryFormat",
         "takes %u (the count) and %% only, not % in '%u %'"),
        (NotificationCategory(identifier: "c", hiddenPreviewsBodyPlaceholder: ""), "categories[0].hiddenPreviewsBodyPlaceholder",
         "must be 1 to 256 bytes, not 0"),
        (NotificationCategory(identifier: "c", actions: [NotificationAction(identifier: "a", title: "A", textInput: TextInputOptions(buttonTitle: ""))]),
         "categories[0].actions[0].textInput.buttonTitle", "must be 1 to 256 bytes, not 0"),
        (NotificationCategory(identifier: "c", actions: [NotificationAction(identifier: "a", title: "A", icon: .system(String(repeating: "x", count: 257)))]),
         "categories[0].actions[0].icon.systemImageName", "must be 1 to 256 bytes, not 257"),
    ])
    func badOptionsAreRefusedByValidation(category: NotificationCategory, field: String, message: String) {
        do {
            try category.validate(field: "categories[0]")
            Issue.record("\(category) passed")
        } catch {
            #expect(error.field == field)
            #expect(error.message == message)
        }
    }

    @Test func summaryFormatFillsTheCount() {
        #expect(SummaryFormat.text("%u more messages (100%%)", count: 3) == "3 more messages (100%)")
        #expect(SummaryFormat.text("%u", count: 0) == "0")
    }

    func state(at now: Date = t0) -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.heartbeatInterval = 86_400
        var state = CoordinatorState(configuration: configuration, startedAt: now)
        state.finishRecovery(at: now)
        return state
    }

    func outcome(_ state: inout CoordinatorState, _ command: ControlRequest.Command, at now: Date = t0) -> ControlOutcome? {
        guard case .reply(let outcome, _, _)? = state.onRequest(ControlRequest(command: command), from: client, at: now).last else { return nil }
        return outcome
    }

    @Test func onlyATextInputActionTakesText() throws {
        var state = state()
        _ = outcome(&state, .register(Recipient(id: "alice", categories: [Self.chat])))
        _ = outcome(&state, .schedule([Reminder(
            id: "m", recipient: "alice", content: Content(title: "hi", category: "chat"), trigger: Trigger(start: .instant(Self.t0)))]))
        _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 8, delivered: 0), viaDispatch: true, at: Self.t0)
        let firingId = FiringID(ReminderKey("m", of: "alice"), dueAt: Self.t0)
        func act(_ action: String, text: String?) -> ControlOutcome? {
            outcome(&state, .act(firingId: firingId, action: action, text: text, token: nil, snoozeSeconds: nil))
        }
        guard case .failed(let plain)? = act("like", text: "nice") else { Issue.record("text on a plain button passed"); return }
        #expect(plain.code == .invalidArgument)
        #expect(plain.field == "text")
        #expect(plain.message == "action like of category chat takes no text (give it a textInput to make it a text-input action)")
        guard case .failed(let builtIn)? = act("open", text: "x") else { Issue.record("text on open passed"); return }
        #expect(builtIn.message == "open takes no text; only a category's text-input action does")
        guard case .job(let job)? = act("reply", text: "on my way") else { Issue.record("the text-input action refused"); return }
        #expect(job.job.text == "on my way")
        guard case .job? = act("like", text: nil) else { Issue.record("a plain button without text refused"); return }
    }

    @Test func theSummaryEventCountsEachCategoryWithItsFormat() {
        let at = Self.t0
        func firing(_ id: ReminderID, _ category: String?) -> Firing {
            Firing(reminderId: id, recipient: "alice", dueAt: at, content: Content(title: "t", category: category))
        }
        let event = SummaryEvent(
            recipient: "alice", at: at, firings: [firing("a", "chat"), firing("b", "todo"), firing("c", "chat"), firing("d", nil)],
            categories: [Self.chat, NotificationCategory(identifier: "todo")])
        #expect(event.categories == [
            SummaryEvent.CategoryLine(category: "chat", count: 2, text: "2 more messages (100%)"),
            SummaryEvent.CategoryLine(category: "todo", count: 1, text: nil),
        ])
        #expect(SummaryEvent(recipient: "alice", at: at, firings: [firing("d", nil)]).categories == nil)
    }

    @Test func aReleasedSummaryCarriesTheRecipientsCategoryLines() {
        // Berlin, summary at 18:00 (17:00Z); two chat messages due at 10:00 and 11:00.
        var state = state()
        _ = outcome(&state, .register(Recipient(id: "alice", categories: [Self.chat], zone: "Europe/Berlin", summaryTimes: [18 * 60])))
        _ = outcome(&state, .schedule(["m1", "m2"].enumerated().map { index, id in
            Reminder(id: ReminderID(id), recipient: "alice", content: Content(title: "hi", category: "chat"),
                     trigger: Trigger(start: .instant(Self.t0 + Double(index + 1) * 3600)))
        }))
        var summaries: [SummaryEvent] = []
        for now in [Self.t0 + 3600, Self.t0 + 7200, Self.t0 + 9 * 3600] {
            _ = state.onWorkerMessage(WorkerMessage(worker: "w1", host: "h", pid: 1, capacity: 8, delivered: 0), viaDispatch: true, at: now)
            for case .publish(.summary(let event)) in state.onTick(now: now) { summaries.append(event) }
        }
        #expect(summaries.count == 1)
        #expect(summaries.first?.categories == [SummaryEvent.CategoryLine(category: "chat", count: 2, text: "2 more messages (100%)")])
    }
}
