import ChimeCore
import ChimeWire
import Foundation
import Testing

@testable import ChimeCluster

@Suite struct CatchUpProgressTests {
    func event(_ seq: UInt64) -> FireEvent {
        FireEvent(
            seq: seq, publisher: "w",
            firing: Firing(reminderId: ReminderID("r\(seq)"), recipient: "a", dueAt: Date(timeIntervalSince1970: 0), content: Content()),
            firedAt: Date(timeIntervalSince1970: 0))
    }

    @Test func liveCopyOfAReplayedEventIsSkippedEvenAfterCatchUpEnds() {
        var progress = CatchUpProgress(since: 2, startedAt: Date(timeIntervalSince1970: 0))
        #expect(progress.acceptReplayed(event(2)) == false, "at or below since")
        #expect(progress.acceptReplayed(event(3)))
        #expect(progress.acceptLive(event(4)))
        #expect(progress.acceptLive(event(3)) == false)
        progress.isFetchDone = true
        #expect(progress.acceptLive(event(3)) == false, "replayed, its live copy came late")
        #expect(progress.acceptLive(event(5)))
        #expect(progress.acceptLive(event(5)), "after catch-up, live seqs are not recorded")
        #expect(progress.delivered == [3, 4])
    }
}
