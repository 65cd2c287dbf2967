import ChimeCore
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

@Suite struct FileStoreTests {
    let temporary: TemporaryDirectory
    var directory: URL { temporary.url.appendingPathComponent("store") }
    var snapshotDirectory: URL { directory.appendingPathComponent("snapshot") }
    var journalDirectory: URL { directory.appendingPathComponent("journal") }

    init() throws { temporary = try TemporaryDirectory(prefix: "store") }

    func options(segmentSize: Int = 16 << 10) -> FileStore.Options {
        var options = FileStore.Options()
        options.segmentSize = segmentSize
        return options
    }

    func open() throws -> (store: FileStore, recovery: Recovery<TestRecord>) {
        try FileStore.open(directory: directory, fsync: .never, options: options(), codec: testCodec)
    }

    /// Runs `steps` of (entries to append, snapshot payload or nil) on a fresh store.
    func populate(_ steps: [(entries: Int, snapshot: String?)]) throws {
        let (store, _) = try open()
        var written = 0
        for step in steps {
            try store.append(makeEntries(step.entries, from: written), using: testCodec)
            try store.sync()
            written += step.entries
            if let payload = step.snapshot { try store.writeSnapshot(Data(payload.utf8)) }
        }
        try store.close()
    }

    @Test func recoversFromTheSnapshotPlusTheJournalAfterIt() throws {
        try populate([(300, "state@300"), (120, nil)])
        let (store, recovery) = try open()
        #expect(recovery.snapshot?.sequence == 300)
        #expect(recovery.snapshot?.payload == Data("state@300".utf8))
        #expect(recovery.entries == makeEntries(120, from: 300))
        #expect(recovery.report.snapshotSequence == 300)
        #expect(recovery.report.entriesReplayed == 120)
        #expect(recovery.report.lastSequence == 420)
        #expect(recovery.report.truncation == nil)
        #expect(recovery.report.duration >= 0)
        #expect(store.lastSequence == 420)
    }

    @Test func replaysTheWholeJournalWithoutASnapshot() throws {
        try populate([(250, "state@250"), (50, nil)])
        try FileManager.default.removeItem(at: snapshotDirectory)
        let (_, recovery) = try open()
        #expect(recovery.snapshot == nil)
        #expect(recovery.report.snapshotSequence == nil)
        #expect(recovery.entries == makeEntries(300))
    }

    @Test func fallsBackToThePreviousSnapshotWhenTheNewestIsCorrupt() throws {
        try populate([(300, "state@300"), (300, "state@600"), (50, nil)])
        let newest = snapshotDirectory.appendingPathComponent(SnapshotStore.fileName(sequence: 600)).path
        try flipByte(newest, at: SnapshotStore.headerLength + 3)

        let (store, recovery) = try open()
        #expect(recovery.snapshot?.sequence == 300)
        #expect(recovery.snapshot?.payload == Data("state@300".utf8))
        #expect(recovery.entries == makeEntries(350, from: 300))
        #expect(recovery.report.skippedSnapshots.map(\.path) == [newest])
        #expect(recovery.report.skippedSnapshots.first?.reason == "checksum mismatch")
        #expect(!FileManager.default.fileExists(atPath: newest))
        #expect(FileManager.default.fileExists(atPath: newest + ".corrupt"))
        #expect(store.statistics.snapshotCount == 1)
    }

    @Test func refusesASnapshotOfANewerFormatAndChangesNoByte() throws {
        try populate([(200, "state@200"), (20, nil)])
        var header = Array("CHIMESNP".utf8) + [2, 0, 0, 0] + [0, 0, 0, 0]
        header += withUnsafeBytes(of: UInt64(220).littleEndian) { Array($0) }
        header += withUnsafeBytes(of: UInt64(5).littleEndian) { Array($0) } + Array("v2!!!".utf8)
        let newer = snapshotDirectory.appendingPathComponent(SnapshotStore.fileName(sequence: 220)).path
        #expect(FileManager.default.createFile(atPath: newer, contents: Data(header)))
        let before = try contentsOfTree(directory)

        let error = expectJournalError(.unsupportedVersion) { try open() }
        #expect(error?.path == newer)
        #expect(try contentsOfTree(directory) == before)
    }

    @Test func refusesAJournalThatNoLongerReachesBackToTheSnapshot() throws {
        try populate([(300, "a"), (300, "b"), (300, "c")])
        // Only "b" and "c" remain, and the journal was cut down to what "b" needs.
        try FileManager.default.removeItem(at: snapshotDirectory)
        let before = try contentsOfTree(directory)
        let error = expectJournalError(.corrupt) { try open() }
        #expect(error?.message.contains("missing") == true)
        #expect(try contentsOfTree(directory) == before)
    }

    /// The coordinator's snapshot thread writes into `snapshots` on its own and the store
    /// takes the files in later (`noteSnapshots`, then the segments below `segmentRemovalBound`); a `beforeRename` that throws (the lock was lost) leaves nothing.
    @Test func aSnapshotWrittenElsewhereIsAdoptedAndAnAbandonedOneLeavesNoFile() throws {
        let (store, _) = try open()
        try store.append(makeEntries(1_000), using: testCodec)
        try store.sync()
        try store.writeSnapshot(Data("state@1000".utf8))
        try store.append(makeEntries(1_000, from: 1_000), using: testCodec)
        try store.sync()
        struct Refused: Error {}
        let payload = Data("state@2000".utf8)
        #expect(throws: Refused.self) {
            try store.snapshots.write(
                payloadLength: payload.count, coveringThrough: 2_000, beforeRename: { throw Refused() }
            ) { sink in payload.withUnsafeBytes { sink.writeBytes($0) } }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: snapshotDirectory.path).sorted() == [
            SnapshotStore.fileName(sequence: 1_000)
        ])
        let file = try store.snapshots.write(payloadLength: payload.count, coveringThrough: 2_000, beforeRename: {}) { sink in
            payload.withUnsafeBytes { sink.writeBytes($0) }
        }
        #expect(file.sequence == 2_000)
        // Not adopted yet: the store's figures still show one snapshot, the journal is whole.
        #expect(store.statistics.snapshotCount == 1)
        #expect(store.journal.firstSequence == 1)
        #expect(store.segmentRemovalBound == nil)
        store.noteSnapshots(try store.snapshots.list())
        #expect(store.statistics.snapshotCount == 2)
        #expect(store.statistics.newestSnapshotSequence == 2_000)
        #expect(store.segmentRemovalBound == 1_000)
        #expect(try store.journal.removeSegments(through: 1_000) > 0)
        #expect(store.journal.firstSequence > 1)
        #expect(store.journal.firstSequence <= 1_001)
        try store.close()
        let (_, recovery) = try open()
        #expect(recovery.snapshot?.payload == payload)
        #expect(recovery.entries.isEmpty)
    }

    @Test func removesSegmentsOnceTheOlderRetainedSnapshotCoversThem() throws {
        let (store, _) = try open()
        try store.append(makeEntries(1_000), using: testCodec)
        try store.writeSnapshot(Data("state@1000".utf8))
        let segmentsAfterFirstSnapshot = store.statistics.segmentCount
        #expect(store.journal.firstSequence == 1, "a damaged only snapshot must fall back to a full replay")

        try store.append(makeEntries(1_000, from: 1_000), using: testCodec)
        try store.writeSnapshot(Data("state@2000".utf8))
        #expect(store.journal.firstSequence > 1)
        #expect(store.journal.firstSequence <= 1_001)
        #expect(store.statistics.segmentCount < segmentsAfterFirstSnapshot * 2)

        try store.append(makeEntries(1_000, from: 2_000), using: testCodec)
        try store.writeSnapshot(Data("state@3000".utf8))
        #expect(store.journal.firstSequence > 1_001)
        #expect(store.journal.firstSequence <= 2_001)
        #expect(try SnapshotStore(directory: snapshotDirectory).list().map(\.sequence) == [2_000, 3_000])
        let firstSegment = try #require(try segmentPaths(journalDirectory).first)
        #expect(
            RecordFraming.firstSequence(ofSegmentFileName: URL(fileURLWithPath: firstSegment).lastPathComponent)
                == store.journal.firstSequence)
        try store.close()

        let (_, recovery) = try open()
        #expect(recovery.snapshot?.payload == Data("state@3000".utf8))
        #expect(recovery.entries.isEmpty)
    }

    @Test func startsAfterTheSnapshotWhenTheJournalEndsBeforeIt() throws {
        try populate([(50, nil), (50, "state@100")])
        // As after a power loss under `never`: the snapshot survived, the journal's tail (a
        // whole group) did not.
        let segment = try #require(try segmentPaths(journalDirectory).last)
        let fiftyFirst = try #require(try records(ofSegment: segment).first { $0.sequence == 51 })
        try truncate(segment, to: fiftyFirst.offset)

        let (store, recovery) = try open()
        #expect(recovery.snapshot?.sequence == 100)
        #expect(recovery.entries.isEmpty)
        #expect(recovery.report.truncation == nil)
        try store.append(makeEntries(1, from: 100), using: testCodec)
        try store.sync()
        #expect(store.lastSequence == 101)
        try store.close()

        let (_, reopened) = try open()
        #expect(reopened.entries == makeEntries(1, from: 100))
    }

    @Test func reportsATornTailInTheRecoveryReport() throws {
        // The torn record is a group of one (its own append).
        try populate([(40, "state@40"), (9, nil), (1, nil)])
        let segment = try #require(try segmentPaths(journalDirectory).last)
        let last = try #require(try records(ofSegment: segment).last)
        try truncate(segment, to: last.offset + 5)

        let (_, recovery) = try open()
        #expect(recovery.entries == makeEntries(9, from: 40))
        #expect(recovery.report.truncation?.offset == last.offset)
        #expect(recovery.report.truncatedBytes == 5)
        #expect(recovery.report.truncation?.reason == .truncatedHeader)
        #expect(recovery.report.description.contains("truncated 5 bytes at offset \(last.offset)"))
    }

    @Test func removesTemporaryFilesLeftByACrashedSnapshot() throws {
        try populate([(10, "state@10")])
        let leftover = snapshotDirectory.appendingPathComponent(SnapshotStore.fileName(sequence: 99) + ".tmp").path
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data("half".utf8)))
        let (_, recovery) = try open()
        #expect(recovery.report.removedTemporaryFiles == 1)
        #expect(recovery.snapshot?.sequence == 10)
        #expect(!FileManager.default.fileExists(atPath: leftover))
    }

    @Test func statisticsDescribeTheStore() throws {
        let (store, _) = try FileStore.open(directory: directory, fsync: .always, options: options(), codec: testCodec)
        for start in stride(from: 0, to: 500, by: 100) {
            try store.append(makeEntries(100, from: start), using: testCodec)
            try store.sync()
        }
        try store.writeSnapshot(Data(count: 1000))
        let statistics = store.statistics
        #expect(statistics.journal.appendedEntries == 500)
        #expect(statistics.journal.fsyncCount >= 5)
        #expect(statistics.lastFsyncLatency != nil)
        #expect(statistics.snapshotCount == 1)
        #expect(statistics.snapshotBytes == SnapshotStore.headerLength + 1000)
        #expect(statistics.newestSnapshotSequence == 500)
        #expect(statistics.segmentCount == (try segmentPaths(journalDirectory)).count)
        let onDisk = try segmentPaths(journalDirectory).reduce(0) { $0 + (try fileSize($1)) }
        #expect(statistics.journalBytes == onDisk)
    }

    @Test func appendsThroughACodecAndSyncs() throws {
        let (store, _) = try open()
        try store.append(makeEntries(3), using: testCodec)
        try store.sync()
        #expect(store.statistics.journal.writtenSequence == 3)
    }
}
