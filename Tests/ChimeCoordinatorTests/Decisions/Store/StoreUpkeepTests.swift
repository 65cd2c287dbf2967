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
