import ChimeStore
import ChimeTestSupport
import Foundation
import Synchronization
import Testing

@Suite struct StoreLockTests {
    let temporary: TemporaryDirectory
    var directory: URL { temporary.url }

    init() throws { temporary = try TemporaryDirectory(prefix: "lock") }

    @Test func aSecondOpenOfTheSameDirectoryIsLockedOutEvenInOneProcess() throws {
        let first = try StoreLock.tryAcquire(directory: directory)
        let error = expectJournalError(.locked) { try StoreLock.tryAcquire(directory: directory) }
        #expect(error?.message.contains("pid \(getpid())") == true)
        #expect(StoreLock.recordedHolder(of: directory) == getpid())
        first.release()
        #expect(!first.isHeld)
        let second = try StoreLock.tryAcquire(directory: directory)
        #expect(second.isHeld)
    }

    @Test func aSecondStoreOnTheSameDirectoryIsLockedOut() throws {
        let (store, _) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        expectJournalError(.locked) { try FileStore.open(directory: directory, fsync: .never, codec: testCodec) }
        try store.close()
        let (reopened, _) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        try reopened.close()
    }

    @Test func theLockIsReleasedWhenTheHolderGoesAway() throws {
        do {
            let holder = try StoreLock.tryAcquire(directory: directory)
            #expect(holder.isHeld)
        }
        let next = try StoreLock.tryAcquire(directory: directory)
        #expect(next.isHeld)
    }

    @Test func waitingGivesUpAtTheDeadline() throws {
        let holder = try StoreLock.tryAcquire(directory: directory)
        let started = Date()
        expectJournalError(.locked) {
            try StoreLock.acquire(directory: directory, until: Date().addingTimeInterval(0.1), pollInterval: 0.02)
        }
        #expect(Date().timeIntervalSince(started) >= 0.1)
        #expect(holder.isHeld)
    }

    @Test func aWaitingStandbyTakesTheLockOnceItIsReleased() throws {
        let holder = try StoreLock.tryAcquire(directory: directory)
        let acquired = Mutex<StoreLock?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let directory = directory
        let waiter = Thread {
            let lock = try? StoreLock.acquire(
                directory: directory, until: Date().addingTimeInterval(10), pollInterval: 0.01)
            acquired.withLock { $0 = lock }
            finished.signal()
        }
        waiter.start()
        holder.release()
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(acquired.withLock { $0?.isHeld } == true)
    }

    @Test func epochIncrementsPersistAcrossReopening() throws {
        var lock = try StoreLock.tryAcquire(directory: directory)
        #expect(try lock.currentEpoch() == 0)
        #expect(try lock.incrementEpoch() == 1)
        #expect(try lock.incrementEpoch() == 2)
        lock.release()
        #expect(try StoreLock.epoch(of: directory) == 2)

        lock = try StoreLock.tryAcquire(directory: directory)
        #expect(try lock.currentEpoch() == 2)
        #expect(try lock.incrementEpoch() == 3)
        lock.release()

        let (store, _) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        #expect(try store.incrementEpoch() == 4)
        try store.close()
        let text = try String(contentsOf: directory.appendingPathComponent("EPOCH"), encoding: .utf8)
        #expect(text == "chime-epoch 1 4\n")
    }

    @Test func refusesAnEpochFileOfANewerFormat() throws {
        try Data("chime-epoch 2 9\n".utf8).write(to: directory.appendingPathComponent("EPOCH"))
        expectJournalError(.unsupportedVersion) { try StoreLock.epoch(of: directory) }
    }

    @Test func aMissingEpochFileIsRebuiltAboveTheRecordedEpochNeverReset() throws {
        let lock = try StoreLock.tryAcquire(directory: directory)
        #expect(try lock.advanceEpoch(above: 0) == 1)
        #expect(try lock.advanceEpoch(above: 0) == 2)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("EPOCH"))
        #expect(try StoreLock.recordedEpoch(of: directory) == nil)
        // The journal and snapshot recorded 2: the next epoch is 3, not 1.
        #expect(try lock.advanceEpoch(above: 2) == 3)
        #expect(try StoreLock.recordedEpoch(of: directory) == 3)
        // A file ahead of the journal wins too.
        #expect(try lock.advanceEpoch(above: 1) == 4)
        expectJournalError(.corrupt) { try lock.advanceEpoch(above: .max) }
        #expect(try StoreLock.recordedEpoch(of: directory) == 4, "an overflow changes nothing")
    }

    @Test func ownershipHoldsWhileLockNamesTheLockedFile() throws {
        let lock = try StoreLock.tryAcquire(directory: directory)
        #expect(lock.createdLockFile)
        try lock.verifyOwnership()
        lock.release()
        let again = try StoreLock.tryAcquire(directory: directory)
        #expect(!again.createdLockFile)
        try again.verifyOwnership()
        again.release()
        expectJournalError(.lockLost) { try again.verifyOwnership() }
    }

    @Test func ownershipIsLostWhenLockIsDeletedAndAnotherHolderLocksTheNewFile() throws {
        let first = try StoreLock.tryAcquire(directory: directory)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("LOCK"))
        let error = expectJournalError(.lockLost) { try first.verifyOwnership() }
        #expect(error?.message.contains("deleted") == true)
        // What the check guards against: a second holder now locks a new LOCK.
        let second = try StoreLock.tryAcquire(directory: directory)
        #expect(second.createdLockFile)
        try second.verifyOwnership()
        expectJournalError(.lockLost) { try first.verifyOwnership() }
    }

    @Test func ownershipIsLostWhenLockIsReplacedByAnotherFile() throws {
        let lock = try StoreLock.tryAcquire(directory: directory)
        let replacement = directory.appendingPathComponent("LOCK.new")
        try Data("1\n".utf8).write(to: replacement)
        #expect(rename(replacement.path, directory.appendingPathComponent("LOCK").path) == 0)
        let error = expectJournalError(.lockLost) { try lock.verifyOwnership() }
        #expect(error?.message.contains("another file") == true)
    }

    @Test func aStartedEntryRoundTripsThroughTheJournal() throws {
        let entry = TestRecord.epoch(42)
        let (store, _) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        try store.append([entry], using: testCodec)
        try store.close()
        let (reopened, recovery) = try FileStore.open(directory: directory, fsync: .never, codec: testCodec)
        try reopened.close()
        #expect(recovery.entries == [entry])
        #expect(try FileStore.verify(directory: directory, codec: testCodec).highestJournalEpoch == 42)
    }
}

/// A FIFO (or another non-regular file) where a store file belongs is refused at once, not
/// waited on: a FIFO `LEASE` or `EPOCH` without a writer blocked `open(2)` and the start.
@Suite struct NonRegularStoreFileTests {
    @Test(arguments: ["LOCK", "LEASE", "EPOCH"])
    func aFIFOInPlaceOfAStoreFileIsRefusedAtOnce(name: String) throws {
        let temporary = try TemporaryDirectory(prefix: "fifo")
        let path = temporary.url.appendingPathComponent(name).path
        #expect(mkfifo(path, 0o600) == 0)
        let started = ContinuousClock.now
        let error = expectJournalError(.io) {
            let (store, _) = try FileStore.open(directory: temporary.url, fsync: .never, codec: testCodec)
            _ = try store.incrementEpoch()
            try store.close()
        }
        #expect(error?.message.contains("a FIFO, not a regular file") == true, "\(error?.message ?? "no error")")
        #expect(error?.path == path)
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
