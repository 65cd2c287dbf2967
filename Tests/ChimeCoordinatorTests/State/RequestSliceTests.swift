import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// One `schedule` is one loop turn (issue 24): at most `coordinator.maxRemindersPerRequest`
/// reminders, 1,000 by default; one more is refused whole, naming the key. Pure.
@Suite struct RequestSliceTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)

    static func reminders(_ count: Int, prefix: String) -> [Reminder] {
        (0..<count).map {
            Reminder(id: ReminderID("\(prefix)-\($0)"), recipient: "r", content: Content(body: "x"),
                     trigger: Trigger(start: .instant(t0.addingTimeInterval(3600))))
        }
    }

    @Test func theDefaultLimitTakesOneThousandAndRefusesOneMoreWhole() {
        var state = CoordinatorState(startedAt: Self.t0)
        #expect(state.configuration.maxRemindersPerRequest == 1_000)
        let client = ClientAddress(routing: [Data([1])])
        let over = state.onRequest(ControlRequest(command: .schedule(Self.reminders(1_001, prefix: "over"))), from: client, at: Self.t0)
        guard case .reply(.failed(let error), _, _)? = over.last, over.count == 1 else {
            Issue.record("expected one refusal, got \(over.count) directives")
            return
        }
        #expect(error.code == .tooLarge)
        #expect(error.field == "reminders")
        #expect(error.message == "at most 1000 reminders per request, not 1001 (coordinator.maxRemindersPerRequest)")
        #expect(state.reminderCount == 0)
        let fits = state.onRequest(ControlRequest(command: .schedule(Self.reminders(1_000, prefix: "fits"))), from: client, at: Self.t0)
        #expect(fits.filter { if case .append = $0 { true } else { false } }.count == 1_000)
        #expect(state.reminderCount == 1_000)
    }
}
