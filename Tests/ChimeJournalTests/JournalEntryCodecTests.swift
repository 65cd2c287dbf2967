import ChimeCore
import ChimeJournal
import ChimeStore
import Foundation
import Testing

/// What the store learns of an entry through `JournalEntryCodec`: its payload, the ids a
/// report of damage names, and the epoch `store verify` compares with the `EPOCH` file.
@Suite struct JournalEntryCodecTests {
    let codec = JournalEntryCodec()
    let instant = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func namesTheReminderAndFiringOfAFiredEntryAsText() {
        let key = ReminderKey(ReminderID("reminder-12"), of: "alice")
        let subjects = codec.subjects(of: .fired(key, dueAt: instant, next: nil, late: false, at: instant))
        #expect(subjects["reminders"] == ["alice/reminder-12"])
        #expect(subjects["firings"] == [FiringID(key, dueAt: instant).text])
        #expect(subjects["recipients"].isEmpty)
        #expect(subjects.kinds.map(\.name) == ["reminders", "firings", "recipients", "requests"])
    }

    @Test func aLossNamesAnsweredRequestsAsAppliedAnewOnRetry() {
        var range = StoreRepairReport.DroppedRange(offset: 24, bytes: 90, reason: "checksum_mismatch")
        range.subjects = codec.subjects(of: .answered(requestId: "req-7", reply: Data("{}".utf8), at: instant))
        range.exactRecords = 1
        let lines = JournalLoss([range], sequences: [5..<6]).lines
        #expect(lines.contains("  requests (a retry is applied anew): req-7"))
        #expect(!lines.contains { $0.hasPrefix("  reminders:") })
    }

    @Test func theEpochIsAStartedEntrysOnly() {
        #expect(codec.epoch(of: .started(epoch: 42, at: instant)) == 42)
        #expect(codec.epoch(of: .seqReserved(through: 42)) == nil)
    }

    @Test func hotEntriesAreCompactAndTheRestJSON() throws {
        let fired = try codec.encode(.fired(ReminderKey("r", of: "alice"), dueAt: instant, next: nil, late: false, at: instant))
        #expect(fired.encoding == 2)
        let cancelled = try codec.encode(.cancelled([ReminderKey("a", of: "alice")], at: instant))
        #expect(cancelled.encoding == JournalEntryCodec.jsonEncoding)
        #expect(try codec.decode(cancelled.bytes[...], encoding: cancelled.encoding) == .cancelled([ReminderKey("a", of: "alice")], at: instant))
    }

    @Test func anUnknownEncodingOrKindIsFromANewerVersion() {
        let encoding = #expect(throws: JournalError.self) { try codec.decode([1, 2][...], encoding: 9) }
        #expect(encoding?.code == .unknownEntryKind)
        let kind = #expect(throws: JournalError.self) {
            try codec.decode(Array(#"{"snoozed":{"_0":"reminder-1"}}"#.utf8)[...], encoding: JournalEntryCodec.jsonEncoding)
        }
        #expect(kind?.code == .unknownEntryKind)
        #expect(kind?.message.contains("'snoozed'") == true)
        let damaged = #expect(throws: JournalError.self) { try codec.decode([5, 0, 0][...], encoding: 2) }
        #expect(damaged?.code == .undecodableEntry)
    }
}
