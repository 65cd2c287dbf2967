import ChimeCore
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

@Suite struct JournalFollowerTests {
    let temporary: TemporaryDirectory
    let directory: URL

    init() throws {
        temporary = try TemporaryDirectory(prefix: "follower")
        directory = temporary.url.appendingPathComponent("journal")
    }

    func readNew(_ follower: JournalFollower) throws -> [(UInt64, TestRecord)] {
        var read: [(UInt64, TestRecord)] = []
        try follower.readNew(using: testCodec) { read.append(($0, $1)) }
        return read
    }

    @Test func followsAJournalAsItGrowsAcrossSegmentRolls() throws {
        let entries = makeEntries(300)
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, segmentSize: 4096, codec: testCodec)
        try journal.append(Array(entries[0..<100]), using: testCodec)
        try journal.sync()
        let follower = JournalFollower(directory: directory, after: 0)
        let first = try readNew(follower)
        #expect(first.map(\.0) == Array(1...100))
        #expect(first.map(\.1) == Array(entries[0..<100]))
        #expect(try readNew(follower).isEmpty)

        for start in stride(from: 100, to: 300, by: 25) {
            try journal.append(Array(entries[start..<(start + 25)]), using: testCodec)
            try journal.sync()
        }
        #expect(try segmentPaths(directory).count > 5)
        let rest = try readNew(follower)
        #expect(rest.map(\.0) == Array(101...300))
        #expect(rest.map(\.1) == Array(entries[100..<300]))
        #expect(follower.lastSequence == 300)
        try journal.close()
    }

    @Test func startsAfterASnapshotsSequenceAndStopsAtAnIncompleteRecord() throws {
        let entries = makeEntries(60)
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, segmentSize: 1 << 20, codec: testCodec)
        try journal.append(entries, using: testCodec)
        try journal.sync()
        try journal.close()
        let segment = try #require(try segmentPaths(directory).last)
        let complete = try Data(contentsOf: URL(fileURLWithPath: segment))
        // Half of a record, as a reader may see it while the writer's write is under way.
        let handle = try #require(FileHandle(forWritingAtPath: segment))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x43, 0x72, 1, 2, 40, 0, 0, 0, 61, 0]))
        try handle.close()

        let follower = JournalFollower(directory: directory, after: 40)
        #expect(try readNew(follower).map(\.0) == Array(41...60))
        #expect(try readNew(follower).isEmpty)
        #expect(follower.lastSequence == 60)
        #expect(try Data(contentsOf: URL(fileURLWithPath: segment)).count == complete.count + 10, "the follower changes nothing")
    }

    @Test func refusesAJournalThatNoLongerReachesBackToItsPosition() throws {
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .never, segmentSize: 4096, codec: testCodec)
        for start in stride(from: 0, to: 200, by: 10) { try journal.append(makeEntries(10, from: start), using: testCodec) }
        try journal.sync()
        let follower = JournalFollower(directory: directory, after: 0)
        try journal.removeSegments(through: 150)
        #expect(throws: JournalError(.corrupt)) { try follower.readNew(using: testCodec) { _, _ in } }
        try journal.close()
    }
}
