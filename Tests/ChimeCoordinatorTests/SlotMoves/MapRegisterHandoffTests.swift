import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Synchronization
import Testing

@testable import ChimeCoordinator

/// The map register's reader thread and its hand-off to the loop, without a coordinator:
/// the newest record wins, read errors are handed on at most once a minute, a fresh read's
/// ticket is done only by a read that started after it was asked for, and the thread stops
/// before its next register call.
@Suite struct MapRegisterHandoffTests {
    static let map = SlotMapRegisterFileTests.map
    static let move = SlotMapRegisterFileTests.move

    /// Version 1, 2 (the move opened) and 3 (committed: map epoch 2).
    static func records() throws -> [SlotMapRecord] {
        let first = SlotMapRecord(map: map)
        var opened = try #require(first.opening(move))
        opened.version = 2
        var committed = try #require(opened.committing(move.id))
        committed.version = 3
        return [first, opened, committed]
    }

    @Test func theNewestHandedRecordWinsAndIsTakenOnce() throws {
        let records = try Self.records()
        let handoff = MapRegisterHandoff()
        let now = ContinuousClock.now
        #expect(handoff.take() == .init(record: nil, error: nil, freshReadsDone: 0))
        handoff.hand(.success(records[0]), at: now)
        handoff.hand(.success(records[2]), at: now)
        handoff.hand(.success(records[1]), at: now)
        // Reads run one after another: the last handed is the newest read.
        #expect(handoff.take() == .init(record: records[1], error: nil, freshReadsDone: 0))
        #expect(handoff.take() == .init(record: nil, error: nil, freshReadsDone: 0))
        // A register without a record, or a failed read, leaves a waiting record in place.
        handoff.hand(.success(records[2]), at: now)
        handoff.hand(.success(nil), at: now)
        handoff.hand(.failure(WireError(.unavailable, "down")), at: now)
        #expect(handoff.take() == .init(record: records[2], error: .init(message: "down", failedReads: 1), freshReadsDone: 0))
    }

    @Test func aReadErrorIsHandedOnOnceAMinuteAndAgainAfterAGoodRead() {
        let handoff = MapRegisterHandoff()
        let start = ContinuousClock.now
        let timedOut = { (milliseconds: Int) in
            WireError(.unavailable, "configmap chime/m: cannot get (Operation timed out after \(milliseconds) milliseconds)")
        }
        handoff.hand(.failure(timedOut(5001)), at: start)
        #expect(handoff.take().error == .init(message: timedOut(5001).message, failedReads: 1))
        // Every second for 59 s: held back (the messages differ only by their number).
        for second in 1...59 { handoff.hand(.failure(timedOut(5000 + second)), at: start + .seconds(second)) }
        #expect(handoff.take().error == nil)
        handoff.hand(.failure(WireError(.unavailable, "403 Forbidden")), at: start + .seconds(60))
        #expect(handoff.take().error == .init(message: "403 Forbidden", failedReads: 60))
        #expect(handoff.take().error == nil)
        // A good read ends the outage: the next failure is handed on at once.
        handoff.hand(.success(nil), at: start + .seconds(61))
        handoff.hand(.failure(timedOut(5002)), at: start + .seconds(62))
        #expect(handoff.take().error == .init(message: timedOut(5002).message, failedReads: 1))
    }

    @Test func oneFreshReadServesTheRequestsMadeBeforeItStarted() {
        let handoff = MapRegisterHandoff()
        let now = ContinuousClock.now
        #expect(handoff.startFreshRead() == nil)
        #expect(handoff.requestFreshRead() == 1)
        #expect(handoff.requestFreshRead() == 1)
        #expect(handoff.startFreshRead() == 1)
        #expect(handoff.startFreshRead() == nil)
        // Asked while read 1 is under way: read 1 may have missed what came just before.
        #expect(handoff.requestFreshRead() == 2)
        handoff.hand(.success(nil), freshRead: 1, at: now)
        #expect(handoff.take().freshReadsDone == 1)
        #expect(handoff.startFreshRead() == 2)
        handoff.hand(.failure(WireError(.unavailable, "down")), freshRead: 2, at: now)
        // A failed read is done too: the register was asked after the request.
        #expect(handoff.take() == .init(record: nil, error: .init(message: "down", failedReads: 1), freshReadsDone: 2))
    }

    /// A register whose reads wait at a gate the test opens, counting its calls.
    final class GatedRegister: SlotMapRegistering {
        struct Calls: Equatable {
            var stamps = 0
            var readsStarted = 0
            var readsDone = 0
        }
        private let record: Mutex<SlotMapRecord>
        private let isOpen = Mutex(true)
        private let calls = Mutex(Calls())
        private let opened = DispatchSemaphore(value: 0)

        init(_ record: SlotMapRecord) { self.record = Mutex(record) }

        var qualifiedName: String { "the test's register" }
        var counted: Calls { calls.withLock { $0 } }
        func set(_ new: SlotMapRecord) { record.withLock { $0 = new } }
        func close() { isOpen.withLock { $0 = false } }
        func open() {
            isOpen.withLock { $0 = true }
            opened.signal()
        }

        func read() throws(WireError) -> SlotMapRecord? {
            calls.withLock { $0.readsStarted += 1 }
            while !isOpen.withLock({ $0 }) { _ = opened.wait(timeout: .now() + 0.01) }
            defer { calls.withLock { $0.readsDone += 1 } }
            return record.withLock { $0 }
        }
        func stamp() -> String? {
            calls.withLock { $0.stamps += 1 }
            return record.withLock { "\($0.version)" }
        }
        func compareAndSwap(expectedVersion: UInt64, _ new: SlotMapRecord) throws(WireError) -> Bool { false }
        func createIfAbsent(map: ShardMap) throws(WireError) -> SlotMapRecord { record.withLock { $0 } }
    }

    /// Waits for `condition`, taking from the hand-off into `taken` meanwhile.
    static func take(
        _ follower: MapRegisterFollower, into taken: inout MapRegisterHandoff.Taken, _ what: String,
        until condition: (MapRegisterHandoff.Taken) -> Bool
    ) throws {
        try expectEventually(timeout: 5, interval: 0.005, what) {
            let next = follower.handoff.take()
            taken.record = next.record ?? taken.record
            taken.freshReadsDone = next.freshReadsDone
            return condition(taken)
        }
    }

    @Test func theThreadReadsAtOnceThenOnRequestAndStopsBeforeItsNextCall() throws {
        let records = try Self.records()
        let register = GatedRegister(records[0])
        // No periodic poll during the test: every read after the first is a fresh one.
        let follower = MapRegisterFollower(register: register, interval: .seconds(3600))
        var taken = MapRegisterHandoff.Taken(record: nil, error: nil, freshReadsDone: 0)
        try Self.take(follower, into: &taken, "the first read") { $0.record?.version == 1 }
        #expect(register.counted == .init(stamps: 1, readsStarted: 1, readsDone: 1))

        // The register changes, and its read hangs: nothing is done until the gate opens.
        register.set(records[1])
        register.close()
        let ticket = follower.requestFreshRead()
        #expect(ticket == 1)
        try expectEventually(timeout: 5, interval: 0.005, "the fresh read to start") { register.counted.readsStarted == 2 }
        #expect(follower.handoff.take() == .init(record: nil, error: nil, freshReadsDone: 0))
        register.open()
        try Self.take(follower, into: &taken, "the fresh read") { $0.freshReadsDone == 1 }
        #expect(taken.record == records[1])

        // A stop while a read hangs: the wait is bounded, the thread ends once the read
        // returns, and calls nothing after it.
        register.set(records[2])
        register.close()
        #expect(follower.requestFreshRead() == 2)
        try expectEventually(timeout: 5, interval: 0.005, "the second fresh read to start") { register.counted.readsStarted == 3 }
        let stopStarted = ContinuousClock.now
        #expect(!follower.stop(timeout: .milliseconds(100)))
        #expect(ContinuousClock.now - stopStarted < .seconds(1))
        register.open()
        #expect(follower.stop(timeout: .seconds(5)))
        #expect(register.counted == .init(stamps: 1, readsStarted: 3, readsDone: 3))
        #expect(follower.handoff.take() == .init(record: records[2], error: nil, freshReadsDone: 2))
    }
}
