import ChimeCore
import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

/// A full disk (a 64 KiB tmpfs) under the journal, the epoch and the lock: `.noSpace` is a
/// condition to wait out, never damage. Skipped, with the reason printed, where no tmpfs
/// can be mounted.
@Suite(.serialized) struct NoSpaceTests {
    let temporary: TemporaryDirectory

    init() throws { temporary = try TemporaryDirectory(prefix: "no-space") }

    func mount(_ size: String) throws -> Tmpfs? {
        do {
            return try Tmpfs(at: temporary.path("mnt"), size: size)
        } catch let unavailable as TmpfsUnavailable {
            print("no-space test skipped: \(unavailable.reason)")
            return nil
        }
    }

    @Test func keepsBufferedRecordsWhenTheDiskIsFullAndWritesThemOnceSpaceReturns() throws {
        guard let tmpfs = try mount("64k") else { return }
        let directory = URL(fileURLWithPath: tmpfs.path).appendingPathComponent("journal")
        let entries = makeEntries(4000)
        let (journal, _) = try FileJournal.open(directory: directory, fsync: .always, segmentSize: 16 << 10, codec: testCodec)
        var appended = 0
        var noSpace: JournalError?
        while noSpace == nil && appended < entries.count {
            try journal.append(Array(entries[appended..<(appended + 40)]), using: testCodec)
            appended += 40
            do {
                try journal.sync()
            } catch let error as JournalError where error.code == .noSpace {
                noSpace = error
            }
        }
        try #require(noSpace != nil, "64 KiB filled up")
        // What reached the files ends with a complete record: no torn bytes were left.
        var written = 0
        for path in try segmentPaths(directory) {
            var reader = RecordReader(
                bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), startingAt: RecordFraming.segmentHeaderLength)
            while reader.next() != nil { written += 1 }
            #expect(reader.damage == nil, "\(path) ends with a complete record")
        }
        // A sync that rolls writes the old segment's part first (and fsyncs it before the
        // roll), so some records of the failed batch may be in the files already.
        #expect(written < appended)
        #expect(UInt64(written) >= journal.statistics.writtenSequence)
        #expect(throws: JournalError(.noSpace)) { try journal.sync() }
        #expect(journal.statistics.noSpaceFailures == 2)

        // More entries wait behind the unwritten ones; then space returns.
        try journal.append(Array(entries[appended..<(appended + 10)]), using: testCodec)
        appended += 10
        try tmpfs.resize(to: "4m")
        try journal.sync()
        try journal.close()
        let (_, _, replayed) = try replayAll(directory, segmentSize: 16 << 10)
        #expect(replayed.map(\.0) == Array(1...UInt64(appended)))
        #expect(replayed.map(\.1) == Array(entries[0..<appended]))
    }

    @Test func advancesTheEpochInPlaceWhenNoNewFileFits() throws {
        guard let tmpfs = try mount("64k") else { return }
        let directory = URL(fileURLWithPath: tmpfs.path).appendingPathComponent("store")
        let lock = try StoreLock.tryAcquire(directory: directory)
        #expect(try lock.advanceEpoch(above: 6) == 7)
        try tmpfs.fill(with: "ballast")
        #expect(try lock.advanceEpoch(above: 0) == 8)
        #expect(try StoreLock.epoch(of: directory) == 8)
        #expect(String(decoding: try Data(contentsOf: directory.appendingPathComponent("EPOCH")), as: UTF8.self) == "chime-epoch 1 8\n")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("EPOCH.tmp").path))
    }

    @Test func takesTheLockOnAFullDiskWithoutRecordingThePid() throws {
        guard let tmpfs = try mount("64k") else { return }
        let directory = URL(fileURLWithPath: tmpfs.path).appendingPathComponent("store")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try tmpfs.fill(with: "ballast")
        let lock = try StoreLock.tryAcquire(directory: directory)
        try lock.verifyOwnership()
        #expect(lock.createdLockFile)
        #expect(StoreLock.recordedHolder(of: directory) == nil, "no block for the pid: the lock is the flock")
        #expect(throws: JournalError(.locked)) { try StoreLock.tryAcquire(directory: directory) }
    }
}
