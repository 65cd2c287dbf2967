import ChimeCoordinator
import ChimeCore
import ChimeJournal
import ChimeStore
import ChimeWire
import Foundation

/// Writes the binary seeds (frames, journal, snapshot) through Chime's own encoders into
/// `<directory>/<target>/`; the text seeds are checked in as written.
enum SeedWriter {
    static func write(into directory: URL) throws {
        let due = Date(timeIntervalSinceReferenceDate: 820_000_000.123)
        let reminder = try sampleReminder()
        let firing = Firing(
            reminderId: "r1", recipient: "alice", dueAt: due,
            content: Content(title: "T", body: "hi", badgeChange: .increment, userInfo: ["n": .integer(3)]),
            attempt: 2, late: true, eventAt: due)
        let codec = WireCodec()
        let acknowledgement = WorkerMessage.Acknowledgement(firingId: firing.firingId, firedAt: due, attempt: 1, epoch: 4)
        try save(
            FrameSplitter.join(codec.encodeFrames(DispatchBatch(epoch: 7, leaseMilliseconds: 10_000, firings: [firing]))),
            as: "frames", "dispatch", in: directory)
        try save(
            FrameSplitter.join(codec.encodeFrames(
                WorkerMessage(worker: "w", host: "h", pid: 1, capacity: 64, delivered: 2, acks: [acknowledgement]))),
            as: "frames", "acks", in: directory)
        try save(
            FrameSplitter.join(codec.encodeFrames(WorkerMessage(worker: "w", host: "h", pid: 1, delivered: 0))),
            as: "frames", "heartbeat", in: directory)

        var empty = CoordinatorState(startedAt: due)
        try save([UInt8](empty.encodedSnapshot(at: due)), as: "snapshot", "empty", in: directory)
        _ = empty.onRequest(ControlRequest(requestId: "a1", command: .schedule([reminder])), from: ClientAddress(routing: [Data([1])]), at: due)
        try save([UInt8](empty.encodedSnapshot(at: due)), as: "snapshot", "one-reminder", in: directory)
        var legacy = CoordinatorSnapshot(unsettled: [], deadLetters: [], nextEventSeq: 1, events: [])
        legacy.reminders = [
            CoordinatorSnapshot.ReminderRecord(
                reminderBytes: reminder.binaryEncoded(), id: reminder.id, nextIndex: 0, nextFireAt: due, armedAt: nil,
                state: .pending, deliveredCount: 0, lastFiredAt: nil)
        ]
        legacy.answered = [AnsweredRequest(requestId: "a1", reply: Data(#"{"ok":true}"#.utf8))]
        try save([UInt8](legacy.encodedPayload()), as: "snapshot", "format-3-one-reminder", in: directory)

        let threeEntries = try journalRecords([[.scheduled(reminder, at: due)], [.cancelled([reminder.key], at: due), .nagFired(firing.firingId, at: due)]])
        try save(threeEntries, as: "journal", "three-entries", in: directory)
        // The second group without its last record: an incomplete group.
        let segment = RecordFraming.makeSegmentHeader(firstSequence: 1) + threeEntries
        guard let last = RecordReader.validFrames(in: segment, from: RecordFraming.segmentHeaderLength).last else {
            throw JournalError(.invalidEntry, message: "the three-entries seed holds no record")
        }
        try save(Array(segment[RecordFraming.segmentHeaderLength..<last.offset]), as: "journal", "incomplete-group", in: directory)
        let move = SlotMove(id: SlotMoveID("m1"), slots: [3, 4], source: 0, target: 2, slotCount: 16)
        try save(
            journalRecords([[
                .slotMove(.migrating(move, at: due)), .slotMove(.handedOver(move.id, cut: due)),
                .slotMove(.adopted(move.id, slice: empty.durable.encodedSnapshot(takenAt: due), cut: due)),
                .slotMove(.committed(move.id, mapEpoch: 2)), .slotMove(.completed(move.id, at: due)),
                .slotMove(.released(move.id, at: due, eventSeq: 3, mapEpoch: 2)),
            ]]),
            as: "journal", "slot-move", in: directory)

        let map = ShardMap.evenlySplit(shards: 3, slotCount: 16) { id in
            ShardMap.Endpoints(control: "tcp://127.0.0.1:\(7700 + id * 10)", dispatch: "d\(id)", results: "r\(id)", events: "e\(id)", eventsIngest: "i\(id)")
        }
        try save([UInt8](SlotMapRegisterFile.encode(SlotMapRecord(map: map))), as: "register", "three-shards", in: directory)
        let fromShard0 = SlotMove(id: SlotMoveID("m1"), slots: [0, 1], source: 0, target: 2, slotCount: 16)
        if let opened = SlotMapRecord(map: map).opening(fromShard0), let decided = opened.committing(fromShard0.id) {
            try save([UInt8](SlotMapRegisterFile.encode(opened)), as: "register", "one-open-move", in: directory)
            try save([UInt8](SlotMapRegisterFile.encode(decided)), as: "register", "one-committed-move", in: directory)
        }
    }

    private static func sampleReminder() throws -> Reminder {
        let json = #"{"id":"r1","recipient":"alice","content":{"title":"T","body":"hi"},"trigger":{"at":"2026-12-24T08:00:00Z"}}"#
        return try WireCodec().decode(Reminder.self, from: Data(json.utf8))
    }

    /// The records of a journal holding `groups` (one append each), written by `FileJournal`
    /// (the segment header, which the harness supplies, left off).
    private static func journalRecords(_ groups: [[JournalEntry]]) throws -> [UInt8] {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("chime-fuzz-seed-\(getpid())")
        defer { try? FileManager.default.removeItem(at: store) }
        let (journal, _) = try FileJournal.open(directory: store)
        for group in groups { try journal.append(group) }
        try journal.close()
        let segment = store.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: 1))
        return Array(try [UInt8](Data(contentsOf: segment)).dropFirst(RecordFraming.segmentHeaderLength))
    }

    private static func save(_ bytes: [UInt8], as target: String, _ name: String, in directory: URL) throws {
        let folder = directory.appendingPathComponent(target)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: folder.appendingPathComponent(name))
    }
}
