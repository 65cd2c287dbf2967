import ChimeStore
import ChimeTestSupport
import Foundation
import Testing

@Suite struct StoreLeaseTests {
    let temporary: TemporaryDirectory
    var directory: URL { temporary.url }

    init() throws { temporary = try TemporaryDirectory(prefix: "lease") }

    func leaseBytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: directory.appendingPathComponent("LEASE"))) }

    @Test func theHolderRenewsItsLeaseAndNamesItself() throws {
        let lock = try StoreLock.tryAcquire(directory: directory, leaseDuration: .milliseconds(300))
        defer { lock.release() }
        let first = try #require(LeaseRecord.parse(try leaseBytes()))
        #expect(first.holder == ProcessIdentity.current)
        #expect(first.durationMilliseconds == 300)
        #expect(try leaseBytes().count == LeaseRecord.byteCount)
        try expectEventually(timeout: 5, "a renewal") { (LeaseRecord.parse(try leaseBytes())?.renewal ?? 0) > first.renewal }
        try lock.verifyOwnership()
    }

    @Test func aLeaseLapsesFiveSixthsAfterItsLastRenewalAndIsNeverRenewedAgain() throws {
        let lock = try StoreLock.tryAcquire(directory: directory, leaseDuration: .milliseconds(600))
        defer { lock.release() }
        let lease = try #require(lock.currentLease)
        #expect(lease.holdsFor == .milliseconds(500))
        // As if the process had been stopped for a second: the next check throws.
        let error = #expect(throws: JournalError.self) { try lock.verifyLease(at: .now + .seconds(1)) }
        #expect(error?.code == .lockLost)
        #expect(error?.message.contains("lease lapsed") == true)
        // Lapsed for good: renewals stop and every later check throws.
        let bytes = try leaseBytes()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try leaseBytes() == bytes, "no renewal after the lapse")
        #expect(throws: JournalError(.lockLost)) { try lock.verifyOwnership() }
    }

    @Test func anObserverExpiresALeaseOnlyAfterItsDurationOfUnchangedBytes() throws {
        // Released: the file stays as the holder left it, as a stopped holder leaves it.
        try StoreLock.tryAcquire(directory: directory, leaseDuration: .milliseconds(600)).release()
        var observer = LeaseObserver(directory: directory, duration: .milliseconds(300))
        let start = ContinuousClock.now
        let expiredAtStart = observer.observe(at: start)
        #expect(!expiredAtStart)
        // The holder's duration (600 ms) is longer than the observer's and wins.
        #expect(observer.effectiveDuration == .milliseconds(600))
        let expiredJustBefore = observer.observe(at: start + .milliseconds(599))
        #expect(!expiredJustBefore)
        let expiredAtTheDuration = observer.observe(at: start + .milliseconds(600))
        #expect(expiredAtTheDuration)
        #expect(observer.record?.holder.pid == getpid())
    }

    @Test func aChangeStartsTheSilenceOverAndAMissingLeaseNeverExpires() throws {
        var observer = LeaseObserver(directory: directory, duration: .milliseconds(300))
        let start = ContinuousClock.now
        let expiredAtStart = observer.observe(at: start)
        #expect(!expiredAtStart)
        let expiredWithoutAFile = observer.observe(at: start + .seconds(60))
        #expect(!expiredWithoutAFile, "no LEASE file: the lock alone decides")
        try Data("garbage".utf8).write(to: directory.appendingPathComponent("LEASE"))
        let expiredAfterGarbage = observer.observe(at: start + .seconds(61))
        #expect(!expiredAfterGarbage)
        #expect(observer.record == nil, "garbage does not parse, but it counts as a change")
        try Data("garbage!".utf8).write(to: directory.appendingPathComponent("LEASE"))
        let expiredAfterAChange = observer.observe(at: start + .milliseconds(61_200))
        #expect(!expiredAfterAChange)
        let expiredAfterTheSilence = observer.observe(at: start + .milliseconds(61_500))
        #expect(expiredAfterTheSilence)
    }

    @Test func replacingLOCKTakesTheStoreFromAHolderThatThenFailsItsOwnershipCheck() throws {
        let holder = try StoreLock.tryAcquire(directory: directory)
        #expect(throws: JournalError(.locked)) { try StoreLock.tryAcquire(directory: directory) }
        let successor = try StoreLock.replace(directory: directory)
        defer { successor.release() }
        #expect(successor.replacedLockFile)
        try successor.verifyOwnership()
        #expect(throws: JournalError(.lockLost)) { try holder.verifyOwnership() }
        holder.release()
        #expect(throws: JournalError(.locked)) { try StoreLock.tryAcquire(directory: directory) }
        #expect(LeaseRecord.parse(try leaseBytes())?.holder == ProcessIdentity.current)
    }

    @Test func onlyALiveProcessOfThisHostAndNamespaceMayBeKilled() throws {
        let me = ProcessIdentity.current
        #expect(me.isVisibleLocally)
        #expect(me.startTicks > 0 && !me.bootID.isEmpty && me.pidNamespace > 0)
        let record = { (identity: ProcessIdentity) in LeaseRecord(renewal: 1, durationMilliseconds: 1500, holder: identity) }
        #expect(!StoreLock.killExpiredHolder(record(me)), "never itself")
        var otherBoot = me
        otherBoot.bootID = "00000000-0000-0000-0000-000000000000"
        var reused = me
        reused.startTicks += 1
        var otherNamespace = me
        otherNamespace.pidNamespace += 1
        for identity in [otherBoot, reused, otherNamespace] {
            #expect(!identity.isVisibleLocally)
            #expect(!StoreLock.killExpiredHolder(record(identity)))
        }
    }

    @Test func leaseRecordsRoundTripAndGarbageNeverParsesOrTraps() throws {
        let record = LeaseRecord(
            renewal: 42, durationMilliseconds: 1500,
            holder: ProcessIdentity(pid: 77, startTicks: 12345, bootID: "b00t", pidNamespace: 4026531836, host: "node-1"))
        #expect(LeaseRecord.parse(record.bytes) == record)
        var random = SeededRandomNumberGenerator(seed: 25)
        let valid = record.bytes
        for _ in 0..<5_000 {
            var bytes = valid
            switch random.next() % 4 {
            case 0: bytes = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            case 1: bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            case 2: bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
            default: bytes += bytes
            }
            if let parsed = LeaseRecord.parse(bytes) {
                #expect(parsed.holder.pid > 0 && (1...3_600_000).contains(parsed.durationMilliseconds))
            }
        }
        for text in ["", "chime-lease 2 renewal=1", "chime-lease 1 renewal=-1 durationMs=1 pid=1 start=1 boot=b pidns=1 host=h",
                     "chime-lease 1 renewal=1 durationMs=0 pid=1 start=1 boot=b pidns=1 host=h"] {
            #expect(LeaseRecord.parse(Array(text.utf8)) == nil, "\(text)")
        }
    }
}
