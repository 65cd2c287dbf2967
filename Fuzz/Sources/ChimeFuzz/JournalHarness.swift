import ChimeJournal
import ChimeStore
import Foundation

/// Writes the input as the one segment of a store in a temporary directory (after a valid
/// segment header, so the fuzzer spends its time on records), once under a header of the
/// current format (records with group marks) and once under one of format 1 (no marks), and
/// reads that store as a start, `verify` (with its repair plan) and a warm standby's follower do.
final class JournalHarness: @unchecked Sendable {
    static let shared = JournalHarness()

    let store: URL
    let segment: URL

    private init() {
        store = FileManager.default.temporaryDirectory.appendingPathComponent("chime-fuzz-journal-\(getpid())")
        let journal = store.appendingPathComponent("journal")
        // A fuzz run cannot go on without its directory: trapping here is the harness, not Chime.
        try! FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        segment = journal.appendingPathComponent(RecordFraming.segmentFileName(firstSequence: 1))
        atexit { try? FileManager.default.removeItem(at: JournalHarness.shared.store) }
    }

    func fuzz(_ records: [UInt8]) {
        for format in [RecordFraming.segmentFormatVersion, RecordFraming.oldestSegmentFormatVersion] {
            let bytes = RecordFraming.makeSegmentHeader(firstSequence: 1, formatVersion: format) + records
            var reader = RecordReader(
                bytes: bytes, startingAt: RecordFraming.segmentHeaderLength, expectedSequence: 1,
                recordVersion: RecordFraming.recordVersion(ofSegmentFormat: format))
            while reader.next() != nil {}
            try! Data(bytes).write(to: segment)
            _ = try? FileStore.verify(directory: store)
            let follower = JournalFollower(directory: store.appendingPathComponent("journal"), after: 0)
            _ = try? follower.readNew { _, _ in }
        }
    }
}
