import ChimeJournal
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeCoordinator

/// A submission (one loop turn's entries, so every request's) is one journal group, whether
/// the loop wrote it inline or the writer thread wrote it in a batch with others: a crash that
/// cuts the journal anywhere recovers whole submissions only.
extension JournalWriterTests {
    @Test func eachSubmissionIsOneGroupInlineOrInABatchAndACutKeepsWholeSubmissions() throws {
        let directory = try TemporaryDirectory(prefix: "journal-writer-groups")
        defer { directory.remove() }
        let harness = try Harness(directory: directory.url, fsync: .interval(milliseconds: 60_000))
        var submissions: [[Int]] = []
        var next = 0
        func submit(_ count: Int) {
            _ = harness.writer.submit(Self.entries(next..<(next + count)))
            submissions.append(Array(next..<(next + count)))
            next += count
        }
        // Lone submissions to an idle writer: written inline.
        for count in [1, 3, 2] {
            try harness.writer.drain()
            submit(count)
        }
        #expect(harness.writer.inlineWriteCount == 3)
        // Over the inline limit, then more while the writer thread is busy: its batches (a small
        // one may still go inline when the thread finished the one before first, as on a
        // loaded machine: the groups are the same either way).
        for count in [100, 5, 70, 1, 2] { submit(count) }
        try harness.writer.drain()
        #expect(harness.writer.inlineWriteCount >= 3)
        try harness.close()

        let journal = directory.url.appendingPathComponent("journal")
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: journal.path).filter { $0.hasSuffix(".log") }.only)
        let path = journal.appendingPathComponent(segment)
        let original = [UInt8](try Data(contentsOf: path))
        var reader = RecordReader(bytes: original, startingAt: RecordFraming.segmentHeaderLength, expectedSequence: 1)
        var records: [RecordReader.Record] = []
        while let record = reader.next() { records.append(record) }
        #expect(reader.damage == nil)
        // The group marks on disk split the records exactly as the submissions were made.
        var groupSizes: [Int] = []
        var size = 0
        for record in records {
            size += 1
            if !record.continuesGroup {
                groupSizes.append(size)
                size = 0
            }
        }
        #expect(groupSizes == submissions.map(\.count))

        // A `kill -9` cutting the journal after any record keeps the submissions before it.
        var wholeSubmissions = 0
        var recordsSeen = 0
        for (index, record) in records.enumerated() {
            let cut = record.offset + RecordFraming.recordHeaderLength + record.payload.count
            recordsSeen += 1
            if recordsSeen == submissions[wholeSubmissions].count {
                wholeSubmissions += 1
                recordsSeen = 0
            }
            // Every fifth record and every group boundary, to keep the test quick.
            guard index % 5 == 0 || recordsSeen == 0 else { continue }
            try Data(original.prefix(cut)).write(to: path)
            #expect(try Self.journaled(in: directory.url) == Array(submissions.prefix(wholeSubmissions).joined()), "cut after record \(index + 1)")
        }
    }
}

extension Array {
    /// The one element, or `nil` when there are none or several.
    fileprivate var only: Element? { count == 1 ? first : nil }
}
