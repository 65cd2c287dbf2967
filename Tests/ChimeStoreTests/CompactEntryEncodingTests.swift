import ChimeCore
import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeStore

@Suite struct CompactEntryEncodingTests {
    let instant = Date(timeIntervalSince1970: 1_798_099_200.125)

    @Test func hotEntriesRoundTripThroughTheCompactForm() throws {
        let entries: [JournalEntry] = [
            .dispatched(FiringID("r@x"), reminder: "r", dueAt: instant, attempt: 3, seq: 42, at: instant.addingTimeInterval(0.001)),
            .acknowledged(FiringID("ünï@y"), seq: 7, worker: "worker-1", firedAt: instant),
            .scheduled(
                Reminder(
                    id: "r", recipient: "alice", content: Content(title: "Tea", body: String(repeating: "b", count: 100)),
                    trigger: Trigger(start: .instant(instant))),
                at: instant.addingTimeInterval(-60)),
            .answered(requestId: "q-ü", reply: Data(#"{"ok":true}"#.utf8), at: instant),
        ]
        for entry in entries {
            let bytes = try #require(CompactEntryEncoding.encode(entry))
            #expect(CompactEntryEncoding.decode(bytes[...]) == entry)
            #expect(CompactEntryEncoding.decode(bytes.dropLast()) == nil, "a short payload is refused")
        }
        #expect(CompactEntryEncoding.encode(.cancelled(["a"], at: instant)) == nil, "other kinds stay JSON")
    }

    @Test func journalMixesCompactAndJSONRecordsAndReplaysThemInOrder() throws {
        let directory = try TemporaryDirectory(prefix: "compact")
        let entries: [JournalEntry] = [
            .cancelled(["a"], at: instant),
            .dispatched(FiringID("r@x"), reminder: "r", dueAt: instant, attempt: 1, seq: 1, at: instant),
            .acknowledged(FiringID("r@x"), seq: 1, worker: "w", firedAt: instant),
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
