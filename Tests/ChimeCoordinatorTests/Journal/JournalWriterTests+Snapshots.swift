import ChimeJournal
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing
import ZeroMQ
@testable import ChimeCoordinator

/// What the snapshot thread asks of the journal writer: the position a state copy covers, a
/// wait until it is durable, and segment removals done on the writer's own thread.
extension JournalWriterTests {
    /// A writer over a store with 4 KiB segments, so a few hundred entries span many.
    static func withSmallSegments(_ body: (JournalWriter, FileStore, URL) throws -> Void) throws {
        let directory = try TemporaryDirectory(prefix: "journal-writer-segments")
        defer { directory.remove() }
        var options = FileStore.Options()
        options.segmentSize = 4 << 10
        let (store, _) = try FileStore.open(directory: directory.url, fsync: .never, options: options)
        let context = try Context()
        defer { context.shutdown() }
        let signal = try Socket(.pull, context: context)
        defer { signal.close() }
        try signal.set(.linger(milliseconds: 0))
        let endpoint = "inproc://journal-writer-segments-\(UUID().uuidString)"
        try signal.bind(to: endpoint)
        let writer = try JournalWriter(store: store, context: context, signalEndpoint: endpoint)
        try body(writer, store, directory.url)
        writer.stop()
        try store.close()
    }

    @Test func theSubmittedPositionCountsEveryEntryInSubmissionOrder() throws {
        try Self.withSmallSegments { writer, _, _ in
            #expect(writer.submittedPosition.sequence == 0)
            _ = writer.submit(Self.entries(0..<3))
            let ticket = writer.submit(Self.entries(3..<500))
            let position = writer.submittedPosition
            #expect(position.ticket == ticket)
            #expect(position.sequence == 500)
            try writer.waitUntilDurable(ticket: ticket)
            #expect(try writer.status().durableTicket >= ticket)
            #expect(writer.statistics.lastSequence == 500)
        }
    }

    /// Submissions queued together reach the journal one append each: no segment starts in
    /// the middle of one (a crash during a roll would keep part of a request).
    @Test func aSubmissionsEntriesShareASegment() throws {
        try Self.withSmallSegments { writer, _, directory in
            var ticket: UInt64 = 0
            for start in stride(from: 0, to: 700, by: 7) { ticket = writer.submit(Self.entries(start..<(start + 7))) }
            try writer.waitUntilDurable(ticket: ticket)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("journal").path)
                .filter { $0.hasSuffix(".log") }
            #expect(names.count > 5)
            for name in names {
                let first = try #require(RecordFraming.firstSequence(ofSegmentFileName: name))
                #expect(first % 7 == 1, "segment \(name) starts inside a submission")
            }
        }
    }

    @Test func segmentsAreRemovedOnTheWritersThreadAndReported() throws {
        try Self.withSmallSegments { writer, _, directory in
            // Requests of 20 entries (one submission's entries share a segment).
            var ticket: UInt64 = 0
            for start in stride(from: 0, to: 2_000, by: 20) { ticket = writer.submit(Self.entries(start..<(start + 20))) }
            try writer.waitUntilDurable(ticket: ticket)
            let before = writer.statistics
            #expect(before.segmentCount > 5)
            let number = writer.removeSegments(through: 1_000)
            try expectEventually(timeout: 10, "the removal was done") { writer.segmentRemoval(number) != nil }
            let removal = try #require(try writer.segmentRemoval(number)?.get())
            #expect(removal.removed > 0)
            #expect(removal.statistics.segmentCount == before.segmentCount - removal.removed)
            #expect(writer.statistics.segmentCount == removal.statistics.segmentCount)
            let journal = directory.appendingPathComponent("journal")
            #expect(try FileManager.default.contentsOfDirectory(atPath: journal.path).count == removal.statistics.segmentCount)
        }
    }

    @Test func aRemovalInAStoreWhoseLockWasReplacedRemovesNothing() throws {
        try Self.withSmallSegments { writer, store, directory in
            let ticket = writer.submit(Self.entries(0..<2_000))
            try writer.waitUntilDurable(ticket: ticket)
            let segments = writer.statistics.segmentCount
            let lockPath = directory.appendingPathComponent("LOCK").path
            try FileManager.default.removeItem(atPath: lockPath)
            #expect(FileManager.default.createFile(atPath: lockPath, contents: Data()))
            let number = writer.removeSegments(through: 1_000)
            try expectEventually(timeout: 10, "the removal was tried") { writer.segmentRemoval(number) != nil }
            #expect(throws: JournalError.self) { try writer.segmentRemoval(number)?.get() }
            let journal = directory.appendingPathComponent("journal")
            #expect(try FileManager.default.contentsOfDirectory(atPath: journal.path).count == segments)
            #expect(store.journal.firstSequence == 1)
        }
    }
}
