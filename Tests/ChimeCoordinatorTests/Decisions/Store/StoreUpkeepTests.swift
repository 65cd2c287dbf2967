import ChimeCore
import ChimeWire
import Foundation
import Testing
@testable import ChimeCoordinator

/// The store's upkeep decided in the state, with no disk: when a snapshot is due, which
/// requests each snapshot and segment removal answers, and the stop.
@Suite struct StoreUpkeepTests {
    static let t0 = Date(timeIntervalSince1970: 1_798_099_200)
    let client = ClientAddress(routing: [Data([1])])

    func makeState(everyRecords: Int = 10) -> CoordinatorState {
        var configuration = CoordinatorConfiguration()
        configuration.snapshotEveryRecords = everyRecords
        var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
        state.finishRecovery(at: Self.t0)
        state.onStoreOpened(isFileStore: true, entriesSinceSnapshot: 0)
        return state
    }

    func request(_ command: ControlRequest.Command, _ requestId: String) -> ControlRequest {
        ControlRequest(requestId: requestId, command: command)
    }

    /// Schedules `count` reminders due a day later, one entry each.
    func schedule(_ count: Int, in state: inout CoordinatorState) {
        for index in 0..<count {
            let reminder = Reminder(
                id: ReminderID("r\(index)"), recipient: "alice", content: Content(body: "x"),
                trigger: Trigger(start: .instant(Self.t0.addingTimeInterval(86_400))))
            _ = state.onRequest(ControlRequest(command: .schedule([reminder])), from: client, at: Self.t0)
        }
    }

    func errorCodes(_ directives: [CoordinatorDirective]) -> [WireError.Code] {
        directives.compactMap { if case .replyAtOnce(let body, _) = $0 { WirePeek.error(in: body)?.code } else { nil } }
    }

    @Test func anAutomaticSnapshotWaitsForTheThresholdAndAQuietSecond() {
        var state = makeState()
        schedule(9, in: &state)
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 100).isEmpty, "below the threshold; quiet since 100")
        schedule(1, in: &state)
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 100.5).isEmpty, "quiet for half a second")
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 101) == [.writeSnapshot])
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 102).isEmpty, "one at a time")
    }

    @Test func noAutomaticSnapshotWhileTheStoreIsFullOrWithoutAFileStore() {
        var state = makeState()
        schedule(40, in: &state)
        state.onStoreMode(isFull: true)
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 0).isEmpty)
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 5).isEmpty)
        state.onStoreMode(isFull: false)
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 6) == [.writeSnapshot], "4 × the threshold: no need to be quiet")
        var memory = makeState()
        memory.onStoreOpened(isFileStore: false, entriesSinceSnapshot: 100)
        memory.onSnapshotAwaited(request(.snapshot, "s"), from: client)
        #expect(memory.onStoreUpkeep(at: Self.t0, monotonic: 0).isEmpty)
    }

    /// A burst that outruns the workers' credit is not interrupted by a forced snapshot until
    /// the journal is 8 × past its threshold; without the backlog, 4 × forces one (issue 43).
    @Test func aBacklogDefersTheForcedSnapshotToEightTimesTheThreshold() {
        func burst(backlogged: Bool, maxBatchSize: Int = 2) -> CoordinatorState {
            var configuration = CoordinatorConfiguration()
            configuration.snapshotEveryRecords = 10
            configuration.maxBatchSize = maxBatchSize
            var state = CoordinatorState(configuration: configuration, startedAt: Self.t0)
            state.finishRecovery(at: Self.t0.addingTimeInterval(-60))
            state.onStoreOpened(isFileStore: true, entriesSinceSnapshot: 0)
            let hello = WorkerMessage(worker: WorkerID("w1"), host: "h", pid: 1, capacity: 1, delivered: 0)
            _ = state.onWorkerMessage(hello, viaDispatch: true, at: Self.t0)
            // 20 reminders due at t0 (or a day later), each scheduled twice: 40 entries, a
            // threshold of max(10, 20 / 2) = 10.
            let due = backlogged ? Self.t0 : Self.t0.addingTimeInterval(86_400)
            for _ in 0..<2 {
                let reminders = (0..<20).map {
                    Reminder(id: ReminderID("r\($0)"), recipient: "alice", content: Content(body: "x"), trigger: Trigger(start: .instant(due)))
                }
                _ = state.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: Self.t0.addingTimeInterval(-1))
            }
            _ = state.onTick(now: Self.t0)
            return state
        }
        var busy = burst(backlogged: true)
        #expect(busy.dispatch.isScheduleBacklogged)
        #expect(busy.forcedSnapshotFactor == 8)
        #expect(busy.onStoreUpkeep(at: Self.t0, monotonic: 0).isEmpty, "43 entries, 4.3 × the threshold, in a backlog")
        var idle = burst(backlogged: false)
        #expect(!idle.dispatch.isScheduleBacklogged)
        #expect(idle.forcedSnapshotFactor == 4)
        #expect(idle.onStoreUpkeep(at: Self.t0, monotonic: 0) == [.writeSnapshot], "40 entries, 4 × the threshold, no backlog")
        // The burst's tail: every occurrence taken from the timer (a batch of 100 holds all 20),
        // 19 still waiting for the one worker's credit: 60 entries, under 8 ×.
        var tail = burst(backlogged: true, maxBatchSize: 100)
        #expect(!tail.dispatch.isScheduleBacklogged)
        #expect(tail.waitingCount == 19)
        #expect(tail.forcedSnapshotFactor == 8)
        #expect(tail.onStoreUpkeep(at: Self.t0, monotonic: 0).isEmpty, "60 entries, 6 × the threshold, firings waiting")
        // The backlog goes on: 40 more entries (the same reminders, due at once) pass 8 ×.
        for _ in 0..<2 {
            let reminders = (0..<20).map {
                Reminder(id: ReminderID("r\($0)"), recipient: "alice", content: Content(body: "x"), trigger: Trigger(start: .instant(Self.t0)))
            }
            _ = busy.onRequest(ControlRequest(command: .schedule(reminders)), from: client, at: Self.t0)
        }
        _ = busy.onTick(now: Self.t0)
        #expect(busy.dispatch.isScheduleBacklogged)
        #expect(busy.onStoreUpkeep(at: Self.t0, monotonic: 0.5) == [.writeSnapshot], "over 8 × the threshold")
    }

    @Test func aWrittenSnapshotAnswersItsRequestsAndLetsSegmentsGo() {
        var state = makeState()
        state.onSnapshotAwaited(request(.snapshot, "s1"), from: client)
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 0) == [.writeSnapshot])
        state.onSnapshotAwaited(request(.snapshot, "s2"), from: client)
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 0).isEmpty, "s2 waits for the next one")
        let written = state.onSnapshotWritten(.written(sequence: 40, milliseconds: 3, segmentRemovalBound: 20), monotonic: 1)
        #expect(written == [
            .removeSegments(through: 20, isCompaction: false),
            .reportStore(requestId: "s1", to: client, snapshotMilliseconds: 3, journal: nil),
        ])
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 1) == [.writeSnapshot], "then s2's")
    }

    @Test func aCompactionIsAnsweredOnceItsSegmentsAreRemoved() {
        var state = makeState()
        state.onSnapshotAwaited(request(.compact, "c"), from: client)
        _ = state.onStoreUpkeep(at: Self.t0, monotonic: 0)
        let written = state.onSnapshotWritten(.written(sequence: 40, milliseconds: 3, segmentRemovalBound: 20), monotonic: 1)
        #expect(written == [.removeSegments(through: 40, isCompaction: true)])
        state.onSegmentRemovalQueued(7)
        #expect(state.awaitedSegmentRemovals == [7])
        #expect(state.oldestCompactionSequence == 40)
        let figures = JournalFigures(bytes: 100, segments: 1)
        #expect(state.onSegmentsRemoved(6, result: .removed(figures)).isEmpty, "another removal")
        #expect(state.onSegmentsRemoved(7, result: .removed(figures)) == [
            .reportStore(requestId: "c", to: client, snapshotMilliseconds: 3, journal: figures),
        ])
        #expect(state.awaitedSegmentRemovals.isEmpty)
    }

    @Test func aFailedSnapshotIsAnsweredAndRetriedTenSecondsLater() {
        var state = makeState()
        schedule(10, in: &state)
        state.onSnapshotAwaited(request(.snapshot, "s"), from: client)
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 0) == [.writeSnapshot])
        let failed = state.onSnapshotWritten(.failed(reason: "disk on fire", isNoSpace: false), monotonic: 50)
        #expect(errorCodes(failed) == [.internal])
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 55).isEmpty, "the records count again, but not before the retry")
        #expect(state.onStoreUpkeep(at: Self.t0, monotonic: 60) == [.writeSnapshot])
    }

    @Test func atTheStopWaitingRequestsGetASnapshotOrAnUnavailable() {
        var state = makeState()
        state.onSnapshotAwaited(request(.snapshot, "s"), from: client)
        #expect(state.onStoreStopping() == [.writeSnapshot])
        state.onSnapshotAwaited(request(.compact, "c"), from: client)
        #expect(state.onStoreStopping().isEmpty, "one under way")
        #expect(errorCodes(state.onStoreStopped()) == [.unavailable])
        #expect(state.onStoreStopped().isEmpty)
    }
}
