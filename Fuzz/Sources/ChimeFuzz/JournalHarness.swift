import ChimeJournal
import ChimeStore
import Foundation

/// Writes the input as the one segment of a store in a temporary directory (after a valid
/// segment header, so the fuzzer spends its time on records) and verifies that store.
// Sendable without checking: libFuzzer runs inputs on one thread, and the fields never change.
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
        let bytes = RecordFraming.makeSegmentHeader(firstSequence: 1) + records
        var reader = RecordReader(bytes: bytes, startingAt: RecordFraming.segmentHeaderLength, expectedSequence: 1)
        while reader.next() != nil {}
        try! Data(bytes).write(to: segment)
        _ = try? FileStore.verify(directory: store)
    }
}
