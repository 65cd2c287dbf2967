import ChimeCore
import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeJournal
import ChimeStore

@Suite struct CompactEntryEncodingTests {
    let instant = Date(timeIntervalSince1970: 1_798_099_200.125)

    @Test func hotEntriesRoundTripThroughTheCompactForm() throws {
        let entries: [JournalEntry] = [
            .fired(ReminderKey("r", of: "alice"), dueAt: instant, next: Occurrence(index: -3, instant: instant.addingTimeInterval(60)), late: true,
                   at: instant.addingTimeInterval(0.001)),
            .fired(ReminderKey("ü", of: "bö/b"), dueAt: instant, next: nil, late: false, at: instant),
            .fired(ReminderKey(legacy: "old"), dueAt: instant, next: nil, late: false, at: instant),
            .acknowledged(FiringID(ReminderKey("ünï@y", of: "alice"), dueAt: instant), seq: 7, worker: "worker-1", firedAt: instant),
            .scheduled(
                Reminder(
                    id: "r", recipient: "alice", content: Content(title: "Tea", body: String(repeating: "b", count: 100)),
                    trigger: Trigger(start: .instant(instant))),
                at: instant.addingTimeInterval(-60)),
            .answered(requestId: "q-ü", reply: Data(#"{"ok":true}"#.utf8), at: instant),
        ]
        for entry in entries {
            let bytes = try #require(CompactEntryEncoding.encode(entry))
            #expect(try CompactEntryEncoding.decode(bytes[...]) == entry)
            #expect(throws: BinaryDecodingError.self, "a short payload is refused") {
                try CompactEntryEncoding.decode(bytes.dropLast())
            }
        }
        #expect(CompactEntryEncoding.encode(.cancelled([ReminderKey("a", of: "alice")], at: instant)) == nil, "other kinds stay JSON")
        #expect(throws: BinaryDecodingError(.unknownTag, offset: 0), "kind 1 (dispatched, no longer written) is refused") {
            try CompactEntryEncoding.decode([1, 0, 0, 0, 0][...])
        }
        var badFlags = try #require(CompactEntryEncoding.encode(.fired(ReminderKey("r", of: "alice"), dueAt: instant, next: nil, late: false, at: instant)))
        // Flag 4 (a missed count follows) with no count: the payload is short.
        badFlags[1 + 4 + 7 + 8] = 4
        #expect(throws: BinaryDecodingError(.truncated, offset: 21)) { try CompactEntryEncoding.decode(badFlags[...]) }
        badFlags[1 + 4 + 7 + 8] = 8
        let error = #expect(throws: BinaryDecodingError.self, "unknown flag bits are refused") {
            try CompactEntryEncoding.decode(badFlags[...])
        }
        #expect(error?.reason == .unknownFlags)
        #expect(error?.offset == 20)
    }

    @Test func journalMixesCompactAndJSONRecordsAndReplaysThemInOrder() throws {
        let directory = try TemporaryDirectory(prefix: "compact")
        let entries: [JournalEntry] = [
            .cancelled([ReminderKey("a", of: "alice")], at: instant),
            .fired(ReminderKey("r", of: "alice"), dueAt: instant, next: nil, late: false, at: instant),
            .acknowledged(FiringID(nag: 2, of: FiringID(ReminderKey("r", of: "alice"), dueAt: instant)), seq: 1, worker: "w", firedAt: instant),
            .scheduled(Reminder(id: "s", recipient: "bob", content: Content(body: "x"), trigger: Trigger(start: .instant(instant))), at: instant),
        ]
        do {
            let (journal, _) = try FileJournal.open(directory: directory.url, fsync: .never)
            try journal.append(entries)
            try journal.sync()
            try journal.close()
        }
        var replayed: [JournalEntry] = []
        let (journal, _) = try FileJournal.open(directory: directory.url, fsync: .never) { _, entry in replayed.append(entry) }
        try journal.close()
        #expect(replayed == entries)
    }
}
