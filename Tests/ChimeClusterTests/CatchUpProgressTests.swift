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
        let r1 = progress.acceptReplayed(event(2))
        #expect(r1 == false, "at or below since")
        let r2 = progress.acceptReplayed(event(3))
        #expect(r2)
        let r3 = progress.acceptLive(event(4))
        #expect(r3)
        let r4 = progress.acceptLive(event(3))
        #expect(r4 == false)
        progress.isFetchDone = true
        let r5 = progress.acceptLive(event(3))
        #expect(r5 == false, "replayed, its live copy came late")
        let r6 = progress.acceptLive(event(5))
        #expect(r6)
        let r7 = progress.acceptLive(event(5))
        #expect(r7, "after catch-up, live seqs are not recorded")
        #expect(progress.delivered == [3, 4])
    }
}
