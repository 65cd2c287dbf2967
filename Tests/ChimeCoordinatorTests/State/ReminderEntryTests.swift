import ChimeCore
import Foundation
import Testing

@testable import ChimeCoordinator

@Suite struct ReminderEntryTests {
    static let reminder = Reminder(
        id: ReminderID("standup"), recipient: RecipientID("alice"), content: Content(title: "Stand-up"),
        trigger: Trigger(start: .instant(Date(timeIntervalSince1970: 1_800_000_000))))

    /// 64 bytes a value: the entry table's hash buckets (about two a reminder) hold one each,
    /// so every 8 bytes here are about 17 MB at a million reminders.
    @Test func isSixtyFourBytesAValue() {
        #expect(MemoryLayout<ReminderEntry>.stride == 64)
    }

    @Test func keepsLastFiredAtOrNone() {
        var entry = ReminderEntry(reminder: Self.reminder, next: nil, state: .pending)
        #expect(entry.lastFiredAt == nil)
        let fired = Date(timeIntervalSinceReferenceDate: 812_345_678.125)
        entry.lastFiredAt = fired
        #expect(entry.lastFiredAt == fired)
        #expect(entry != ReminderEntry(reminder: Self.reminder, next: nil, state: .pending))
        #expect(entry == ReminderEntry(reminder: Self.reminder, next: nil, state: .pending, lastFiredAt: fired))
        entry.lastFiredAt = nil
        #expect(entry.lastFiredAt == nil)
        #expect(entry == ReminderEntry(reminder: Self.reminder, next: nil, state: .pending))
        let epoch = ReminderEntry(reminder: Self.reminder, next: nil, state: .delivered, deliveredCount: 1, lastFiredAt: Date(timeIntervalSinceReferenceDate: 0))
        #expect(epoch.lastFiredAt == Date(timeIntervalSinceReferenceDate: 0))
        #expect(epoch.deliveredCount == 1)
    }
}
